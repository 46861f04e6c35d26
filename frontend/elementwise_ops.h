// Element-wise operators as IR expressions over their operands' values.
#pragma once

#include <vector>

#include "task_context.h"

namespace tunefarm::frontend {

// The value of element-wise node `n` over an output of shape `shape`. operands[i]
// is the value of n.inputs[i] (an undefined IndexFn for an omitted optional
// input); `channel_axis` is the index of ONNX's axis 1 in the task's
// canonical shape (BatchNormalization's parameters run along it).
Result<IndexFn> ElementwiseValue(TaskContext& ctx, const GraphNode& n, const std::vector<Operand>& operands,
                                 const std::vector<int64_t>& shape, size_t channel_axis);

}  // namespace tunefarm::frontend
