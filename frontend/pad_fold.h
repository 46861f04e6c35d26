// A Pad that is the explicit padding of the convolutions after it (as some
// exporters write `Pad -> Conv(pads=0)`): a constant zero pad of the two
// spatial axes of an NCHW tensor, read only as the input of Convs. It folds
// into each Conv's own padding (anchor_conv.cpp), so the padded tensor is
// never written; any other Pad is a task of its own (anchor_pad.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "onnx_graph.h"

namespace tunefarm::frontend {

// [top, left, bottom, right] when node `n` is a Pad that folds into the
// Convs reading it; nullopt for any other node or Pad.
std::optional<std::array<int64_t, 4>> ConvFoldablePad(const OnnxGraph& g, const GraphNode& n);

// Pad node `n`'s pads (begin of every axis, then end of every axis), constant
// value and mode, from its inputs (opset >= 11) or attributes (older).
struct PadArgs {
  std::vector<int64_t> pads;
  double value = 0;
  std::string mode = "constant";
};
Result<PadArgs> ReadPadArgs(const OnnxGraph& g, const GraphNode& n);

}  // namespace tunefarm::frontend
