// Folding a Pad into a Conv changes nothing a Conv computes: its padded taps
// read zeros either way. It saves the padded copy of the activation, which
// for a 3x3 convolution is as large as the convolution's input.
#include "pad_fold.h"

#include <fmt/core.h>

namespace tunefarm::frontend {

Result<PadArgs> ReadPadArgs(const OnnxGraph& g, const GraphNode& n) {
  PadArgs a;
  TF_ASSIGN_OR_RETURN(a.mode, g.StringAttr(n, "mode", "constant"));
  if (g.opset() < 11) {
    TF_ASSIGN_OR_RETURN(a.pads, g.IntsAttr(n, "pads", {}));
    TF_ASSIGN_OR_RETURN(a.value, g.FloatAttr(n, "value", 0.0));
  } else {
    if (n.inputs.size() < 2 || n.inputs[1].empty()) return g.NodeError(n, "it has no pads input");
    TF_ASSIGN_OR_RETURN(std::vector<double> pads, g.ConstantValues(n.inputs[1]));
    a.pads.assign(pads.begin(), pads.end());
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      TF_ASSIGN_OR_RETURN(std::vector<double> value, g.ConstantValues(n.inputs[2]));
      if (value.size() != 1) return g.NodeError(n, "its constant_value must be a scalar");
      a.value = value[0];
    }
  }
  size_t rank = g.value(n.inputs[0]).shape.size();
  if (a.pads.size() != 2 * rank) {
    return g.NodeError(n, fmt::format("{} pads for a rank-{} input, expected {}", a.pads.size(), rank, 2 * rank));
  }
  if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge") {
    return g.NodeError(n, fmt::format("mode '{}' is not supported (constant, reflect and edge are)", a.mode));
  }
  return a;
}

std::optional<std::array<int64_t, 4>> ConvFoldablePad(const OnnxGraph& g, const GraphNode& n) {
  if (n.op_type != "Pad" || n.inputs.empty() || g.value(n.inputs[0]).shape.size() != 4) return std::nullopt;
  auto args = ReadPadArgs(g, n);
  if (!args.ok() || args->mode != "constant" || args->value != 0) return std::nullopt;
  const std::vector<int64_t>& p = args->pads;  // n, c, h, w begins, then ends
  if (p[0] || p[1] || p[4] || p[5] || p[2] < 0 || p[3] < 0 || p[6] < 0 || p[7] < 0) return std::nullopt;
  const GraphValue& out = g.value(n.outputs[0]);
  if (out.is_output || out.consumers.empty()) return std::nullopt;
  for (int c : out.consumers) {
    const GraphNode& conv = g.nodes()[size_t(c)];
    if (conv.op_type != "Conv" || conv.inputs[0] != out.name || conv.inputs[1] == out.name) return std::nullopt;
    auto auto_pad = g.StringAttr(conv, "auto_pad", "NOTSET");
    if (!auto_pad.ok() || *auto_pad != "NOTSET") return std::nullopt;
  }
  return std::array<int64_t, 4>{p[2], p[3], p[6], p[7]};
}

}  // namespace tunefarm::frontend
