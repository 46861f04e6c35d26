// Folding inside OnnxGraph::Load. Shape inference without data propagation
// cannot see through Shape -> Gather -> Concat -> Reshape, so the graph is
// folded and inferred again until nothing more folds: each round turns the
// nodes whose values are now known into Constant nodes of the ModelProto
// (the checker and shape inference then read them as ONNX constants), and the
// next inference gives static shapes to the nodes that read them.
//
// Where ONNX's inference leaves a shape unknown that tunefarm can compute
// (Slice-1, whose arguments are attributes), the pass adds it as a value info
// for the next round.
//
// A node folds when it is an operator FoldNode evaluates and its inputs are
// constant; views and arithmetic of float weights as written in the model
// (a Reshape of a weight) stay what they were, views sharing the weight's
// memory: only integer tensors and values folding produced fold further.
#include <filesystem>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

#include "constant_fold.h"
#include "onnx_graph.h"
#include "onnx_tensor.h"
#include "op_table.h"

namespace tunefarm::frontend {
namespace {

// ONNX's element type of a folded value.
Result<int32_t> OnnxElemType(ir::DataType t) {
  if (t == ir::DataType::Float(32)) return int32_t(onnx::TensorProto::FLOAT);
  if (t == ir::DataType::Float(64)) return int32_t(onnx::TensorProto::DOUBLE);
  if (t == ir::DataType::Int(64)) return int32_t(onnx::TensorProto::INT64);
  if (t == ir::DataType::Int(32)) return int32_t(onnx::TensorProto::INT32);
  if (t == ir::DataType::Bool()) return int32_t(onnx::TensorProto::BOOL);
  return Status::InvalidArgument("a folded value of type " + t.ToString());
}

Result<onnx::TensorProto> ToTensorProto(const ConstTensor& c, const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  TF_ASSIGN_OR_RETURN(int32_t type, OnnxElemType(c.dtype));
  t.set_data_type(type);
  for (int64_t d : c.shape) t.add_dims(d);
  for (double v : c.values) {
    switch (type) {
      case onnx::TensorProto::FLOAT: t.add_float_data(float(v)); break;
      case onnx::TensorProto::DOUBLE: t.add_double_data(v); break;
      case onnx::TensorProto::INT64: t.add_int64_data(int64_t(v)); break;
      default: t.add_int32_data(int32_t(v)); break;
    }
  }
  return t;
}

bool IsViewOrArithmetic(const std::string& op) {
  for (const char* o : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Add", "Sub", "Mul",
                        "Div", "Cast"}) {
    if (op == o) return true;
  }
  return false;
}

// The inputs of an operator that must be constant at import, with their roles.
std::vector<std::pair<size_t, const char*>> StaticOperands(const std::string& op) {
  if (op == "Pad") return {{1, "pads"}, {2, "constant_value"}};
  if (op == "Slice") return {{1, "starts"}, {2, "ends"}, {3, "axes"}, {4, "steps"}};
  if (op == "Split") return {{1, "split"}};
  if (op == "Resize") return {{1, "roi (scales before opset 11)"}, {2, "scales"}, {3, "sizes"}};
  if (op == "Upsample") return {{1, "scales"}};
  if (op == "Expand" || op == "Reshape") return {{1, "shape"}};
  if (op == "Squeeze" || op == "Unsqueeze") return {{1, "axes"}};
  return {};
}

}  // namespace

