// Concat, Slice, Split, Pad and Expand: tasks that move data. Each is one
// stage whose element reads the input element ONNX maps it to, so element-
// wise operators after them fuse as after any anchor, and the shapes are the
// graph's own (no leading 1s dropped: the copy has no dense core to expose).
//
// Concat is a copy task rather than its producers writing into one buffer:
// a task writes one whole output tensor (TaskCall, tuner/model_build.h), and
// a producer's schedule owns its output's layout, so writing at an offset of
// another tensor would need both to change. Its parts are read through
// selects on the concatenated axis, which the code generator guards like a
// convolution's padding, so an untaken part is never read.
#include <fmt/core.h>

#include "anchor.h"
#include "constant_fold.h"
#include "pad_fold.h"

namespace tunefarm::frontend {
namespace {

using ir::Expr;

Expr Offset(const Expr& i, int64_t offset) { return offset == 0 ? i : i + Expr(offset); }

// A number in a task name, which is an identifier: -2 is "m2".
std::string Num(int64_t v) { return v < 0 ? "m" + std::to_string(-v) : std::to_string(v); }

// The output shape as shape inference gave it.
const std::vector<int64_t>& OutShape(const TaskContext& ctx, const GraphNode& n, int part = 0) {
  return ctx.graph().value(n.outputs[size_t(part)]).shape;
}

AnchorResult CopyResult(const std::vector<int64_t>& shape, IndexFn value, std::string op_class, std::string name,
                        std::string summary) {
  AnchorResult res;
  res.shape = shape;
  res.value = std::move(value);
  res.op_class = std::move(op_class);
  res.shape_name = std::move(name);
  res.summary = std::move(summary);
  return res;
}

// A copy along one axis at an offset: Split's parts.
IndexFn ShiftedLoad(const ir::Buffer& x, size_t axis, int64_t offset) {
  return [x, axis, offset](const std::vector<Expr>& i) {
    std::vector<Expr> at = i;
    at[axis] = Offset(i[axis], offset);
    return ir::Load::Make(x, at);
  };
}

}  // namespace

Result<AnchorResult> BuildConcat(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const std::vector<int64_t>& shape = OutShape(ctx, n);
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", INT64_MAX));
  if (!NormalizeAxis(&axis, int64_t(shape.size()))) return g.NodeError(n, "its axis is missing or out of range");
  std::vector<ir::Buffer> parts;
  std::vector<int64_t> begins;
  std::string sizes;
  int64_t at = 0;
  for (const std::string& in : n.inputs) {
    const GraphValue& v = g.value(in);
    TF_ASSIGN_OR_RETURN(ir::Buffer b, ctx.Input(in, v.shape, "X"));
    parts.push_back(b);
    begins.push_back(at);
    at += v.shape[size_t(axis)];
    sizes += (sizes.empty() ? "" : "_") + std::to_string(v.shape[size_t(axis)]);
  }
  size_t a = size_t(axis);
  IndexFn value = [parts, begins, a](const std::vector<Expr>& i) {
    auto read = [&](size_t k) {
      std::vector<Expr> idx = i;
      idx[a] = Offset(i[a], -begins[k]);
      return ir::Load::Make(parts[k], idx);
    };
    Expr v = read(parts.size() - 1);
    for (size_t k = parts.size() - 1; k-- > 0;) v = ir::Select::Make(ir::LT::Make(i[a], Expr(begins[k + 1])), read(k), v);
    return v;
  };
  return CopyResult(shape, value, "concat", fmt::format("concat_{}_a{}_of_{}", ShapeText(shape), axis, sizes),
                    fmt::format("concat of {} tensors along axis {} into {}", parts.size(), axis, ShapeText(shape)));
}

Result<AnchorResult> BuildSlice(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  std::vector<std::vector<double>> values(n.inputs.size());
  std::vector<const std::vector<double>*> args(n.inputs.size(), nullptr);
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    if (n.inputs[k].empty()) continue;
    TF_ASSIGN_OR_RETURN(values[k], g.ConstantValues(n.inputs[k]));
    args[k] = &values[k];
  }
  TF_ASSIGN_OR_RETURN(SliceArgs a, ReadSliceArgs(g, n, args));
  TF_ASSIGN_OR_RETURN(std::vector<AxisSlice> axes, ResolveSlice(g, n, xv.shape, a.starts, a.ends, a.axes, a.steps));
  const std::vector<int64_t>& shape = OutShape(ctx, n);
  std::string text;
  for (size_t d = 0; d < axes.size(); ++d) {
    if (shape.size() != axes.size() || axes[d].count != shape[d]) {
      return Status::Internal(fmt::format("{}: the slice's shape disagrees with shape inference", n.Where()));
    }
    if (axes[d].count == xv.shape[d]) continue;
    text += fmt::format("_d{}_{}", d, axes[d].start);
    if (axes[d].step != 1) text += "s" + Num(axes[d].step);
    text += fmt::format("n{}", axes[d].count);
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  IndexFn value = [x, axes](const std::vector<Expr>& i) {
    std::vector<Expr> at(i.size());
    for (size_t d = 0; d < i.size(); ++d) {
      Expr scaled = axes[d].step == 1 ? i[d] : i[d] * Expr(axes[d].step);
      at[d] = Offset(scaled, axes[d].start);
    }
    return ir::Load::Make(x, at);
  };
  return CopyResult(shape, value, "slice", fmt::format("slice_{}{}", ShapeText(xv.shape), text),
                    fmt::format("slice of {} to {}", ShapeText(xv.shape), ShapeText(shape)));
}

Result<AnchorResult> BuildSplit(TaskContext& ctx, const GraphNode& n, int part) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", 0));
  if (!NormalizeAxis(&axis, int64_t(xv.shape.size()))) return g.NodeError(n, "its axis is out of range");
  // The parts' sizes are shape inference's (from `split`, or equal parts).
  int64_t begin = 0;
  for (int k = 0; k < part; ++k) {
    if (!n.outputs[size_t(k)].empty()) begin += g.value(n.outputs[size_t(k)]).shape[size_t(axis)];
  }
  const std::vector<int64_t>& shape = OutShape(ctx, n, part);
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  return CopyResult(shape, ShiftedLoad(x, size_t(axis), begin), "slice",
                    fmt::format("split_{}_a{}_{}n{}", ShapeText(xv.shape), axis, begin, shape[size_t(axis)]),
                    fmt::format("part {} of a split of {} along axis {}", part, ShapeText(xv.shape), axis));
}

