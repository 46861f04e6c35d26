#include "expert_schedules.h"

#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm::bench {

Result<ir::PrimFunc> ScheduleGmm(const ir::PrimFunc& f, std::string* trace_out) {
  Schedule sch(f);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  // B (read index 1) is copied per panel: compute_at below compacts the copy
  // to the [K, 32] panel the tile loop reads, so packing happens in parallel
  // and the panel stays in L2 while every row tile streams past it.
  TF_ASSIGN_OR_RETURN(BlockRV b_panel, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(c, ir::MemoryScope::kLocal));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  LoopRV i = loops[0], j = loops[1], k = loops[2];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> js, sch.Split(j, {-1, 2, 16}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> is, sch.Split(i, {-1, 8}));
  TF_RETURN_IF_ERROR(sch.Reorder({js[0], is[0], k, is[1], js[1], js[2]}));
  TF_RETURN_IF_ERROR(sch.Parallel(js[0]));
  TF_RETURN_IF_ERROR(sch.Unroll(is[1]));
  TF_RETURN_IF_ERROR(sch.Unroll(js[1]));
  TF_RETURN_IF_ERROR(sch.Vectorize(js[2]));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, is[0]));
  TF_RETURN_IF_ERROR(sch.ComputeAt(b_panel, js[0]));
  // Vectorize the panel copy and the write-back along their contiguous axis.
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_loops, sch.GetLoops(b_panel));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> copy_inner, sch.Split(copy_loops.back(), {-1, 16}));
  TF_RETURN_IF_ERROR(sch.Vectorize(copy_inner[1]));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> wb_loops, sch.GetLoops(write_back));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> wb_inner, sch.Split(wb_loops.back(), {-1, 16}));
  TF_RETURN_IF_ERROR(sch.Vectorize(wb_inner[1]));
  if (trace_out) *trace_out = sch.trace().ToText();
  return sch.func();
}

Result<ir::PrimFunc> ScheduleC2d(const ir::PrimFunc& f, std::string* trace_out) {
  Schedule sch(f);
  TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
  // Weights packed so that 16 consecutive output channels are contiguous:
  // Wt[K, C, R, S] -> [K/16, C, R, S, 16], one vector load per (c, r, s).
  TF_ASSIGN_OR_RETURN(BlockRV w_pack, sch.CacheRead(out, 1, ir::MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(w_pack, 0, 16, 0));
  TF_ASSIGN_OR_RETURN(BlockRV write_back, sch.CacheWrite(out, ir::MemoryScope::kLocal));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(out));
  // n, k, h, w, c, r, s
  LoopRV n = loops[0], k = loops[1], h = loops[2], w = loops[3], c = loops[4], r = loops[5], s = loops[6];
  // Register tile: 2 vectors of 16 output channels x 7 output columns = 14 accumulators.
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> ks, sch.Split(k, {-1, 2, 16}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> ws, sch.Split(w, {-1, 7}));
  TF_RETURN_IF_ERROR(sch.Reorder({n, ks[0], h, ws[0], c, r, s, ws[1], ks[1], ks[2]}));
  TF_ASSIGN_OR_RETURN(LoopRV outer, sch.Fuse({n, ks[0], h}));
  TF_RETURN_IF_ERROR(sch.Parallel(outer));
  TF_RETURN_IF_ERROR(sch.Unroll(r));
  TF_RETURN_IF_ERROR(sch.Unroll(s));
  TF_RETURN_IF_ERROR(sch.Unroll(ws[1]));
  TF_RETURN_IF_ERROR(sch.Unroll(ks[1]));
  TF_RETURN_IF_ERROR(sch.Vectorize(ks[2]));
  TF_RETURN_IF_ERROR(sch.ReverseComputeAt(write_back, ws[0]));
  // The compacted accumulator tile [1, 32, 1, 7] keeps channels innermost
  // ([1, 2, 1, 7, 16]): each accumulator is one whole vector register.
  TF_RETURN_IF_ERROR(sch.PackLayout(out, 1, 16, 1));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> wb_loops, sch.GetLoops(write_back));
  TF_RETURN_IF_ERROR(sch.Vectorize(wb_loops.back()));
  if (trace_out) *trace_out = sch.trace().ToText();
  return sch.func();
}

}  // namespace tunefarm::bench