Status OnnxGraph::FoldConstants() {
  onnx::GraphProto* graph = model_->mutable_graph();
  std::vector<onnx::ValueInfoProto> given(graph->value_info().begin(), graph->value_info().end());
  for (bool changed = true; changed;) {
    TF_RETURN_IF_ERROR(InferShapes());
    TF_ASSIGN_OR_RETURN(changed, FoldPass());
    // Outputs inferred before the fold may hold unknown dimensions: infer
    // afresh from what the model gave and what tunefarm computed.
    if (changed) {
      graph->clear_value_info();
      for (const onnx::ValueInfoProto& v : given) *graph->add_value_info() = v;
      for (const auto& [name, hint] : shape_hints_) {
        onnx::ValueInfoProto* info = graph->add_value_info();
        info->set_name(name);
        auto* tensor = info->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(hint.first);
        for (int64_t d : hint.second) tensor->mutable_shape()->add_dim()->set_dim_value(d);
      }
    }
  }
  std::set<std::string> constant;
  for (const onnx::TensorProto& t : graph->initializer()) constant.insert(t.name());
  for (const GraphNode& n : nodes_) {
    if (n.proto->op_type() == "Constant") constant.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const GraphNode& n : nodes_) {
    OpKind kind;
    if (!n.folded && FindOpKind(n.op_type, &kind) && kind == OpKind::kShapeOnly) {
      std::string dynamic;  // the inputs computed at run time, not every input
      for (const std::string& in : n.inputs) {
        if (in.empty() || constant.count(in)) continue;
        dynamic += dynamic.empty() ? "'" + in + "'" : ", '" + in + "'";
      }
      std::string why = n.op_type == "Range" ? "its length would depend on values known only at run time"
                                             : "tunefarm tunes static shapes";
      return NodeError(n, fmt::format("its value must fold to a constant at import, but it depends on {}, which is "
                                      "computed at run time; {}",
                                      dynamic, why));
    }
  }
  return CheckStaticOperands();
}