Result<AnchorResult> BuildPad(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  TF_ASSIGN_OR_RETURN(PadArgs p, ReadPadArgs(g, n));
  size_t rank = xv.shape.size();
  for (size_t d = 0; d < rank; ++d) {
    int64_t begin = p.pads[d], end = p.pads[d + rank], size = xv.shape[d];
    if (p.mode != "constant" && (begin < 0 || end < 0 || (p.mode == "reflect" && std::max(begin, end) >= size))) {
      return g.NodeError(n, fmt::format("{} padding of {} and {} on axis {} of size {}: tunefarm imports {} pads "
                                        "of 0 to {} elements",
                                        p.mode, begin, end, d, size, p.mode, p.mode == "reflect" ? size - 1 : size));
    }
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  std::vector<int64_t> pads = p.pads, in_shape = xv.shape;
  std::string mode = p.mode;
  Expr fill = ir::FloatImm::Make(ir::DataType::Float(32), p.value);
  IndexFn value = [x, pads, in_shape, mode, fill](const std::vector<Expr>& i) -> Expr {
    size_t r = in_shape.size();
    std::vector<Expr> at(r);
    Expr inside;
    auto both = [&inside](Expr c) { inside = inside.defined() ? ir::And::Make(inside, c) : c; };
    for (size_t d = 0; d < r; ++d) {
      int64_t begin = pads[d], end = pads[d + r], size = in_shape[d];
      Expr idx = Offset(i[d], -begin);
      if (begin == 0 && end == 0) {
        at[d] = idx;
      } else if (mode == "edge") {
        at[d] = ClampIndex(idx, size);
      } else if (mode == "reflect") {
        // size-1 - |size-1 - |idx||, clamped so that the index is provably inside.
        auto abs = [](Expr e) { return ir::Max::Make(e, Expr(int64_t{0}) - e); };
        at[d] = ClampIndex(Expr(size - 1) - abs(Expr(size - 1) - abs(idx)), size);
      } else {
        at[d] = idx;
        if (begin > 0) both(ir::GE::Make(idx, Expr(int64_t{0})));
        if (end > 0) both(ir::LT::Make(idx, Expr(size)));
      }
    }
    Expr load = ir::Load::Make(x, at);
    return inside.defined() ? ir::Select::Make(inside, load, fill) : load;
  };
  std::string pad_text;
  for (int64_t v : p.pads) pad_text += "_" + Num(v);
  return CopyResult(OutShape(ctx, n), value, "pad", fmt::format("pad_{}_{}{}", mode, ShapeText(xv.shape), pad_text),
                    fmt::format("{} pad of {} to {}", mode, ShapeText(xv.shape), ShapeText(OutShape(ctx, n))));
}

Result<AnchorResult> BuildExpand(TaskContext& ctx, const GraphNode& n) {
  const GraphValue& xv = ctx.graph().value(n.inputs[0]);
  const std::vector<int64_t>& shape = OutShape(ctx, n);
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  Operand in{LoadOf(x), xv.shape};
  IndexFn value = [in, shape](const std::vector<Expr>& i) { return BroadcastAt(in, i, shape); };
  return CopyResult(shape, value, "expand", fmt::format("expand_{}_to_{}", ShapeText(xv.shape), ShapeText(shape)),
                    fmt::format("expand {} to {}", ShapeText(xv.shape), ShapeText(shape)));
}

}  // namespace tunefarm::frontend
