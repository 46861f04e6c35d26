// OnnxGraph: an ONNX file read, checked and shape-inferred, as typed nodes and
// tensors with static shapes. The only place that touches ONNX's protobuf
// classes; everything after it works on these structs.
//
// Load folds the shape arithmetic of exported graphs into constants
// (onnx_graph_fold.cpp) and infers shapes again until nothing more folds.
//
// Invariants after Load: nodes are in topological order; every node input is
// a graph input, an initializer or an earlier node's output; every tensor a
// node reads or writes has a dtype and a static shape; every graph output is
// produced. The graph owns the ModelProto that `GraphValue::data` points into.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/dtype.h"

namespace onnx {
class ModelProto;
class NodeProto;
class TensorProto;
class AttributeProto;
}  // namespace onnx

namespace tunefarm::frontend {

struct GraphValue {
  enum class Source : uint8_t { kGraphInput, kInitializer, kNode };
  std::string name;
  ir::DataType dtype;  // a bool computed by a node is f32 (0 or 1): how tasks store it
  std::vector<int64_t> shape;
  Source source = Source::kNode;
  const onnx::TensorProto* data = nullptr;  // initializers and Constant outputs
  int producer = -1;                        // node index, kNode only
  std::vector<int> consumers;               // node indices, in graph order
  bool is_output = false;

  bool constant() const { return data != nullptr; }
  int64_t num_elements() const;
};

struct GraphNode {
  std::string name;  // the node's name, or <op>_<index> when it has none
  std::string op_type;
  std::vector<std::string> inputs;  // "" for an omitted optional input
  std::vector<std::string> outputs;
  const onnx::NodeProto* proto = nullptr;
  // Evaluated at import (constant_fold.h): the node is now a Constant in the
  // graph, reads nothing, and belongs to no task. op_type stays the model's.
  bool folded = false;

  // "node 'layer1.0.conv1' (Conv)": how messages name a node.
  std::string Where() const;
};

class OnnxGraph {
 public:
  // Reads, checks and shape-infers the model at `path`.
  static Result<std::unique_ptr<OnnxGraph>> Load(const std::string& path,
                                                 const std::map<std::string, int64_t>& dim_values);
  ~OnnxGraph();

  const std::string& path() const { return path_; }
  int64_t opset() const { return opset_; }
  const std::vector<GraphNode>& nodes() const { return nodes_; }
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  const std::map<std::string, GraphValue>& values() const { return values_; }
  const GraphValue& value(const std::string& name) const { return values_.at(name); }

  // The elements of a constant tensor as doubles (f32, f64, i32, i64, ...).
  Result<std::vector<double>> ConstantValues(const std::string& name) const;

  // Typed attribute access; a missing attribute gives `fallback`, a wrong
  // type is InvalidArgument naming the node and the attribute.
  Result<int64_t> IntAttr(const GraphNode& n, const std::string& attr, int64_t fallback) const;
  Result<double> FloatAttr(const GraphNode& n, const std::string& attr, double fallback) const;
  Result<std::vector<int64_t>> IntsAttr(const GraphNode& n, const std::string& attr,
                                        std::vector<int64_t> fallback) const;
  Result<std::string> StringAttr(const GraphNode& n, const std::string& attr, std::string fallback) const;
  // A tensor-valued attribute, or null when the node has none of that name.
  const onnx::TensorProto* TensorAttr(const GraphNode& n, const std::string& attr) const;

  // An error naming the file and the node.
  Status NodeError(const GraphNode& n, const std::string& message) const;

 private:
  OnnxGraph() = default;
  Status Parse();
  Status CheckOpsets();
  Status CheckExternalData();
  Status BindInputDims(const std::map<std::string, int64_t>& dim_values);
  Status CheckStructure();
  Status InferShapes();
  Status FoldConstants();
  Result<bool> FoldPass();
  Status CheckStaticOperands() const;
  Status CollectValues();
  const onnx::AttributeProto* FindAttr(const GraphNode& n, const std::string& attr) const;

  std::string path_;
  std::unique_ptr<onnx::ModelProto> model_;
  int64_t opset_ = 0;
  std::vector<GraphNode> nodes_;
  std::vector<std::string> inputs_;
  std::vector<std::string> outputs_;
  std::map<std::string, GraphValue> values_;
  std::set<std::string> folded_outputs_;  // tensors that folding made constants
  // Shapes tunefarm computed where ONNX's inference could not: (element type, dims).
  std::map<std::string, std::pair<int32_t, std::vector<int64_t>>> shape_hints_;
};

}  // namespace tunefarm::frontend
