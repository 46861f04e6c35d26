// pad_input: a zero-padded copy of an input, so that padding guards leave
// the block's inner loops.
//
// A convolution with padding reads its input under a guard,
// select(0 <= h + r - 1 < H && ..., X[.., h + r - 1, ..], 0). Lowered, that
// guard runs once per multiply-add: a branch per scalar load, or a masked
// vector load per row. A copy of X with a border of zeros makes every read
// in bounds, so the guard goes and the reads are plain loads; the copy costs
// one pass over X, which the search weighs against what it saves.
#include "schedule_utils.h"
#include "workload/workload_bounds.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {

using namespace ir;

namespace {

std::optional<int64_t> ConstantOf(const Expr& e) {
  Expr s = Simplify(e);
  if (const auto* i = s.as<IntImm>()) return i->value;
  return std::nullopt;
}

// Replaces every subexpression structurally equal to `target` by `with`.
class ReplaceSame : public IRMutator {
 public:
  ReplaceSame(const Expr& target, const Expr& with) : target_(target), with_(with) {}
  Expr Mutate(const Expr& e) override { return ir::ExprEqual(e, target_) ? with_ : IRMutator::Mutate(e); }
  using IRMutator::Mutate;

 private:
  const Expr target_, with_;
};

// p - index and p + index as constants, if the simplifier gets there; the
// index is first named as a whole wherever p spells it out, so that an
// index the simplifier keeps as an opaque term (a transposed convolution's
// (h + 1 - (2 * r + (h + 1) % 2)) / 2) still cancels.
std::pair<std::optional<int64_t>, std::optional<int64_t>> Offsets(const Expr& p, const Expr& index) {
  Var named("pad_index", index.dtype());
  Expr q = ReplaceSame(index, named).Mutate(p);
  std::optional<int64_t> minus = ConstantOf(Sub::Make(q, named)), plus = ConstantOf(Add::Make(q, named));
  if (!minus) minus = ConstantOf(Sub::Make(p, index));
  if (!plus) plus = ConstantOf(Add::Make(p, index));
  return {minus, plus};
}

}  // namespace

namespace sched {

BoundSide BoundsCheckSide(const Expr& check, const Expr& index, int64_t extent) {
  // Normalise to p >= 0 (strict: p > 0).
  Expr p;
  bool strict = false;
  if (const auto* c = check.as<GE>()) p = Sub::Make(c->a, c->b);
  else if (const auto* c = check.as<GT>()) p = Sub::Make(c->a, c->b), strict = true;
  else if (const auto* c = check.as<LE>()) p = Sub::Make(c->b, c->a);
  else if (const auto* c = check.as<LT>()) p = Sub::Make(c->b, c->a), strict = true;
  else return BoundSide::kNone;
  if (p.dtype() != index.dtype()) return BoundSide::kNone;
  auto [minus, plus] = Offsets(p, index);
  // p = index + k: index >= -k (strict: index >= 1 - k); the lower bound is 0.
  if (minus && (strict ? 1 - *minus : -*minus) == 0) return BoundSide::kLower;
  // p = k - index: index <= k (strict: index <= k - 1); the upper bound is E - 1.
  if (plus && (strict ? *plus - 1 : *plus) == extent - 1) return BoundSide::kUpper;
  return BoundSide::kNone;
}

}  // namespace sched

namespace {

// True if `check` is exactly one side of "indices[d] is inside [0, shape[d])"
// for some dimension d: indices[d] >= 0, 0 <= indices[d], indices[d] < E,
// indices[d] <= E - 1 and the like, in any arrangement the simplifier can
// reduce to a constant difference.
bool IsBoundsCheck(const Expr& check, const std::vector<Expr>& indices, const std::vector<int64_t>& shape) {
  for (size_t d = 0; d < indices.size(); ++d) {
    if (sched::BoundsCheckSide(check, indices[d], shape[d]) != sched::BoundSide::kNone) return true;
  }
  return false;
}

// Redirects every read of `src` to `pad` (indices shifted by `before`) and
// drops the guards that only keep a read of `src` inside its bounds.
class PadRewriter : public IRMutator {
 public:
  PadRewriter(const Buffer& src, const Buffer& pad, const std::vector<int64_t>& before)
      : src_(src), pad_(pad), before_(before) {}
  int guards_removed() const { return guards_removed_; }

 protected:
  Expr MutateSelect(const Select* op, const Expr& self) override {
    const Load* load = op->true_value.as<Load>();
    if (load && load->buffer.get() == src_.get() && IsZeroConst(op->false_value)) {
      bool all_bounds = true;
      for (const Expr& c : Conjuncts(op->condition)) all_bounds = all_bounds && IsBoundsCheck(c, load->indices, src_->shape);
      if (all_bounds) {
        ++guards_removed_;
        return Mutate(op->true_value);
      }
    }
    return IRMutator::MutateSelect(op, self);
  }
  Expr MutateLoad(const Load* op, const Expr& self) override {
    if (op->buffer.get() != src_.get()) return IRMutator::MutateLoad(op, self);
    std::vector<Expr> idx;
    for (size_t d = 0; d < op->indices.size(); ++d) {
      Expr i = Mutate(op->indices[d]);
      idx.push_back(before_[d] == 0 ? i : Simplify(Add::Make(i, IntImm::Make(i.dtype(), before_[d]))));
    }
    return Load::Make(pad_, std::move(idx));
  }

