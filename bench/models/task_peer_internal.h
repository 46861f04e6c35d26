// The readers behind PeerOf (task_peer.h), one per family of op class, and
// what they share. Internal to bench/models: task_peer.cpp (dispatch,
// convolutions), task_peer_reductions.cpp (matmuls, pooling, reductions),
// task_peer_rows.cpp (softmax, layer norm, transpose, element-wise).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "post_ops.h"
#include "task_peer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::bench::peer_internal {

// True when the workload input of this name is a weight (a constant tensor of the model).
using IsWeight = std::function<bool(const std::string&)>;

TaskPeer ReadPeer(const Workload& w, const std::string& op_class, const IsWeight& is_weight);

Result<TaskPeer> ConvPeer(const Workload& w, const IsWeight& is_weight);
Result<TaskPeer> MatmulPeer(const Workload& w, bool dense, const IsWeight& is_weight);
Result<TaskPeer> PoolPeer(const Workload& w);
Result<TaskPeer> ReducePeer(const Workload& w);
Result<TaskPeer> SoftmaxPeer(const Workload& w);
Result<TaskPeer> LayerNormPeer(const Workload& w);
Result<TaskPeer> TransposePeer(const Workload& w);
Result<TaskPeer> ElementwisePeer(const Workload& w);

// Every load of a workload input in `e`, in visiting order (left first).
std::vector<const ir::Load*> InputLoads(const Workload& w, const ir::Expr& e);

// The workload's first stage with a reduction; null if none.
const ComputeStage* FirstReduction(const Workload& w);

// Matches a load of `anchor`'s output at `last`'s own index. Holds `last` by reference.
CoreMatcher LoadOfStage(const ComputeStage& anchor, const ComputeStage& last);

// One spatial index of a window read: out_axis * stride + tap * dilation - pad.
struct WindowIndex {
  int64_t stride = 1, dilation = 1, pad = 0;
};
// A global window (no output axis in the index) reads as stride 1.
Result<WindowIndex> ReadWindowIndex(const ir::Expr& index, const ir::Variable* out_axis, const ir::Variable* tap);

// Padding at the end of a dim that makes oneDNN's output size `out` (never negative).
int64_t PadEnd(int64_t in, int64_t out, int64_t kernel, const WindowIndex& wi);

// The post-ops of the workload's last stage over `anchor`'s output (none when
// the anchor is the last stage).
Status ReadEpilogue(const Workload& w, const ComputeStage& anchor, TaskPeer* p);

// A first post-op adding a weight of `bias_dims` becomes the primitive's bias.
void FoldBias(const IsWeight& is_weight, const std::vector<int64_t>& bias_dims, TaskPeer* p);

}  // namespace tunefarm::bench::peer_internal
