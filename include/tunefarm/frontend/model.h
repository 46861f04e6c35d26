// Model import: an ONNX model -> the tuning tasks it runs, each a Workload
// with the count of its calls and the graph tensors each call reads and writes.
//
// A *task* is one distinct computation after fusion: an anchor (convolution,
// matmul / gemm, pooling, reduction, softmax, layer norm, transpose) with the
// element-wise operators after it folded into its last stage (bias, ReLU,
// ReLU6, GELU, residual add, scaling, masking), or a chain of element-wise
// operators on its own. Layers of the same shape and fused operators are one
// task with several calls; two tasks never share a structural hash.
//
// Views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout) compute
// nothing: their output is the same memory as their input under another
// shape (`ModelTensor::storage`). A task's workload inputs may therefore be
// declared with the shape of a view of the tensor they are bound to; element
// counts always agree.
//
// The Model owns everything it holds; it does not keep the ONNX file open.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::frontend {

struct ModelTensor {
  enum class Kind : uint8_t { kInput, kWeight, kIntermediate };
  std::string name;
  ir::DataType dtype;
  std::vector<int64_t> shape;
  Kind kind = Kind::kIntermediate;
  // The tensor whose memory this one is: itself, or the root of a chain of views.
  std::string storage;
  bool is_output = false;  // a graph output
  // A weight stored in the file as an initializer: a caller can read its
  // values from the .onnx. False for Constant nodes' outputs and constants
  // folded at import (constant_fold.h), whose values only the import knows.
  bool initializer = false;
};

// One call of a task in the model's graph.
struct TaskCall {
  std::vector<std::string> nodes;   // the ONNX nodes fused into this call, in graph order
  std::vector<std::string> inputs;  // the graph tensor bound to each Workload::inputs[i]
  std::string output;               // the graph tensor Workload::outputs[0] writes
};

struct ModelTask {
  Workload workload;           // named <model>_<op and shape>[_<fused operators>]
  std::string op_class;        // conv2d, depthwise_conv2d, grouped_conv2d, dense, batch_matmul,
                               // pool, reduce, softmax, layer_norm, transpose, elementwise
  std::string summary;         // one line for a person: "conv 3x3 s1 64->64 at 56x56 + bias, relu"
  std::vector<TaskCall> calls; // at least one; the task's weight is calls.size()
};

struct Model {
  std::string name;  // the file's stem
  std::string path;
  int64_t opset = 0;        // of the default (ai.onnx) domain
  int node_count = 0;       // ONNX nodes, Constant nodes included
  std::vector<std::string> inputs;   // graph inputs that are not weights, in graph order
  std::vector<std::string> outputs;  // graph outputs, in graph order
  std::map<std::string, ModelTensor> tensors;
  std::vector<ModelTask> tasks;  // in the order of their first call
  // Graph order: (task index, call index) for every call, each after the
  // calls that produce its inputs.
  std::vector<std::pair<size_t, size_t>> order;

  // With ImportOptions::read_weights: the elements of every constant tensor
  // that is its own storage (views of weights read them here), as f32.
  std::map<std::string, std::vector<float>> weights;

  int CallCount() const { return int(order.size()); }
  const ModelTensor* Tensor(const std::string& name) const;
};

struct ImportOptions {
  // Values of symbolic dimensions of the graph inputs (dim_param), e.g. {"batch", 1}.
  std::map<std::string, int64_t> dim_values;
  // Read the weights' values too (to run the model, not to tune it).
  bool read_weights = false;
};

// Reads and imports an ONNX file. A model tunefarm cannot take (not ONNX,
// truncated, an operator or attribute it does not support, a dimension
// without a value, missing external data, ...) is InvalidArgument naming the
// file and the node or tensor at fault.
Result<Model> ImportOnnx(const std::string& path, const ImportOptions& options = {});

// True if the path names an ONNX model (by its extension), for commands that
// take either a workload or a model.
bool IsModelPath(const std::string& path);

}  // namespace tunefarm::frontend
