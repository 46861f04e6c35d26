// One table: adding an operator to the importer starts here, then its value
// (elementwise_ops.cpp) or its stages (anchor_*.cpp). Any operator whose
// inputs are all constant may also fold at import (constant_fold.h).
#include "op_table.h"

#include <map>

namespace tunefarm::frontend {
namespace {

const std::map<std::string, OpKind>& Table() {
  static const std::map<std::string, OpKind> kTable = {
      {"Constant", OpKind::kConstant},
      {"Shape", OpKind::kShapeOnly},
      {"ConstantOfShape", OpKind::kShapeOnly},
      {"Range", OpKind::kShapeOnly},  // its output's length depends on its values
      {"Reshape", OpKind::kView},
      {"Flatten", OpKind::kView},
      {"Squeeze", OpKind::kView},
      {"Unsqueeze", OpKind::kView},
      {"Identity", OpKind::kView},
      {"Dropout", OpKind::kView},
      {"Conv", OpKind::kAnchor},
      {"MatMul", OpKind::kAnchor},
      {"Gemm", OpKind::kAnchor},
      {"MaxPool", OpKind::kAnchor},
      {"AveragePool", OpKind::kAnchor},
      {"GlobalAveragePool", OpKind::kAnchor},
      {"GlobalMaxPool", OpKind::kAnchor},
      {"ReduceMean", OpKind::kAnchor},
      {"ReduceSum", OpKind::kAnchor},
      {"ReduceMax", OpKind::kAnchor},
      {"Softmax", OpKind::kAnchor},
      {"LayerNormalization", OpKind::kAnchor},
      {"Transpose", OpKind::kAnchor},
      {"Concat", OpKind::kAnchor},
      {"Pad", OpKind::kAnchor},  // or folded into the Conv it feeds (pad_fold.h)
      {"Slice", OpKind::kAnchor},
      {"Split", OpKind::kAnchor},
      {"Gather", OpKind::kAnchor},
      {"Expand", OpKind::kAnchor},
      {"Resize", OpKind::kAnchor},
      {"Upsample", OpKind::kAnchor},  // opset 9's Resize
      {"Add", OpKind::kElementwise},
      {"Sub", OpKind::kElementwise},
      {"Mul", OpKind::kElementwise},
      {"Div", OpKind::kElementwise},
      {"Max", OpKind::kElementwise},
      {"Min", OpKind::kElementwise},
      {"Pow", OpKind::kElementwise},
      {"Relu", OpKind::kElementwise},
      {"LeakyRelu", OpKind::kElementwise},
      {"Clip", OpKind::kElementwise},
      {"Sigmoid", OpKind::kElementwise},
      {"HardSigmoid", OpKind::kElementwise},
      {"HardSwish", OpKind::kElementwise},
      {"Tanh", OpKind::kElementwise},
      {"Erf", OpKind::kElementwise},
      {"Exp", OpKind::kElementwise},
      {"Log", OpKind::kElementwise},
      {"Sqrt", OpKind::kElementwise},
      {"Abs", OpKind::kElementwise},
      {"Neg", OpKind::kElementwise},
      {"Reciprocal", OpKind::kElementwise},
      {"BatchNormalization", OpKind::kElementwise},
      {"Cast", OpKind::kElementwise},
      {"Where", OpKind::kElementwise},
      {"Equal", OpKind::kElementwise},
      {"Less", OpKind::kElementwise},
      {"Greater", OpKind::kElementwise},
      {"LessOrEqual", OpKind::kElementwise},
      {"GreaterOrEqual", OpKind::kElementwise},
      {"Not", OpKind::kElementwise},
      {"And", OpKind::kElementwise},
      {"Or", OpKind::kElementwise},
  };
  return kTable;
}

}  // namespace

bool FindOpKind(const std::string& op_type, OpKind* kind) {
  auto it = Table().find(op_type);
  if (it == Table().end()) return false;
  *kind = it->second;
  return true;
}

std::string SupportedOpList() {
  std::string list;
  for (const auto& [name, kind] : Table()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace tunefarm::frontend
