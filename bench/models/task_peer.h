// oneDNN's peer of one task of an imported model, as data: the primitive
// that computes what the task's workload computes, which workload input
// plays which part in it, its geometry, and the fused operators after the
// anchor as post-ops (post_ops.h). The model benchmark builds the primitive
// from it (onednn_task_op.h); the tests check, per task, that the primitive
// computes what the task's default program computes.
//
// The peer is read from the Model's structured data and the task's
// workload: the op class names the anchor; the workload's anchor stage
// gives the operands and, for windows, strides, dilations and padding (from
// its index expressions: oh * stride + r * dilation - pad); the last stage
// gives the epilogue; the graph tensors bound to the inputs tell a bias (a
// weight) from a residual (an activation). A convolution's residual is
// oneDNN's sum post-op (PostOp::Kind::kSum). A task oneDNN cannot express
// has kind kNone and says why in `no_peer`.
//
// Free of oneDNN: plain values the caller owns.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "post_ops.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::bench {

enum class PeerKind : uint8_t {
  kNone,         // no oneDNN primitive computes this task (no_peer says why)
  kConvolution,  // convolution_forward, groups >= 1
  kMatmul,       // matmul: dense (constant weights, packed at setup) and batch matmul
  kPooling,      // pooling_v2_forward: max, avg (include or exclude padding)
  kSoftmax,      // softmax_v2_forward over the last axis
  kLayerNorm,    // layer_normalization_forward over the last axis, scale and shift
  kReduction,    // reduction: sum, max, min, mean
  kReorder,      // reorder: a transpose (src read through permuted strides)
  kEltwise,      // eltwise_forward: an element-wise task led by a unary operator
  kBinary,       // binary: an element-wise task led by a binary operator
};
const char* PeerKindName(PeerKind kind);

struct TaskPeer {
  PeerKind kind = PeerKind::kNone;
  std::string no_peer;  // kNone: why

  // Workload inputs by role (names as the workload declares them).
  std::string src;      // the activation (matmul: A)
  std::string weights;  // convolution / matmul weights (batch matmul: B, an activation)
  std::string bias;     // optional: folded from a first "add" of a weight vector
  std::string scale, shift;  // layer norm

  std::vector<int64_t> src_dims, weights_dims, dst_dims;  // as oneDNN sees them

  // Convolution and pooling windows (height, width). Dilation as tunefarm
  // counts it (1: none); padding at the start and the end of each dim.
  int64_t groups = 1;
  std::array<int64_t, 2> kernel = {1, 1}, strides = {1, 1}, dilations = {1, 1};
  std::array<int64_t, 2> pad_begin = {0, 0}, pad_end = {0, 0};

  // Matmul: an operand read transposed (A as [K, M], B or W as [N, K]).
  bool src_transposed = false, weights_transposed = false;
  bool weights_constant = false;  // dense: packed by oneDNN at setup

  // kPooling: max, avg_include_padding, avg_exclude_padding. kReduction:
  // sum, max, min, mean, mul. kEltwise, kBinary: the leading operator.
  std::string algorithm;
  float alpha = 0, beta = 0;  // kEltwise: its parameters
  std::string src1;           // kBinary: the second operand
  std::vector<int64_t> src1_dims;
  float epsilon = 0;          // kLayerNorm

  // kReorder: dst dim d reads src dim perm[d] (src_dims are the input's shape).
  std::vector<int64_t> perm;

  std::vector<PostOp> post_ops;

  // One line: "convolution 3x3 s2 p1 + bias, eltwise_relu", or "none: <why>".
  std::string What() const;
};

// The peer of `task`, one of `model`'s tasks: the graph tensors its first
// call binds tell weights from activations.
TaskPeer PeerOf(const frontend::Model& model, const frontend::ModelTask& task);

// The peer of a workload of op class `op_class` as the importer writes it
// (frontend::ModelTask::op_class), from its declared constant inputs alone.
TaskPeer PeerOf(const Workload& w, const std::string& op_class);

}  // namespace tunefarm::bench
