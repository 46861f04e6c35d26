// Gather and Resize (nearest): copies whose source index is a lookup.
//
// Gather's indices are either a tensor the task reads (token ids: the
// embedding lookup), normalised when negative, the read guarded by a select
// so that an index outside the table gives 0 (ONNX leaves it undefined; the
// kernel must not read outside its buffer, and the workload text accepts a
// data-dependent index only under such a guard), or constants written into
// the index expression (a scalar, an arithmetic progression, or a short
// select chain). A Gather of constant indices from a constant table folded
// at import (constant_fold.h).
//
// The nearest-neighbour source index of Resize (and of opset 9's Upsample)
// is computed at import for every output position with ONNX's coordinate
// transformation and rounding, and the task indexes with floor(o * in / out)
// when that reproduces the table (every integer upscale and downscale does,
// for the usual modes); other mappings are refused naming the node rather
// than approximated.
#include <cmath>

#include <fmt/core.h>

#include "anchor.h"
#include "constant_fold.h"

namespace tunefarm::frontend {
namespace {

using ir::Expr;

constexpr size_t kMaxSelectIndices = 64;

// Row-major flat position of the index axes i[first, first + shape.size()).
Expr FlatIndex(const std::vector<Expr>& i, size_t first, const std::vector<int64_t>& shape) {
  Expr flat;
  for (size_t k = 0; k < shape.size(); ++k) {
    Expr term = i[first + k];
    flat = flat.defined() ? flat * Expr(shape[k]) + term : term;
  }
  return flat.defined() ? flat : Expr(int64_t{0});
}

// The data-axis index of constant indices `v` (normalised) at flat position `flat`.
Result<std::function<Expr(Expr)>> ConstantIndex(const OnnxGraph& g, const GraphNode& n, std::vector<int64_t> v) {
  if (v.size() == 1) {
    int64_t only = v[0];
    return std::function<Expr(Expr)>([only](Expr) { return Expr(only); });
  }
  int64_t step = v[1] - v[0];
  bool progression = true;
  for (size_t k = 1; k < v.size(); ++k) progression = progression && v[k] - v[k - 1] == step;
  if (progression) {
    int64_t start = v[0];
    return std::function<Expr(Expr)>([start, step](Expr flat) {
      Expr e = step == 1 ? flat : flat * Expr(step);
      return start == 0 ? e : e + Expr(start);
    });
  }
  if (v.size() > kMaxSelectIndices) {
    return g.NodeError(n, fmt::format("{} constant indices that are not an arithmetic progression; tunefarm imports "
                                      "up to {} such indices (or indices given as a tensor)",
                                      v.size(), kMaxSelectIndices));
  }
  return std::function<Expr(Expr)>([v](Expr flat) {
    Expr e(v.back());
    for (size_t k = v.size() - 1; k-- > 0;) e = ir::Select::Make(ir::EQ::Make(flat, Expr(int64_t(k))), Expr(v[k]), e);
    return e;
  });
}

}  // namespace

Result<AnchorResult> BuildGather(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& data = g.value(n.inputs[0]);
  const GraphValue& indices = g.value(n.inputs[1]);
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", 0));
  if (!NormalizeAxis(&axis, int64_t(data.shape.size()))) return g.NodeError(n, "its axis is out of range");
  const std::vector<int64_t>& shape = g.value(n.outputs[0]).shape;
  if (shape.empty()) return g.NodeError(n, "its output is a scalar; tunefarm's tasks write tensors");
  if (!indices.dtype.is_int() || indices.dtype.bits < 32) {
    return g.NodeError(n, fmt::format("its indices '{}' are {}, expected int32 or int64", indices.name,
                                      indices.dtype.ToString()));
  }
  int64_t extent = data.shape[size_t(axis)];
  size_t a = size_t(axis), q = indices.shape.size();
  std::vector<int64_t> index_shape = indices.shape;
  // The data-axis index at an output index, and for indices read at run time
  // the condition that it is inside the axis (the element is 0 where not).
  std::function<Expr(const std::vector<Expr>&)> source, guard;
  if (indices.constant()) {
    TF_ASSIGN_OR_RETURN(std::vector<double> raw, g.ConstantValues(indices.name));
    std::vector<int64_t> v;
    for (double r : raw) {
      int64_t k = int64_t(r) < 0 ? int64_t(r) + extent : int64_t(r);
      if (k < 0 || k >= extent) return g.NodeError(n, fmt::format("index {} is out of range for an axis of {}", r, extent));
      v.push_back(k);
    }
    TF_ASSIGN_OR_RETURN(auto at, ConstantIndex(g, n, v));
    source = [at, a, index_shape](const std::vector<Expr>& i) { return at(FlatIndex(i, a, index_shape)); };
  } else {
    std::vector<int64_t> declared = q == 0 ? std::vector<int64_t>{1} : index_shape;
    TF_ASSIGN_OR_RETURN(ir::Buffer ib, ctx.Input(indices.name, declared, "I"));
    source = [ib, a, q, extent](const std::vector<Expr>& i) {
      std::vector<Expr> at;
      for (size_t k = 0; k < q; ++k) at.push_back(i[a + k]);
      if (q == 0) at.push_back(Expr(int64_t{0}));
      Expr v = ir::Load::Make(ib, at);
      if (!(v.dtype() == ir::DataType::Index())) v = ir::Cast::Make(ir::DataType::Index(), v);
      return ir::Select::Make(ir::LT::Make(v, Expr(int64_t{0})), v + Expr(extent), v);
    };
    guard = [source, extent](const std::vector<Expr>& i) {
      Expr k = source(i);
      return ir::And::Make(ir::GE::Make(k, Expr(int64_t{0})), ir::LT::Make(k, Expr(extent)));
    };
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(data.name, data.shape, data.constant() ? "T" : "X"));
  IndexFn value = [x, source, guard, a, q](const std::vector<Expr>& i) -> Expr {
    std::vector<Expr> at(i.begin(), i.begin() + long(a));
    at.push_back(source(i));
    at.insert(at.end(), i.begin() + long(a + q), i.end());
    Expr load = ir::Load::Make(x, at);
    if (!guard) return load;
    return ir::Select::Make(guard(i), load, ir::FloatImm::Make(ir::DataType::Float(32), 0));
  };
  AnchorResult res;
  res.shape = shape;
  res.value = value;
  res.op_class = "gather";
  res.shape_name = fmt::format("gather_{}_a{}_i{}", ShapeText(data.shape), axis, ShapeText(indices.shape));
  res.summary = fmt::format("gather along axis {} of {} at {} {} indices", axis, ShapeText(data.shape),
                            ShapeText(indices.shape), indices.constant() ? "constant" : "given");
  return res;
}

Result<AnchorResult> BuildResize(TaskContext& ctx, const GraphNode& n) {
  const OnnxGraph& g = ctx.graph();
  const GraphValue& xv = g.value(n.inputs[0]);
  const std::vector<int64_t>& shape = g.value(n.outputs[0]).shape;
  // Upsample (opset 9) and Resize-10 take scales as input 1 and map coordinates
  // as `asymmetric` with `floor`; Resize from opset 11 says how in attributes.
  bool legacy = n.op_type == "Upsample" || g.opset() < 11;
  TF_ASSIGN_OR_RETURN(std::string mode, g.StringAttr(n, "mode", "nearest"));
  TF_ASSIGN_OR_RETURN(std::string transform,
                      g.StringAttr(n, "coordinate_transformation_mode", legacy ? "asymmetric" : "half_pixel"));
  TF_ASSIGN_OR_RETURN(std::string rounding, g.StringAttr(n, "nearest_mode", legacy ? "floor" : "round_prefer_floor"));
  if (mode != "nearest") return g.NodeError(n, fmt::format("mode '{}': tunefarm imports nearest-neighbour {}", mode, n.op_type));
  std::vector<double> scales;
  size_t scales_input = legacy ? 1 : 2;
  if (n.inputs.size() > scales_input && !n.inputs[scales_input].empty() &&
      g.value(n.inputs[scales_input]).num_elements() > 0) {
    TF_ASSIGN_OR_RETURN(scales, g.ConstantValues(n.inputs[scales_input]));
  }  // else (sizes, or Upsample-7's scales attribute): the scale is out / in, as shape inference gave it
  if (shape.size() != xv.shape.size()) return Status::Internal(n.Where() + ": Resize changes the rank");
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t in = xv.shape[d], out = shape[d];
    double scale = scales.size() == shape.size() ? scales[d] : double(out) / double(in);
    for (int64_t o = 0; o < out; ++o) {
      double x;
      if (transform == "asymmetric") {
        x = double(o) / scale;
      } else if (transform == "half_pixel") {
        x = (double(o) + 0.5) / scale - 0.5;
      } else if (transform == "pytorch_half_pixel") {
        x = out > 1 ? (double(o) + 0.5) / scale - 0.5 : 0;
      } else if (transform == "align_corners") {
        x = out > 1 ? double(o) * double(in - 1) / double(out - 1) : 0;
      } else {
        return g.NodeError(n, fmt::format("coordinate_transformation_mode '{}' is not supported", transform));
      }
      double r;
      if (rounding == "floor") r = std::floor(x);
      else if (rounding == "ceil") r = std::ceil(x);
      else if (rounding == "round_prefer_floor") r = std::ceil(x - 0.5);
      else if (rounding == "round_prefer_ceil") r = std::floor(x + 0.5);
      else return g.NodeError(n, fmt::format("nearest_mode '{}' is not supported", rounding));
      int64_t source = std::clamp<int64_t>(int64_t(r), 0, in - 1);
      if (source != o * in / out) {
        return g.NodeError(n, fmt::format("its nearest-neighbour mapping of axis {} ({} to {}, {}, {}) is not "
                                          "floor(o * {} / {}); tunefarm imports integer scales",
                                          d, in, out, transform, rounding, in, out));
      }
    }
  }
  TF_ASSIGN_OR_RETURN(ir::Buffer x, ctx.Input(n.inputs[0], xv.shape, "X"));
  std::vector<int64_t> in_shape = xv.shape, out_shape = shape;
  IndexFn value = [x, in_shape, out_shape](const std::vector<Expr>& i) {
    std::vector<Expr> at(i.size());
    for (size_t d = 0; d < i.size(); ++d) {
      int64_t in = in_shape[d], out = out_shape[d];
      if (in == out) at[d] = i[d];
      else if (out % in == 0) at[d] = i[d] / Expr(out / in);
      else if (in % out == 0) at[d] = i[d] * Expr(in / out);
      else at[d] = i[d] * Expr(in) / Expr(out);
    }
    return ir::Load::Make(x, at);
  };
  AnchorResult res;
  res.shape = shape;
  res.value = value;
  res.op_class = "resize";
  res.shape_name = fmt::format("resize_nearest_{}_to_{}", ShapeText(xv.shape), ShapeText(shape));
  res.summary = fmt::format("nearest resize of {} to {}", ShapeText(xv.shape), ShapeText(shape));
  return res;
}

}  // namespace tunefarm::frontend
