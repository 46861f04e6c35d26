// The element-wise operators an imported task fused after its anchor, read
// back from the task's last stage as oneDNN post-ops: the model benchmark
// asks oneDNN for the same fused computation, not for the anchor alone.
//
// The importer (frontend/task_build.cpp) composes every fused operator into
// one expression around the anchor's value (the *core*): bias and residual
// adds, ReLU as max(x, 0), ReLU6 / Clip as min(max(x, lo), hi), GELU in its
// erf form, scaling by a constant, an additive mask, ... ReadPostOps walks
// that expression from the outside in and returns the chain in the order
// the operators apply. An operator oneDNN has no post-op for (erf alone,
// batch normalization's rsqrt of a tensor, an operand that is itself an
// expression) is an Unimplemented error naming it: the benchmark then says
// the task has no oneDNN peer and counts it apart.
//
// Free of oneDNN (onednn_task_op.cpp turns a PostOp into dnnl::post_ops), so
// that the tests check the reading without the library.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::bench {

struct PostOp {
  // kSum: oneDNN's sum post-op, an add of an operand as large as the output
  // that the output's memory holds before the primitive runs (a
  // convolution's residual, task_peer.h); ReadPostOps returns it as kBinary.
  enum class Kind : uint8_t { kEltwise, kBinary, kSum };
  Kind kind = Kind::kEltwise;
  // oneDNN's algorithm without its prefix. Eltwise: relu (alpha: the
  // negative slope), clip (alpha..beta), linear (alpha * x + beta),
  // gelu_erf, logistic, tanh, exp, log, sqrt, abs, square, pow (alpha *
  // x^beta), hardswish. Binary: add, sub, mul, div, max, min.
  std::string algorithm;
  float alpha = 0, beta = 0;
  std::string input;          // binary, sum: the workload input that is the second operand
  std::vector<int64_t> dims;  // binary, sum: its dims in the output's rank, 1 where it broadcasts

  std::string Describe() const;  // "eltwise_clip(0, 6)", "binary_add(p 1x6)", "sum(x)"
};

// True for the expression that is the anchor's value at the stage's index.
using CoreMatcher = std::function<bool(const ir::Expr&)>;

// The post-ops that make `stage`'s body out of the core value, in the order
// they apply (empty when the body is the core). `w` is the stage's workload:
// a binary operand must be a load of one of its inputs.
Result<std::vector<PostOp>> ReadPostOps(const Workload& w, const ComputeStage& stage, const CoreMatcher& is_core);

// True when `indices` are the stage's own axes, in order (0 on an axis of extent 1).
bool IsIdentityIndex(const std::vector<ir::Expr>& indices, const ComputeStage& stage);

// The dims of `load`'s buffer as a oneDNN binary operand of the stage's
// output: the output's rank, each dim the buffer's where it is indexed by
// the stage's axis of that dim, 1 where it broadcasts. Unimplemented when
// the buffer is read at anything else (a transposed or offset operand).
Result<std::vector<int64_t>> BroadcastDims(const ir::Load& load, const ComputeStage& stage);

// "1x8x9x10".
std::string DimsText(const std::vector<int64_t>& dims);

}  // namespace tunefarm::bench
