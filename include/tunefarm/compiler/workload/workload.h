// Workload: a named tensor computation with concrete shapes and dtypes.
//
// A workload is a list of input tensors and compute stages. Each stage defines
// one tensor element-wise over its axes, optionally reducing over reduction
// axes (sum, max, min, prod); its body is an IR expression whose Loads read
// input tensors or earlier stages and whose Variables are the stage's axes.
// Workloads come from the workload language (workload_parser.h) or are built
// in C++ with WorkloadBuilder; both produce the same structure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

enum class ReduceKind : uint8_t { kNone, kSum, kMax, kMin, kProd };
const char* ReduceKindName(ReduceKind kind);  // "sum", "max", ...

struct ComputeStage {
  ir::Buffer output;                 // the tensor this stage defines
  std::vector<ir::Var> axes;         // one per output dimension, extent = output->shape[d]
  ReduceKind reduce = ReduceKind::kNone;
  std::vector<ir::Var> reduce_axes;  // empty unless reduce != kNone
  std::vector<int64_t> reduce_extents;
  ir::Expr body;                     // value (or the reduced term) at output[axes...]
};

struct Workload {
  std::string name;
  std::vector<std::pair<std::string, int64_t>> params;  // shape parameters as written, e.g. M = 128
  std::vector<ir::Buffer> inputs;
  std::vector<ComputeStage> stages;
  std::vector<ir::Buffer> outputs;  // subset of stage outputs, in declaration order

  // Floating-point operations of one evaluation (a multiply-add counts 2),
  // for GFLOP/s figures: counts arithmetic in every stage body times its iteration count,
  // as lowered (a transposed convolution's taps that never contribute are not counted;
  // decompose_strided_gather.h).
  double Flops() const;
  // Checks the invariants the rest of the compiler relies on (every Load reads a
  // known tensor with the right number of indices, types agree, outputs exist).
  Status Validate() const;
};

// Builds workloads from C++:
//   WorkloadBuilder b("matmul");
//   auto A = b.Input("A", ir::DataType::Float(32), {M, K});
//   ...
//   auto i = b.Axis("i"), j = b.Axis("j"), k = b.Axis("k");
//   auto C = b.Compute("C", {M, N}, {i, j}, ReduceKind::kSum, {k}, {K},
//                      ir::Load::Make(A, {i, k}) * ir::Load::Make(B, {k, j}));
//   b.Output(C);
//   Result<Workload> w = b.Build();
class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(std::string name);
  WorkloadBuilder& Param(std::string name, int64_t value);
  ir::Buffer Input(std::string name, ir::DataType dtype, std::vector<int64_t> shape);
  // An input declared `input const` (weights; BufferNode::constant).
  ir::Buffer ConstantInput(std::string name, ir::DataType dtype, std::vector<int64_t> shape);
  ir::Var Axis(std::string name);
  ir::Buffer Compute(std::string name, std::vector<int64_t> shape, std::vector<ir::Var> axes,
                     ir::Expr body);
  ir::Buffer Compute(std::string name, std::vector<int64_t> shape, std::vector<ir::Var> axes,
                     ReduceKind reduce, std::vector<ir::Var> reduce_axes,
                     std::vector<int64_t> reduce_extents, ir::Expr body);
  WorkloadBuilder& Output(const ir::Buffer& tensor);
  // Validates and returns the workload.
  Result<Workload> Build() const;

 private:
  Workload workload_;
};

}  // namespace tunefarm
