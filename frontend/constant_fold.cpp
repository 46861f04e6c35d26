// Folding evaluates ONNX's semantics on small host tensors; integers are kept
// exact in doubles and integer division truncates, as ONNX runtimes do for
// shape arithmetic. Only what exported graphs compute on shapes (and the
// constant gathers and expands around them) is handled: anything else stays
// in the graph for the tasks, or is refused by the caller naming the node.
#include "constant_fold.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

#include "onnx_tensor.h"

namespace tunefarm::frontend {
namespace {

std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> Ints(const ConstTensor& t) { return std::vector<int64_t>(t.values.begin(), t.values.end()); }

// The multi-index of flat element `flat` of `shape`.
std::vector<int64_t> Unflatten(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = flat % shape[d];
    flat /= shape[d];
  }
  return at;
}

// numpy broadcasting of two shapes; false if they do not broadcast.
bool Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t d = 0; d < rank; ++d) {
    int64_t x = d + a.size() >= rank ? a[d + a.size() - rank] : 1;
    int64_t y = d + b.size() >= rank ? b[d + b.size() - rank] : 1;
    if (x != y && x != 1 && y != 1) return false;
    (*out)[d] = std::max(x, y);
  }
  return true;
}

// The element of `t` that broadcasting reads at multi-index `at` of a larger shape.
double BroadcastRead(const ConstTensor& t, const std::vector<int64_t>& at) {
  size_t offset = at.size() - t.shape.size();
  int64_t flat = 0;
  for (size_t d = 0; d < t.shape.size(); ++d) flat = flat * t.shape[d] + (t.shape[d] == 1 ? 0 : at[d + offset]);
  return t.values[size_t(flat)];
}

double Arith(const std::string& op, double a, double b, bool integer) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (integer) return b == 0 ? 0 : std::trunc(a / b);
  return double(float(a) / float(b));
}

Result<ConstTensor> FoldGather(const OnnxGraph& g, const GraphNode& n, const ConstTensor& data,
                               const ConstTensor& indices) {
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", 0));
  if (!NormalizeAxis(&axis, int64_t(data.shape.size()))) return g.NodeError(n, "axis is out of range");
  ConstTensor out{data.dtype, {}, {}};
  out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
  out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
  out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = Count(std::vector<int64_t>(data.shape.begin(), data.shape.begin() + axis));
  int64_t inner = Count(std::vector<int64_t>(data.shape.begin() + axis + 1, data.shape.end()));
  int64_t extent = data.shape[size_t(axis)];
  for (int64_t o = 0; o < outer; ++o) {
    for (double raw : indices.values) {
      int64_t i = int64_t(raw) < 0 ? int64_t(raw) + extent : int64_t(raw);
      if (i < 0 || i >= extent) return g.NodeError(n, fmt::format("index {} is out of range for an axis of {}", raw, extent));
      auto first = data.values.begin() + (o * extent + i) * inner;
      out.values.insert(out.values.end(), first, first + inner);
    }
  }
  return out;
}

Result<ConstTensor> FoldConcat(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& in) {
  TF_ASSIGN_OR_RETURN(int64_t axis, g.IntAttr(n, "axis", 0));
  const ConstTensor& first = *in[0];
  if (!NormalizeAxis(&axis, int64_t(first.shape.size()))) return g.NodeError(n, "axis is out of range");
  ConstTensor out{first.dtype, first.shape, {}};
  out.shape[size_t(axis)] = 0;
  for (const ConstTensor* t : in) out.shape[size_t(axis)] += t->shape[size_t(axis)];
  int64_t outer = Count(std::vector<int64_t>(first.shape.begin(), first.shape.begin() + axis));
  for (int64_t o = 0; o < outer; ++o) {
    for (const ConstTensor* t : in) {
      int64_t block = Count(std::vector<int64_t>(t->shape.begin() + axis, t->shape.end()));
      out.values.insert(out.values.end(), t->values.begin() + o * block, t->values.begin() + (o + 1) * block);
    }
  }
  return out;
}

Result<ConstTensor> FoldSlice(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& in) {
  std::vector<const std::vector<double>*> args;
  for (const ConstTensor* t : in) args.push_back(t ? &t->values : nullptr);
  TF_ASSIGN_OR_RETURN(SliceArgs a, ReadSliceArgs(g, n, args));
  const ConstTensor& x = *in[0];
  TF_ASSIGN_OR_RETURN(std::vector<AxisSlice> axes, ResolveSlice(g, n, x.shape, a.starts, a.ends, a.axes, a.steps));
  ConstTensor out{x.dtype, {}, {}};
  for (const AxisSlice& s : axes) out.shape.push_back(s.count);
  std::vector<int64_t> stride = Strides(x.shape);
  for (int64_t flat = 0; flat < Count(out.shape); ++flat) {
    std::vector<int64_t> at = Unflatten(flat, out.shape);
    int64_t src = 0;
    for (size_t d = 0; d < at.size(); ++d) src += (axes[d].start + at[d] * axes[d].step) * stride[d];
    out.values.push_back(x.values[size_t(src)]);
  }
  return out;
}

