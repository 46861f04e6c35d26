// Random schedules and in-process timing for cost-model datasets (dataset_gen.h).
#include "tunefarm/costmodel/dataset_gen.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <random>
#include <vector>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::costmodel {

namespace {

struct MainBlock {
  std::string name;
  int num_spatial = 0;
  int num_reduce = 0;
};

// The first block with a reduction iteration variable, else the last block.
MainBlock FindMainBlock(const ir::PrimFunc& f) {
  std::vector<MainBlock> blocks;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kBlock) return;
    const auto* b = static_cast<const ir::Block*>(n);
    MainBlock m{b->name, 0, 0};
    for (const ir::IterVar& iv : b->iter_vars) (iv.kind == ir::IterKind::kReduce ? m.num_reduce : m.num_spatial)++;
    blocks.push_back(m);
  });
  for (const MainBlock& m : blocks) {
    if (m.num_reduce > 0) return m;
  }
  return blocks.empty() ? MainBlock{} : blocks.back();
}

}  // namespace

Result<ir::PrimFunc> SampleRandomSchedule(const ir::PrimFunc& base, uint64_t seed, std::string* trace_out) {
  Schedule sch(base, seed);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  auto coin = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };

  MainBlock main = FindMainBlock(base);
  if (main.name.empty()) return Status::InvalidArgument("SampleRandomSchedule: " + base.name + " has no block");
  TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(main.name));

  std::optional<BlockRV> write_back;
  if (main.num_reduce > 0 && coin(0.5)) {
    Result<BlockRV> wb = sch.CacheWrite(block, ir::MemoryScope::kLocal);
    if (wb.ok()) write_back = *wb;
  }

  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  const size_t first = loops.size() - static_cast<size_t>(main.num_spatial + main.num_reduce);
  std::vector<LoopRV> s0, s1, s2, r0, r1;
  for (size_t i = first; i < loops.size(); ++i) {
    const bool spatial = i - first < static_cast<size_t>(main.num_spatial);
    const int pieces = spatial ? 3 : 2;
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> tiles, sch.SamplePerfectTile(loops[i], pieces, 32));
    std::vector<Factor> factors(tiles.begin(), tiles.end());
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch.Split(loops[i], factors));
    if (spatial) {
      s0.push_back(parts[0]);
      s1.push_back(parts[1]);
      s2.push_back(parts[2]);
    } else {
      r0.push_back(parts[0]);
      r1.push_back(parts[1]);
    }
  }
  // Two tiling structures: S0 S1 R0 R1 S2 (reduction inside the register
  // tile's outer loops) and S0 R0 S1 R1 S2 (reduction split around S1).
  std::vector<LoopRV> order;
  const bool reduce_outside_s1 = coin(0.5);
  auto append = [&](const std::vector<LoopRV>& v) { order.insert(order.end(), v.begin(), v.end()); };
  append(s0);
  if (reduce_outside_s1) {
    append(r0);
    append(s1);
  } else {
    append(s1);
    append(r0);
  }
  append(r1);
  append(s2);
  if (order.size() > 1) TF_RETURN_IF_ERROR(sch.Reorder(order));

  LoopRV outer = s0.empty() ? order.front() : s0.front();
  if (s0.size() > 1) {
    Result<LoopRV> fused = sch.Fuse(s0);
    if (fused.ok()) outer = *fused;
  }
  if (coin(0.7)) (void)sch.Parallel(outer);
  if (!s2.empty() && coin(0.8)) (void)sch.Vectorize(s2.back());
  if (!r1.empty() && coin(0.4)) (void)sch.Unroll(r1.back());
  if (s2.size() > 1 && coin(0.4)) (void)sch.Unroll(s2[s2.size() - 2]);
  if (coin(0.3)) {
    Result<ValueRV> step = sch.SampleCategorical({0, 16, 64, 512}, {0.25, 0.25, 0.25, 0.25});
    if (step.ok() && sch.Get(*step) > 0) (void)sch.Annotate(outer, "pragma_auto_unroll_max_step", sch.Get(*step));
  }

  if (write_back) {
    // Write back per outer tile, or per S1 tile when the reduction finishes inside it.
    Status placed = (!s1.empty() && !reduce_outside_s1 && coin(0.5)) ? sch.ReverseComputeAt(*write_back, s1.back())
                                                                      : Status::InvalidArgument("");
    if (!placed.ok()) (void)sch.ReverseComputeAt(*write_back, outer);
    Result<std::vector<LoopRV>> wb_loops = sch.GetLoops(*write_back);
    if (wb_loops.ok() && !wb_loops->empty() && coin(0.6)) (void)sch.Vectorize(wb_loops->back());
  }
  if (trace_out) *trace_out = sch.trace().ToText();
  return sch.func();
}

Result<double> MeasureSeconds(const ir::PrimFunc& scheduled, const MeasureOptions& options) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel, JitCompile(scheduled, Target::Host()));
  std::mt19937_64 rng(7);
  std::vector<HostBuffer> buffers;
  std::vector<void*> args;
  buffers.reserve(scheduled.params.size());
  for (const ir::Buffer& p : scheduled.params) {
    buffers.push_back(HostBuffer::Like(p));
    buffers.back().FillRandom(rng);
    args.push_back(buffers.back().data());
  }
  // Restores the runtime's thread count on every return path.
  struct ThreadsGuard {
    int32_t saved = tunefarm_get_num_threads();
    ~ThreadsGuard() { tunefarm_set_num_threads(saved); }
  } guard;
  if (options.num_threads > 0) tunefarm_set_num_threads(options.num_threads);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  TF_RETURN_IF_ERROR(kernel->Run(args));  // warm-up; also sizes the groups
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int runs = std::clamp(static_cast<int>(options.min_group_ms * 1e-3 / std::max(first, 1e-9)) + 1, 1,
                              options.max_runs_per_group);
  double best = first;
  for (int g = 0; g < options.repeats; ++g) {
    auto start = Clock::now();
    for (int r = 0; r < runs; ++r) TF_RETURN_IF_ERROR(kernel->Run(args));
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / runs);
  }
  return best;
}

}  // namespace tunefarm::costmodel
