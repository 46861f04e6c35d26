// The ONNX operators tunefarm imports, by the part they play in fusion.
#pragma once

#include <string>

namespace tunefarm::frontend {

enum class OpKind : uint8_t {
  kConstant,     // Constant: its value is a constant tensor
  kShapeOnly,    // Shape, ConstantOfShape, Range: must fold to a constant at import (constant_fold.h)
  kView,         // Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: the same memory, another shape
  kAnchor,       // starts a task: Conv, MatMul, Gemm, pooling, reductions, Softmax, LayerNormalization,
                 // and the data movers Transpose, Concat, Pad, Slice, Split, Gather, Expand, Resize, Upsample
  kElementwise,  // folds into the task that produces its input (Add, Relu, Clip, Erf, BatchNormalization,
                 // Where, Equal, Less, ..., Not, And, Or)
};

// The kind of a supported operator; false if tunefarm does not import it.
bool FindOpKind(const std::string& op_type, OpKind* kind);
inline bool IsSupportedOp(const std::string& op_type) {
  OpKind kind;
  return FindOpKind(op_type, &kind);
}
// "Add, AveragePool, BatchNormalization, ...": for messages.
std::string SupportedOpList();

}  // namespace tunefarm::frontend