Result<bool> OnnxGraph::FoldPass() {
  const onnx::GraphProto& graph = model_->graph();
  std::map<std::string, std::vector<int64_t>> shapes;  // every static shape inference knows
  std::map<std::string, int32_t> elem_types;
  auto note_shape = [&](const onnx::ValueInfoProto& v) {
    std::vector<int64_t> shape;
    if (ValueInfoType(v, path_, v.name(), &shape).ok()) shapes[v.name()] = shape;
    if (v.type().has_tensor_type()) elem_types[v.name()] = v.type().tensor_type().elem_type();
  };
  for (const auto& v : graph.value_info()) note_shape(v);
  for (const auto& v : graph.input()) note_shape(v);
  for (const auto& v : graph.output()) note_shape(v);
  std::map<std::string, const onnx::TensorProto*> sources;  // constants, read only when a fold needs them
  for (const onnx::TensorProto& t : graph.initializer()) sources[t.name()] = &t;
  for (const GraphNode& n : nodes_) {
    if (n.proto->op_type() != "Constant" || n.outputs.size() != 1) continue;
    if (const onnx::TensorProto* t = TensorAttr(n, "value")) sources[n.outputs[0]] = t;
  }
  std::map<std::string, ConstTensor> known;
  auto read = [&](const std::string& name) -> Result<const ConstTensor*> {
    if (auto it = known.find(name); it != known.end()) return &it->second;
    const onnx::TensorProto& t = *sources.at(name);
    ConstTensor c;
    TF_ASSIGN_OR_RETURN(c.dtype, TensorDataType(t.data_type(), path_, "constant '" + name + "'"));
    TF_RETURN_IF_ERROR(CheckTensorData(t, c.dtype, path_));
    c.shape.assign(t.dims().begin(), t.dims().end());
    TF_ASSIGN_OR_RETURN(c.values, ReadTensorValues(t, c.dtype, std::filesystem::path(path_).parent_path()));
    return &known.emplace(name, std::move(c)).first->second;
  };
  bool folded_any = false;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    GraphNode& n = nodes_[i];
    if (n.folded || n.proto->op_type() == "Constant" || n.outputs.size() != 1 || !IsFoldableOp(n.op_type)) continue;
    std::vector<const ConstTensor*> inputs;
    ConstTensor shape_only;
    if (n.op_type == "Shape") {
      auto it = shapes.find(n.inputs[0]);
      if (it == shapes.end()) continue;
      shape_only.shape = it->second;
      inputs.push_back(&shape_only);
    } else {
      bool constant = true, from_fold = false, integer = false;
      for (const std::string& in : n.inputs) {
        if (in.empty()) continue;
        constant = constant && sources.count(in);
        from_fold = from_fold || folded_outputs_.count(in);
      }
      integer = sources.count(n.inputs[0]) && sources.at(n.inputs[0])->data_type() != onnx::TensorProto::FLOAT;
      if (!constant || (IsViewOrArithmetic(n.op_type) && !from_fold && !integer)) continue;
      for (const std::string& in : n.inputs) {
        if (in.empty()) {
          inputs.push_back(nullptr);
          continue;
        }
        TF_ASSIGN_OR_RETURN(const ConstTensor* c, read(in));
        inputs.push_back(c);
      }
    }
    auto shape_it = shapes.find(n.outputs[0]);
    TF_ASSIGN_OR_RETURN(ConstTensor value, FoldNode(*this, n, inputs, shape_it == shapes.end() ? nullptr : &shape_it->second));
    auto proto = ToTensorProto(value, n.outputs[0]);
    if (!proto.ok()) return NodeError(n, "folding it at import gives " + proto.status().message());
    onnx::NodeProto* p = model_->mutable_graph()->mutable_node(int(i));
    p->clear_input();
    p->clear_attribute();
    p->set_op_type("Constant");
    p->set_domain("");
    onnx::AttributeProto* a = p->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = std::move(proto).value();
    sources[n.outputs[0]] = &a->t();
    known[n.outputs[0]] = std::move(value);
    n.folded = true;
    n.inputs.clear();
    folded_outputs_.insert(n.outputs[0]);
    folded_any = true;
  }
  // ONNX's inference of Slice-1 (attributes) gives no dimensions: a Slice of
  // a known shape with constant arguments gets its shape from tunefarm.
  for (const GraphNode& n : nodes_) {
    if (n.folded || n.op_type != "Slice" || shapes.count(n.outputs[0]) || !shapes.count(n.inputs[0])) continue;
    std::vector<const std::vector<double>*> args(n.inputs.size(), nullptr);
    bool constant = true;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty()) continue;
      if (!sources.count(n.inputs[k])) {
        constant = false;
        break;
      }
      TF_ASSIGN_OR_RETURN(const ConstTensor* c, read(n.inputs[k]));
      args[k] = &c->values;
    }
    if (!constant || !elem_types.count(n.inputs[0])) continue;
    TF_ASSIGN_OR_RETURN(SliceArgs a, ReadSliceArgs(*this, n, args));
    TF_ASSIGN_OR_RETURN(std::vector<AxisSlice> axes,
                        ResolveSlice(*this, n, shapes.at(n.inputs[0]), a.starts, a.ends, a.axes, a.steps));
    std::vector<int64_t> dims;
    for (const AxisSlice& s : axes) dims.push_back(s.count);
    shape_hints_[n.outputs[0]] = {elem_types.at(n.inputs[0]), dims};
    folded_any = true;
  }
  return folded_any;
}

Status OnnxGraph::CheckStaticOperands() const {
  std::set<std::string> constant;
  for (const onnx::TensorProto& t : model_->graph().initializer()) constant.insert(t.name());
  for (const GraphNode& n : nodes_) {
    if (n.proto->op_type() == "Constant") constant.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const GraphNode& n : nodes_) {
    for (const auto& [index, role] : StaticOperands(n.op_type)) {
      if (index >= n.inputs.size() || n.inputs[index].empty() || constant.count(n.inputs[index])) continue;
      return NodeError(n, fmt::format("its {} '{}' is computed at run time, not a constant; tunefarm tunes static "
                                      "shapes and needs it at import",
                                      role, n.inputs[index]));
    }
  }
  return Status::OK();
}

}  // namespace tunefarm::frontend
