#include "task_context.h"

#include <algorithm>

#include <fmt/core.h>

namespace tunefarm::frontend {

std::vector<int64_t> DropLeadingOnes(const std::vector<int64_t>& shape, size_t min_rank) {
  size_t first = 0;
  while (first < shape.size() && shape.size() - first > min_rank && shape[first] == 1) ++first;
  return std::vector<int64_t>(shape.begin() + first, shape.end());
}

ir::Expr BroadcastAt(const Operand& o, const std::vector<ir::Expr>& index, const std::vector<int64_t>& result_shape) {
  size_t offset = index.size() - o.shape.size();
  std::vector<ir::Expr> at(o.shape.size());
  for (size_t d = 0; d < o.shape.size(); ++d) {
    const bool repeats = o.shape[d] == 1 && result_shape[d + offset] != 1;
    at[d] = repeats ? ir::Expr(int64_t{0}) : index[d + offset];
  }
  return o.value(at);
}

TaskContext::TaskContext(const OnnxGraph& graph, std::string workload_name, bool has_epilogue)
    : graph_(graph), builder_(std::move(workload_name)), has_epilogue_(has_epilogue) {}

Result<ir::Buffer> TaskContext::Input(const std::string& tensor, const std::vector<int64_t>& shape,
                                      const std::string& role) {
  for (size_t i = 0; i < bound_inputs_.size(); ++i) {
    if (bound_inputs_[i] == tensor && bound_shapes_[i] == shape) return buffers_[i];
  }
  const GraphValue& v = graph_.value(tensor);
  int64_t elements = 1;
  for (int64_t d : shape) elements *= d;
  if (elements != v.num_elements()) {
    return Status::Internal(fmt::format("view of '{}' with {} elements, the tensor has {}", tensor, elements,
                                        v.num_elements()));
  }
  std::string name = role;
  for (int k = 2; std::find(names_.begin(), names_.end(), name) != names_.end(); ++k) name = fmt::format("{}{}", role, k);
  ir::Buffer b = v.constant() ? builder_.ConstantInput(name, v.dtype, shape) : builder_.Input(name, v.dtype, shape);
  names_.push_back(name);
  bound_inputs_.push_back(tensor);
  bound_shapes_.push_back(shape);
  buffers_.push_back(b);
  return b;
}

std::optional<double> TaskContext::Scalar(const std::string& tensor) const {
  const GraphValue& v = graph_.value(tensor);
  if (!v.constant() || v.num_elements() != 1) return std::nullopt;
  auto values = graph_.ConstantValues(tensor);
  if (!values.ok() || values->size() != 1) return std::nullopt;
  return (*values)[0];
}

Result<Operand> TaskContext::TensorOperand(const std::string& tensor, size_t max_rank) {
  const GraphValue& v = graph_.value(tensor);
  if (std::optional<double> s = Scalar(tensor)) {
    ir::Expr imm = ir::FloatImm::Make(ir::DataType::Float(32), *s);
    return Operand{[imm](const std::vector<ir::Expr>&) { return imm; }, {}};
  }
  std::vector<int64_t> shape = v.shape;
  while (shape.size() > max_rank && shape.front() == 1) shape.erase(shape.begin());
  if (shape.size() > max_rank) {
    return Status::Internal(fmt::format("operand '{}' of rank {} in a task of rank {}", tensor, shape.size(), max_rank));
  }
  std::string role = v.constant() ? "p" : "x";
  TF_ASSIGN_OR_RETURN(ir::Buffer b, Input(tensor, shape, role));
  return Operand{[b](const std::vector<ir::Expr>& at) { return ir::Load::Make(b, at); }, shape};
}

}  // namespace tunefarm::frontend
