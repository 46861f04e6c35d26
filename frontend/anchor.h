// Anchors: the operators that start a task (convolution, matmul, pooling,
// reductions, softmax, layer norm, transpose) as workload stages.
#pragma once

#include <string>
#include <vector>

#include "task_context.h"

namespace tunefarm::frontend {

struct AnchorResult {
  std::vector<int64_t> shape;  // the canonical shape the task computes its output in
  IndexFn value;               // the anchor's output at an index of `shape`
  // The anchor's last stage when `value` is exactly a load of it (the task
  // may then end there); null when `value` adds to it (a bias) or reads the
  // inputs directly (a transpose).
  ir::Buffer stage;
  std::string op_class;    // conv2d, depthwise_conv2d, dense, batch_matmul, pool, ...
  std::string shape_name;  // conv3x3_c64_k64_h56_s1, dense_m128_n768_k768, ...
  std::string summary;     // "conv 3x3 stride 1, 64->64 channels at 56x56"
};

// Builds the stages of anchor node `n` into ctx's workload; `part` is the
// output it computes (Split's outputs; 0 for every other anchor).
Result<AnchorResult> BuildAnchor(TaskContext& ctx, const GraphNode& n, int part = 0);

// One builder per family (anchor_conv.cpp, anchor_matmul.cpp, anchor_row.cpp).
Result<AnchorResult> BuildConv(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildPool(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildMatMul(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildGemm(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildSoftmax(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildLayerNorm(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildReduce(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildTranspose(TaskContext& ctx, const GraphNode& n);
// Data movers (anchor_copy.cpp, anchor_gather.cpp): a task that copies, each
// output element read from where ONNX says; fused operators follow as usual.
Result<AnchorResult> BuildConcat(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildSlice(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildSplit(TaskContext& ctx, const GraphNode& n, int part);
Result<AnchorResult> BuildPad(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildExpand(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildGather(TaskContext& ctx, const GraphNode& n);
Result<AnchorResult> BuildResize(TaskContext& ctx, const GraphNode& n);

// Shared by the builders: an IndexFn loading `b`, a shape as "1x128x768".
IndexFn LoadOf(const ir::Buffer& b);
std::string ShapeText(const std::vector<int64_t>& shape);
// max(min(i, extent - 1), 0): an index kept inside its axis.
ir::Expr ClampIndex(const ir::Expr& i, int64_t extent);
// Every tensor an anchor computes on is f32.
Status CheckF32(const TaskContext& ctx, const GraphNode& n, const std::string& tensor);

}  // namespace tunefarm::frontend
