#include "tunefarm/compiler/schedule/gpu_default_schedule.h"

#include <algorithm>
#include <string>
#include <vector>

#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {

using namespace ir;

namespace {

// What to do with one root loop nest, decided on the program before any of
// it changes (the primitives on one nest leave the others' loops and blocks
// as they are, so the plan stays valid).
struct NestPlan {
  std::string block;         // a block of the nest: its loops start with the nest's
  size_t leading = 0;        // leading spatial loops to fuse
  bool binds_threads = false;  // the nest binds threadIdx.* already
};

// The statements at the root that are not wrappers: loop nests and loop-less blocks.
void RootStatements(const Stmt& s, std::vector<Stmt>* out) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case IRNodeKind::kAllocate: return RootStatements(s.as<Allocate>()->body, out);
    case IRNodeKind::kLetStmt: return RootStatements(s.as<LetStmt>()->body, out);
    case IRNodeKind::kSeqStmt:
      for (const Stmt& item : s.as<SeqStmt>()->seq) RootStatements(item, out);
      return;
    case IRNodeKind::kFor:
    case IRNodeKind::kBlock:
    case IRNodeKind::kIfThenElse:
    case IRNodeKind::kStore:
    case IRNodeKind::kEvaluate:
    case IRNodeKind::kBarrier: out->push_back(s); return;
    TF_EXPR_KIND_CASES return;
  }
}

bool BindsAny(const Stmt& s, bool (*pred)(const std::string&)) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kFor) return;
    const auto* f = static_cast<const For*>(n);
    found |= f->kind == ForKind::kThreadBinding && pred(f->thread_tag);
  });
  return found;
}

bool IsBlockTag(const std::string& tag) { return tag.rfind("blockIdx.", 0) == 0; }
bool IsThreadTag(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }

// The plan for one root statement; nullopt when it is left alone.
Result<std::optional<NestPlan>> PlanNest(const Stmt& s) {
  std::vector<const Block*> blocks = sched::BlocksUnder(s);
  if (blocks.empty()) return std::optional<NestPlan>();
  const For* root = s.as<For>();
  if (!root) return Status::InvalidArgument("block " + blocks[0]->name + " is under no loop; it cannot be bound to GPU threads");
  if (BindsAny(s, IsBlockTag)) return std::optional<NestPlan>();
  NestPlan plan;
  plan.block = blocks[0]->name;
  plan.binds_threads = BindsAny(s, IsThreadTag);
  for (const For* f = root; f; f = f->body.as<For>()) {
    if (f->kind != ForKind::kSerial || !AsConstInt(f->extent)) break;
    if (sched::IsReductionLoop(f->body, f->loop_var.get())) break;
    ++plan.leading;
  }
  return std::optional<NestPlan>(plan);
}

Status ApplyPlan(Schedule& sch, const NestPlan& plan, int64_t threads_per_block) {
  TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(plan.block));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
  if (plan.leading == 0) {
    if (plan.binds_threads) return Status::OK();  // nothing outside the threads to give the grid
    // The nest starts with a reduction: one block of one thread runs it.
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> split, sch.Split(loops[0], {1, -1}));
    return sch.Bind(split[0], "blockIdx.x");
  }
  LoopRV fused = loops[0];
  if (plan.leading > 1) {
    std::vector<LoopRV> leading(loops.begin(), loops.begin() + std::ptrdiff_t(plan.leading));
    TF_ASSIGN_OR_RETURN(fused, sch.Fuse(leading));
  }
  if (plan.binds_threads) return sch.Bind(fused, "blockIdx.x");
  TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(fused));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> split, sch.Split(fused, {-1, std::min(extent, threads_per_block)}));
  TF_RETURN_IF_ERROR(sch.Bind(split[0], "blockIdx.x"));
  return sch.Bind(split[1], "threadIdx.x");
}

}  // namespace

Status BindUnboundLoops(Schedule& sch, int64_t threads_per_block) {
  if (threads_per_block < 1) {
    return Status::InvalidArgument("bind_unbound_loops: threads_per_block must be positive, got " +
                                   std::to_string(threads_per_block));
  }
  std::vector<Stmt> roots;
  RootStatements(sch.func().body, &roots);
  std::vector<NestPlan> plans;
  for (const Stmt& s : roots) {
    TF_ASSIGN_OR_RETURN(std::optional<NestPlan> plan, PlanNest(s));
    if (plan) plans.push_back(*plan);
  }
  for (const NestPlan& plan : plans) TF_RETURN_IF_ERROR(ApplyPlan(sch, plan, threads_per_block));
  return Status::OK();
}

Result<PrimFunc> DefaultGpuSchedule(const PrimFunc& func, int64_t threads_per_block) {
  Schedule sch(func);
  TF_RETURN_IF_ERROR(BindUnboundLoops(sch, threads_per_block));
  return sch.func();
}

}  // namespace tunefarm
