// ImportOnnx: read -> partition -> one task per group -> merge the groups
// that compute the same thing into one task with several calls.
#include <filesystem>

#include <fmt/core.h>

#include "fusion.h"
#include "onnx_graph.h"
#include "op_table.h"
#include "pad_fold.h"
#include "task_build.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

// A name usable as a workload name: letters, digits and '_'.
std::string Identifier(const std::string& text) {
  std::string s;
  for (char c : text) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "m" + s;
  return s;
}

// Every tensor with its kind and storage; views' targets checked constant. A
// Pad folded into its Convs has no tensor: nothing writes or reads it.
Status CollectTensors(const OnnxGraph& g, Model* model) {
  for (const auto& [name, v] : g.values()) {
    ModelTensor t;
    t.name = name;
    t.dtype = v.dtype;
    t.shape = v.shape;
    t.kind = v.source == GraphValue::Source::kGraphInput ? ModelTensor::Kind::kInput
             : v.constant()                               ? ModelTensor::Kind::kWeight
                                                          : ModelTensor::Kind::kIntermediate;
    t.storage = name;
    t.is_output = v.is_output;
    t.initializer = v.source == GraphValue::Source::kInitializer;
    model->tensors[name] = std::move(t);
  }
  for (const GraphNode& n : g.nodes()) {
    if (ConvFoldablePad(g, n)) {  // never written: its Convs read its input
      model->tensors.erase(n.outputs[0]);
      continue;
    }
    OpKind kind;
    if (n.folded || !FindOpKind(n.op_type, &kind) || kind != OpKind::kView) continue;
    for (size_t k = 1; k < n.inputs.size(); ++k) {
      if (!n.inputs[k].empty() && !g.value(n.inputs[k]).constant()) {
        return g.NodeError(n, fmt::format("its shape or axes come from '{}', which is not a constant; tunefarm tunes "
                                          "static shapes",
                                          n.inputs[k]));
      }
    }
    ModelTensor& out = model->tensors.at(n.outputs[0]);
    const ModelTensor& in = model->tensors.at(n.inputs[0]);
    out.storage = in.storage;
    if (in.kind == ModelTensor::Kind::kWeight) out.kind = ModelTensor::Kind::kWeight;
  }
  return Status::OK();
}

}  // namespace

const ModelTensor* Model::Tensor(const std::string& tensor) const {
  auto it = tensors.find(tensor);
  return it == tensors.end() ? nullptr : &it->second;
}

bool IsModelPath(const std::string& path) { return std::filesystem::path(path).extension() == ".onnx"; }

Result<Model> ImportOnnx(const std::string& path, const ImportOptions& options) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<OnnxGraph> graph, OnnxGraph::Load(path, options.dim_values));
  Model model;
  model.path = path;
  model.name = Identifier(std::filesystem::path(path).stem().string());
  model.opset = graph->opset();
  model.node_count = int(graph->nodes().size());
  model.inputs = graph->inputs();
  model.outputs = graph->outputs();
  TF_RETURN_IF_ERROR(CollectTensors(*graph, &model));
  if (options.read_weights) {
    for (const auto& [name, t] : model.tensors) {
      if (t.kind != ModelTensor::Kind::kWeight || t.storage != name) continue;
      TF_ASSIGN_OR_RETURN(std::vector<double> values, graph->ConstantValues(name));
      model.weights[name].assign(values.begin(), values.end());
    }
  }

  std::map<uint64_t, std::vector<size_t>> by_hash;
  for (const NodeGroup& group : PartitionGraph(*graph)) {
    TF_ASSIGN_OR_RETURN(ModelTask task, BuildTask(*graph, group, model.name));
    uint64_t hash = StructuralHash(task.workload);
    size_t index = model.tasks.size();
    for (size_t candidate : by_hash[hash]) {
      if (StructurallyEqual(model.tasks[candidate].workload, task.workload)) index = candidate;
    }
    if (index == model.tasks.size()) {
      by_hash[hash].push_back(index);
      model.tasks.push_back(std::move(task));
    } else {
      model.tasks[index].calls.push_back(std::move(task.calls[0]));
    }
    model.order.emplace_back(index, model.tasks[index].calls.size() - 1);
  }
  // Two different tasks may draw the same name (same anchor shape, different
  // fused operators after a name cut): keep names unique within the model.
  std::map<std::string, int> seen;
  for (ModelTask& t : model.tasks) {
    int k = ++seen[t.workload.name];
    if (k > 1) t.workload.name += fmt::format("_v{}", k);
  }
  return model;
}

}  // namespace tunefarm::frontend
