// The cross-thread reduction rule: the threads of a block split one
// reduction, the lowering combines their partial results in shared memory.
#include "sketch_cuda_cross_thread.h"

#include <algorithm>

namespace tunefarm::tuner {

using namespace ir;

namespace {

Result<LoopRV> FuseLoops(Schedule& sch, const std::vector<LoopRV>& loops) {
  if (loops.size() == 1) return loops[0];
  return sch.Fuse(loops);
}

}  // namespace

bool OffersCrossThread(const CudaSketchConfig& config, const Block& block) {
  if (!config.cross_thread_reduction) return false;
  int64_t outputs = 1, reduce = 1;
  bool spatial = false;
  for (const IterVar& iv : block.iter_vars) {
    if (iv.kind == IterKind::kSpatial) {
      outputs *= iv.extent;
      spatial = true;
    } else {
      reduce *= iv.extent;
    }
  }
  return spatial && reduce >= config.cross_thread_min_reduce &&
         outputs <= config.cross_thread_max_outputs_per_reduce * reduce;
}

Status CrossThreadReduction(Schedule& sch, const std::string& name, const std::vector<IterKind>& kinds,
                            const CudaSketchConfig& config) {
  TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(name));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  if (loops.size() != kinds.size()) {
    return Status::FailedPrecondition("cross-thread " + name + ": loops do not match its iteration variables");
  }
  std::vector<LoopRV> spatial, reduce;
  for (size_t i = 0; i < loops.size(); ++i) (kinds[i] == IterKind::kSpatial ? spatial : reduce).push_back(loops[i]);
  if (spatial.empty() || reduce.empty()) {
    return Status::FailedPrecondition("cross-thread " + name + ": needs spatial and reduction loops");
  }
  std::vector<LoopRV> order = spatial;
  order.insert(order.end(), reduce.begin(), reduce.end());
  TF_RETURN_IF_ERROR(sch.Reorder(order));
  TF_ASSIGN_OR_RETURN(LoopRV s, FuseLoops(sch, spatial));
  TF_ASSIGN_OR_RETURN(LoopRV r, FuseLoops(sch, reduce));
  TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(r));
  // Powers of two up to the reduction rounded up: no more threads than
  // one round of the reduction can keep busy.
  std::vector<int64_t> sizes;
  for (int64_t t = 32; t <= config.max_threads_per_block; t *= 2) {
    if (t / 2 >= extent) break;
    sizes.push_back(t);
  }
  if (sizes.empty()) sizes.push_back(std::min<int64_t>(32, config.max_threads_per_block));
  TF_ASSIGN_OR_RETURN(ValueRV t_rv, sch.SampleCategorical(sizes, std::vector<double>(sizes.size(), 1.0)));
  const int64_t threads = sch.Get(t_rv);
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> r_parts, sch.Split(r, {-1, threads}));
  TF_ASSIGN_OR_RETURN(std::vector<ValueRV> rows_rv,
                      sch.SamplePerfectTile(s, 2, std::max<int64_t>(1, config.max_threads_per_block / threads)));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> s_parts, sch.Split(s, {rows_rv[0], rows_rv[1]}));
  TF_RETURN_IF_ERROR(sch.Reorder({s_parts[0], s_parts[1], r_parts[1], r_parts[0]}));
  TF_RETURN_IF_ERROR(sch.Bind(s_parts[0], "blockIdx.x"));
  if (sch.Get(rows_rv[1]) > 1) TF_RETURN_IF_ERROR(sch.Bind(s_parts[1], "threadIdx.y"));
  TF_RETURN_IF_ERROR(sch.Bind(r_parts[1], "threadIdx.x"));
  TF_ASSIGN_OR_RETURN(ValueRV unroll, sch.SampleCategorical(config.unroll_steps,
                                                            std::vector<double>(config.unroll_steps.size(), 1.0)));
  if (sch.Get(unroll) > 0) {
    TF_RETURN_IF_ERROR(sch.Annotate(s_parts[0], "pragma_auto_unroll_max_step", sch.Get(unroll)));
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