 private:
  const Buffer src_, pad_;
  const std::vector<int64_t> before_;
  int guards_removed_ = 0;
};

// pad[v] = select(v - before inside src, src[v - before], 0), as one block.
Stmt FillNest(const std::string& block_name, const Buffer& src, const Buffer& pad, const std::vector<int64_t>& before) {
  std::vector<IterVar> ivs;
  std::vector<Var> loops;
  std::vector<Expr> src_idx, pad_idx;
  Expr inside;
  for (size_t d = 0; d < pad->shape.size(); ++d) {
    Var lv("ax" + std::to_string(d), DataType::Index());
    Var bv("v" + std::to_string(d), DataType::Index());
    ivs.push_back(IterVar{bv, pad->shape[d], IterKind::kSpatial, lv});
    loops.push_back(lv);
    pad_idx.push_back(bv);
    const bool padded = pad->shape[d] != src->shape[d];
    Expr i = before[d] == 0 ? Expr(bv) : Sub::Make(bv, IntImm::Make(DataType::Index(), before[d]));
    src_idx.push_back(i);
    if (!padded) continue;
    Expr dim = And::Make(GE::Make(i, IntImm::Make(DataType::Index(), 0)),
                         LT::Make(i, IntImm::Make(DataType::Index(), src->shape[d])));
    inside = inside.defined() ? And::Make(inside, dim) : dim;
  }
  Expr zero = src->dtype.is_float() ? FloatImm::Make(src->dtype, 0.0) : IntImm::Make(src->dtype, 0);
  Expr value = Select::Make(inside, Load::Make(src, src_idx), zero);
  Stmt nest = Block::Make(block_name, ivs, Stmt(), Store::Make(pad, value, pad_idx));
  for (size_t d = loops.size(); d-- > 0;) {
    nest = For::Make(loops[d], Expr(int64_t(0)), Expr(pad->shape[d]), ForKind::kSerial, nest);
  }
  return nest;
}

// What pad_input would do to one block: the input, its border, and the
// block rewritten to read the padded copy.
struct PadPlan {
  Buffer src, pad;
  std::vector<int64_t> before;
  Stmt init, body;
};

Result<PadPlan> PlanPad(const PrimFunc& func, const Block* block, int read_index) {
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("pad_input(" + block->name + "): " + why); };
  std::vector<Buffer> reads = sched::BlockReadBuffers(block);
  if (read_index < 0 || size_t(read_index) >= reads.size()) {
    return fail("read index " + std::to_string(read_index) + " is out of range; the block reads " +
                std::to_string(reads.size()) + " buffers");
  }
  PadPlan plan;
  plan.src = reads[size_t(read_index)];
  const Buffer& src = plan.src;
  // The elements the block reads, over its whole iteration domain.
  RangeMap ranges;
  for (const IterVar& iv : block->iter_vars) ranges[iv.var.get()] = Interval{0, iv.extent - 1};
  const size_t rank = src->shape.size();
  std::vector<int64_t> lo(rank, 0), hi(rank, 0);
  for (size_t d = 0; d < rank; ++d) hi[d] = src->shape[d] - 1;
  // BlockLoadsOf and the rewrite below see the body only: a block's init is
  // its reduction's identity and reads no input.
  for (const Load* load : sched::BlockLoadsOf(block, src.get())) {
    for (size_t d = 0; d < rank; ++d) {
      std::optional<Interval> b = BoundOf(load->indices[d], ranges);
      if (!b) {
        return fail("index " + std::to_string(d) + " of " + src->name + ", " + ToString(load->indices[d]) +
                    ", has no bounds over the block's iterations (only +, -, * and division by constants have)");
      }
      lo[d] = std::min(lo[d], b->min);
      hi[d] = std::max(hi[d], b->max);
    }
  }
  std::vector<int64_t> shape(rank);
  plan.before.resize(rank);
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    plan.before[d] = -lo[d];
    shape[d] = hi[d] - lo[d] + 1;
    any = any || shape[d] != src->shape[d];
  }
  if (!any) return fail("every read of " + src->name + " is inside its bounds; there is nothing to pad");
  plan.pad = MakeBuffer(sched::UniqueName(func, src->name + "_pad"), src->dtype, shape, MemoryScope::kGlobal);
  PadRewriter rewriter(src, plan.pad, plan.before);
  plan.body = rewriter.Mutate(block->body);
  if (rewriter.guards_removed() == 0) {
    return fail("no read of " + src->name + " is guarded by bounds checks alone: pad_input removes select(0 <= i < " +
                "extent && ..., " + src->name + "[i], 0), with the read itself as the selected value");
  }
  // The block's init is its reduction's identity: it reads no input.
  plan.init = block->init;
  return plan;
}

}  // namespace

bool Schedule::CanPadInput(BlockRV block_rv, int read_index) const {
  Result<std::string> name = ResolveBlock(block_rv);
  if (!name.ok()) return false;
  return PlanPad(func_, sched::FindBlock(func_.body, *name), read_index).ok();
}

Result<BlockRV> Schedule::PadInput(BlockRV block_rv, int read_index) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  TF_ASSIGN_OR_RETURN(PadPlan plan, PlanPad(func_, block, read_index));
  Stmt rewritten_block = Block::Make(block->name, block->iter_vars, plan.init, plan.body, block->predicate);
  const StmtNode* nest = sched::NestOf(func_.body, block);
  Stmt nest_stmt = sched::FindStmt(func_.body, nest);
  Stmt rewritten = sched::ReplaceNode(nest_stmt, block, rewritten_block);
  Stmt fill = FillNest(plan.pad->name, plan.src, plan.pad, plan.before);
  SetBody(sched::ReplaceNode(func_.body, nest, Allocate::Make(plan.pad, SeqStmt::Make({fill, rewritten}))));
  BlockRV out = NewBlockRV(plan.pad->name);
  Record({InstructionKind::kPadInput, {TraceArg::Ref(Name(block_rv)), TraceArg::Int(read_index)}, {Name(out)}});
  return out;
}

}  // namespace tunefarm