// Comparisons and logic give bool; Where takes its branches' type.
bool IsMaskOp(const std::string& op) {
  for (const char* o : {"Where", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or"}) {
    if (op == o) return true;
  }
  return false;
}

double MaskValue(const std::string& op, const std::vector<double>& v) {
  if (op == "Where") return v[0] != 0 ? v[1] : v[2];
  if (op == "Equal") return v[0] == v[1];
  if (op == "Less") return v[0] < v[1];
  if (op == "Greater") return v[0] > v[1];
  if (op == "LessOrEqual") return v[0] <= v[1];
  if (op == "GreaterOrEqual") return v[0] >= v[1];
  if (op == "Not") return v[0] == 0;
  if (op == "And") return v[0] != 0 && v[1] != 0;
  return v[0] != 0 || v[1] != 0;  // Or
}

// Where, the comparisons and the logic operators, with numpy broadcasting of all inputs.
Result<ConstTensor> FoldMask(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& in) {
  ConstTensor out{n.op_type == "Where" ? in[1]->dtype : ir::DataType::Bool(), in[0]->shape, {}};
  for (const ConstTensor* t : in) {
    std::vector<int64_t> shape;
    if (!Broadcast(out.shape, t->shape, &shape)) return g.NodeError(n, "its operands do not broadcast");
    out.shape = shape;
  }
  std::vector<double> at_values(in.size());
  for (int64_t flat = 0; flat < out.size(); ++flat) {
    std::vector<int64_t> at = Unflatten(flat, out.shape);
    for (size_t k = 0; k < in.size(); ++k) at_values[k] = BroadcastRead(*in[k], at);
    out.values.push_back(MaskValue(n.op_type, at_values));
  }
  return out;
}

// The element count of ONNX's Range(start, limit, delta):
// max(ceil((limit - start) / delta), 0); -1 when delta is 0.
int64_t RangeCount(double start, double limit, double delta) {
  if (delta == 0) return -1;
  return std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
}

Result<ConstTensor> FoldRange(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& in) {
  for (const ConstTensor* t : in) {
    if (t->size() != 1) return g.NodeError(n, "its start, limit and delta must be scalars");
  }
  double start = in[0]->values[0], limit = in[1]->values[0], delta = in[2]->values[0];
  int64_t count = RangeCount(start, limit, delta);
  if (count < 0) return g.NodeError(n, "its delta is 0");
  if (count == 0) {
    return g.NodeError(n, fmt::format("Range({}, {}, {}) is empty; tunefarm tunes non-empty tensors", start, limit,
                                      delta));
  }
  if (count > (int64_t{1} << 31)) return g.NodeError(n, fmt::format("it gives {} elements", count));
  ConstTensor out{in[0]->dtype, {count}, {}};
  bool integer = out.dtype.is_integer();
  // ONNX's definition: element i is start + i * delta, in the inputs' type.
  for (int64_t i = 0; i < count; ++i) {
    double v = start + double(i) * delta;
    out.values.push_back(integer ? v : double(float(v)));
  }
  return out;
}

}  // namespace

int64_t ConstTensor::size() const { return Count(shape); }

bool NormalizeAxis(int64_t* axis, int64_t rank) {
  if (*axis < 0) *axis += rank;
  return *axis >= 0 && *axis < rank;
}

bool IsFoldableOp(const std::string& op) {
  static const char* const kOps[] = {"Shape",   "ConstantOfShape", "Gather", "Unsqueeze", "Squeeze", "Concat",
                                     "Slice",   "Cast",            "Add",    "Sub",       "Mul",     "Div",
                                     "Reshape", "Flatten",         "Identity", "Expand",  "Dropout", "Range",
                                     "Where",   "Equal",           "Less",   "Greater",   "LessOrEqual",
                                     "GreaterOrEqual", "Not",      "And",    "Or"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

Result<std::vector<AxisSlice>> ResolveSlice(const OnnxGraph& g, const GraphNode& n, const std::vector<int64_t>& shape,
                                            const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                            std::vector<int64_t> axes, std::vector<int64_t> steps) {
  int64_t rank = int64_t(shape.size());
  if (axes.empty()) {
    for (size_t k = 0; k < starts.size(); ++k) axes.push_back(int64_t(k));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return g.NodeError(n, "its starts, ends, axes and steps differ in length");
  }
  std::vector<AxisSlice> out(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) out[d] = AxisSlice{0, 1, shape[d]};
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k];
    if (!NormalizeAxis(&axis, rank) || seen[size_t(axis)]) {
      return g.NodeError(n, fmt::format("axis {} is out of range or repeated", axes[k]));
    }
    seen[size_t(axis)] = true;
    int64_t dim = shape[size_t(axis)], step = steps[k];
    if (step == 0) return g.NodeError(n, "a step of 0");
    // ONNX clamps ends like INT64_MAX before adding the dimension; adding first would overflow.
    auto normalize = [dim](int64_t v) { return v < 0 ? std::max<int64_t>(v, -dim - 1) + dim : std::min(v, dim + 1); };
    int64_t start = normalize(starts[k]), end = normalize(ends[k]);
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count = step > 0 ? (end - start + step - 1) / step : (start - end + (-step) - 1) / (-step);
    if (count <= 0) return g.NodeError(n, fmt::format("the slice of axis {} is empty; tunefarm tunes non-empty tensors", axis));
    out[size_t(axis)] = AxisSlice{start, step, count};
  }
  return out;
}

