// TaskContext: the workload of one task while its nodes are turned into
// stages. It declares each graph tensor the task reads as a workload input
// (once, `input const` for weights) and remembers which tensor each input is
// bound to; the anchor and element-wise builders work through it.
//
// Values inside a task are IndexFns: the value of a tensor at given indices
// of its (canonical) shape, as an IR expression. A tensor the task reads is a
// Load of its input buffer; an element-wise operator composes the IndexFns of
// its operands, so a fused chain becomes one expression in the task's last
// stage rather than one stage per operator.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnx_graph.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::frontend {

using IndexFn = std::function<ir::Expr(const std::vector<ir::Expr>&)>;

// A value with its shape, for broadcasting.
struct Operand {
  IndexFn value;
  std::vector<int64_t> shape;
};

// `shape` without leading 1s, keeping at least `min_rank` dimensions: the
// shape tasks compute in, so that a batch-1 dense layer is a 2-D matmul.
std::vector<int64_t> DropLeadingOnes(const std::vector<int64_t>& shape, size_t min_rank);

// The operand's value at `index`, an index of the broadcast result (shape
// `result_shape`, of rank >= the operand's; numpy rules: trailing dimensions
// aligned, size 1 repeats). A dimension of size 1 is read at 0 only where the
// result's is larger; where both are 1 it is read at the result's own index,
// so that a fused epilogue reads its anchor's stage at exactly its iteration
// variables (acc[o0, o1, ..], not acc[0, o1, ..]) and the tuner can place it
// into the anchor's tile (reverse_compute_at).
ir::Expr BroadcastAt(const Operand& o, const std::vector<ir::Expr>& index, const std::vector<int64_t>& result_shape);

class TaskContext {
 public:
  TaskContext(const OnnxGraph& graph, std::string workload_name, bool has_epilogue);

  const OnnxGraph& graph() const { return graph_; }
  WorkloadBuilder& builder() { return builder_; }

  // The workload input bound to graph tensor `tensor`, declared with `shape`
  // (the tensor's own shape or a view of it: the same element count) and the
  // buffer name `role`. Declared once per tensor and shape.
  Result<ir::Buffer> Input(const std::string& tensor, const std::vector<int64_t>& shape, const std::string& role);
  // The tensor as an operand: a scalar constant inlined as an immediate, any
  // other tensor an input with its leading 1s dropped to rank <= max_rank.
  Result<Operand> TensorOperand(const std::string& tensor, size_t max_rank);
  // The value of a constant tensor of one element.
  std::optional<double> Scalar(const std::string& tensor) const;

  // The name of an anchor's last stage: "out" when it is the task's result.
  std::string ResultName(bool stage_is_result) const { return stage_is_result && !has_epilogue_ ? "out" : "acc"; }
  bool has_epilogue() const { return has_epilogue_; }
  ir::Var Axis(const std::string& name) { return builder_.Axis(name); }

  // Workload input i is bound to graph tensor bound_inputs()[i].
  const std::vector<std::string>& bound_inputs() const { return bound_inputs_; }

 private:
  const OnnxGraph& graph_;
  WorkloadBuilder builder_;
  bool has_epilogue_;
  std::vector<std::string> bound_inputs_;
  std::vector<std::vector<int64_t>> bound_shapes_;
  std::vector<ir::Buffer> buffers_;
  std::vector<std::string> names_;
};

}  // namespace tunefarm::frontend