Result<SliceArgs> ReadSliceArgs(const OnnxGraph& g, const GraphNode& n,
                                const std::vector<const std::vector<double>*>& inputs) {
  SliceArgs a;
  if (g.opset() < 10) {
    TF_ASSIGN_OR_RETURN(a.starts, g.IntsAttr(n, "starts", {}));
    TF_ASSIGN_OR_RETURN(a.ends, g.IntsAttr(n, "ends", {}));
    TF_ASSIGN_OR_RETURN(a.axes, g.IntsAttr(n, "axes", {}));
    return a;
  }
  std::vector<int64_t>* fields[] = {&a.starts, &a.ends, &a.axes, &a.steps};
  for (size_t k = 1; k < 5; ++k) {
    if (k < inputs.size() && inputs[k]) fields[k - 1]->assign(inputs[k]->begin(), inputs[k]->end());
  }
  return a;
}

Result<ConstTensor> FoldNode(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& in,
                             const std::vector<int64_t>* inferred) {
  const std::string& op = n.op_type;
  const ir::DataType i64 = ir::DataType::Int(64);
  if (op == "Shape") {
    int64_t rank = int64_t(in[0]->shape.size());
    TF_ASSIGN_OR_RETURN(int64_t start, g.IntAttr(n, "start", 0));
    TF_ASSIGN_OR_RETURN(int64_t end, g.IntAttr(n, "end", rank));
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    ConstTensor out{i64, {std::max<int64_t>(0, end - start)}, {}};
    for (int64_t d = start; d < end; ++d) out.values.push_back(double(in[0]->shape[size_t(d)]));
    return out;
  }
  if (op == "ConstantOfShape") {
    ConstTensor out{ir::DataType::Float(32), Ints(*in[0]), {}};
    double value = 0;
    if (const onnx::TensorProto* t = g.TensorAttr(n, "value")) {
      TF_ASSIGN_OR_RETURN(out.dtype, TensorDataType(t->data_type(), g.path(), n.Where() + "'s value"));
      TF_ASSIGN_OR_RETURN(std::vector<double> v, ReadTensorValues(*t, out.dtype, {}));
      if (v.size() != 1) return g.NodeError(n, "its value must hold one element");
      value = v[0];
    }
    out.values.assign(size_t(out.size()), value);
    return out;
  }
  if (op == "Gather") return FoldGather(g, n, *in[0], *in[1]);
  if (op == "Concat") return FoldConcat(g, n, in);
  if (op == "Slice") return FoldSlice(g, n, in);
  if (op == "Range") return FoldRange(g, n, in);
  if (IsMaskOp(op)) return FoldMask(g, n, in);
  ConstTensor out = *in[0];
  if (op == "Cast") {
    TF_ASSIGN_OR_RETURN(int64_t to, g.IntAttr(n, "to", 0));
    TF_ASSIGN_OR_RETURN(out.dtype, TensorDataType(int32_t(to), g.path(), n.Where() + "'s output"));
    for (double& v : out.values) v = out.dtype.is_integer() ? std::trunc(v) : out.dtype.is_bool() ? double(v != 0) : v;
    return out;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    const ConstTensor& b = *in[1];
    if (!Broadcast(out.shape, b.shape, &out.shape)) return g.NodeError(n, "its operands do not broadcast");
    out.values.clear();
    for (int64_t flat = 0; flat < out.size(); ++flat) {
      std::vector<int64_t> at = Unflatten(flat, out.shape);
      out.values.push_back(Arith(op, BroadcastRead(*in[0], at), BroadcastRead(b, at), out.dtype.is_integer()));
    }
    return out;
  }
  if (op == "Expand") {
    std::vector<int64_t> shape;
    if (!Broadcast(in[0]->shape, Ints(*in[1]), &shape)) return g.NodeError(n, "its shape does not broadcast its input");
    out.shape = shape;
    out.values.clear();
    for (int64_t flat = 0; flat < out.size(); ++flat) out.values.push_back(BroadcastRead(*in[0], Unflatten(flat, shape)));
    return out;
  }
  // Views: the same elements under the inferred shape.
  if (!inferred) return g.NodeError(n, "the shape of its output could not be inferred");
  out.shape = *inferred;
  if (out.size() != int64_t(out.values.size())) return g.NodeError(n, "its output has another element count");
  return out;
}

}  // namespace tunefarm::frontend
