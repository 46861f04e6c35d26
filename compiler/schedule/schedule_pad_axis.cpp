// pad_axis: a block computes a padded tile of its output (schedule.h).
//
// Why: a 1000-wide matmul has no vector axis whose extent is a multiple of
// 16 lanes, so its register tile either takes a divisor of 1000 (8 lanes,
// half the vector unit) or a guard on every multiply-add. Padded to 1008,
// the block runs whole vectors with no guard at all: its output is an
// intermediate (a local accumulator) with room for the padding, its inputs
// are read through copies with zeros past their ends (or under the guards
// they already had), and only the consumer that stores the valid part keeps
// a guard, once per output element. This is MetaSchedule's pad_einsum and
// oneDNN's padded tails, one axis at a time.
#include <map>
#include <set>

#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm {

using namespace ir;

namespace {

// A load of the block's body and the condition of the select it is the
// true value of (a padding guard), if any.
struct GuardedLoad {
  const Load* load;
  Expr guard;
};

class GuardedLoads : public IRVisitor {
 public:
  std::vector<GuardedLoad> loads;
  using IRVisitor::Visit;

 protected:
  void VisitSelect(const Select* op) override {
    const Load* load = op->true_value.as<Load>();
    if (!load || !IsZeroConst(op->false_value)) return IRVisitor::VisitSelect(op);
    Visit(op->condition);
    loads.push_back({load, op->condition});
    for (const Expr& i : load->indices) Visit(i);
    Visit(op->false_value);
  }
  void VisitLoad(const Load* op) override {
    loads.push_back({op, Expr()});
    IRVisitor::VisitLoad(op);
  }
};

// True if some conjunct of `guard` keeps `index` below `extent`.
bool GuardsUpperBound(const Expr& guard, const Expr& index, int64_t extent) {
  if (!guard.defined()) return false;
  for (const Expr& c : Conjuncts(guard)) {
    if (sched::BoundsCheckSide(c, index, extent) == sched::BoundSide::kUpper) return true;
  }
  return false;
}

// The loop variable a block's iter var is bound to, when the binding is a
// bare loop variable; else null.
const Variable* BoundLoop(const IterVar& iv) { return iv.binding.as<Variable>(); }

// An intermediate buffer to grow, and the one block that fills it.
struct Growth {
  Buffer buffer;
  std::vector<int64_t> shape;  // the grown shape
  const Block* writer = nullptr;
};

// Grows loop extents and block domains: the padded block's axis, and each
// grown buffer's writer, whose new elements are zeros.
class PadRewriter : public IRMutator {
 public:
  PadRewriter(std::map<const Variable*, int64_t> loop_extents, const Block* padded, size_t axis, int64_t padded_extent,
              std::map<const Block*, const Growth*> writers)
      : loop_extents_(std::move(loop_extents)), padded_(padded), axis_(axis), padded_extent_(padded_extent),
        writers_(std::move(writers)) {}
  using IRMutator::Mutate;

 protected:
  Stmt MutateFor(const For* op, const Stmt& self) override {
    Stmt body = Mutate(op->body);
    auto it = loop_extents_.find(op->loop_var.get());
    if (it == loop_extents_.end() && body.same_as(op->body)) return self;
    Expr extent = it == loop_extents_.end() ? op->extent : Expr(it->second);
    return For::Make(op->loop_var, op->min, extent, op->kind, body, op->thread_tag, op->annotations);
  }
  Stmt MutateBlock(const Block* op, const Stmt& self) override {
    if (op == padded_) {
      std::vector<IterVar> ivs = op->iter_vars;
      ivs[axis_].extent = padded_extent_;
      return Block::Make(op->name, ivs, op->init, op->body, op->predicate);
    }
    auto it = writers_.find(op);
    if (it == writers_.end()) return IRMutator::MutateBlock(op, self);
    const Growth& g = *it->second;
    const Store* store = sched::BlockStore(op);
    std::vector<IterVar> ivs = op->iter_vars;
    Expr inside;
    for (size_t d = 0; d < ivs.size(); ++d) {
      if (g.shape[d] == ivs[d].extent) continue;
      Expr in = LT::Make(ivs[d].var, Expr(ivs[d].extent));
      inside = inside.defined() ? And::Make(inside, in) : in;
      ivs[d].extent = g.shape[d];
    }
    const DataType t = store->value.dtype();
    Expr zero = t.is_float() ? FloatImm::Make(t, 0.0) : IntImm::Make(t, 0);
    // A copy that is already a guarded select (pad_input's) takes the new
    // bound into its condition: one select, one masked load.
    Expr value = Select::Make(inside, store->value, zero);
    if (const Select* guarded = store->value.as<Select>(); guarded && IsZeroConst(guarded->false_value)) {
      value = Select::Make(And::Make(guarded->condition, inside), guarded->true_value, guarded->false_value);
    }
    Stmt body = Store::Make(store->buffer, value, store->indices);
    return Block::Make(op->name, ivs, op->init, body, op->predicate);
  }

 private:
  const std::map<const Variable*, int64_t> loop_extents_;
  const Block* padded_;
  const size_t axis_;
  const int64_t padded_extent_;
  const std::map<const Block*, const Growth*> writers_;
};

}  // namespace

Status Schedule::PadAxis(BlockRV block_rv, int axis, int64_t multiple) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Stmt& root = func_.body;
  const Block* block = sched::FindBlock(root, name);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("pad_axis(" + name + "): " + why); };
  if (axis < 0 || size_t(axis) >= block->iter_vars.size()) {
    return fail("axis " + std::to_string(axis) + " is out of range; the block has " +
                std::to_string(block->iter_vars.size()) + " iteration variables");
  }
  const IterVar& iv = block->iter_vars[size_t(axis)];
  if (iv.kind != IterKind::kSpatial) return fail("axis " + iv.var.name() + " is a reduction axis; only spatial axes pad");
  if (multiple < 2) return fail("the multiple must be at least 2, not " + std::to_string(multiple));
  if (iv.extent % multiple == 0) {
    return fail("axis " + iv.var.name() + " (extent " + std::to_string(iv.extent) + ") is already a multiple of " +
                std::to_string(multiple));
  }
  if (block->predicate.defined()) return fail("the block has a guard from a non-divisible split; pad before splitting");
  const Store* store = sched::BlockStore(block);
  if (!store) return fail("the block's body is not a single store");
  if (sched::IsParam(func_, store->buffer.get())) {
    return fail("the block writes " + store->buffer->name + ", an output of the function, which cannot grow; cache_write the block first");
  }
  int store_dim = -1;
  for (size_t d = 0; d < store->indices.size(); ++d) {
    if (store->indices[d].as<Variable>() == iv.var.get()) store_dim = int(d);
    else if (UsesVar(store->indices[d], iv.var.get())) store_dim = -2;
  }
  if (store_dim < 0) return fail("the block must store at " + iv.var.name() + " itself, in one dimension of " + store->buffer->name);
  // The axis's own loop, not yet split or fused: pad_axis precedes the loop transformations.
  const Variable* loop_var = BoundLoop(iv);
  const For* loop = loop_var ? sched::FindLoop(root, loop_var) : nullptr;
  const int64_t* loop_extent = loop ? AsConstInt(loop->extent) : nullptr;
  bool shared = false;
  for (const IterVar& other : block->iter_vars) shared = shared || (&other != &iv && UsesVar(other.binding, loop_var));
  if (!loop || !loop_extent || *loop_extent != iv.extent || !IsZeroConst(loop->min) || shared) {
    return fail("axis " + iv.var.name() + " must be bound to a loop of its own extent; pad_axis comes before split and fuse");
  }
  const int64_t padded_extent = (iv.extent + multiple - 1) / multiple * multiple;

  // Every read the axis indexes must stay in bounds over the padded domain:
  // under a guard that says so, or in an intermediate copy that can grow.
  RangeMap ranges;
  for (const IterVar& v : block->iter_vars) ranges[v.var.get()] = Interval{0, v.extent - 1};
  ranges[iv.var.get()] = Interval{0, padded_extent - 1};
  GuardedLoads walk;
  walk.Visit(block->body);
  std::map<const BufferNode*, Growth> growths;
  for (const GuardedLoad& gl : walk.loads) {
    const Load* load = gl.load;
    const Buffer& buffer = load->buffer;
    if (buffer.get() == store->buffer.get()) continue;
    for (size_t d = 0; d < load->indices.size(); ++d) {
      const Expr& index = load->indices[d];
      if (!UsesVar(index, iv.var.get())) continue;
      std::optional<Interval> b = BoundOf(index, ranges);
      if (!b) return fail("index " + std::to_string(d) + " of " + buffer->name + ", " + ToString(index) + ", has no bounds");
      if (b->max < buffer->shape[d] || GuardsUpperBound(gl.guard, index, buffer->shape[d])) continue;
      if (sched::IsParam(func_, buffer.get())) {
        return fail("it reads " + buffer->name + " at " + ToString(index) + " up to " + std::to_string(b->max) +
                    ", past its extent " + std::to_string(buffer->shape[d]) + " in dimension " + std::to_string(d) +
                    ", and " + buffer->name + " is a function parameter; read it through a copy (cache_read) first");
      }
      Growth& g = growths[buffer.get()];
      if (!g.buffer) g.buffer = buffer, g.shape = buffer->shape;
      g.shape[d] = std::max(g.shape[d], b->max + 1);
    }
  }

  // Each grown buffer's writer: one element-wise copy over the whole buffer, at the root.
  std::map<const Variable*, int64_t> loop_extents = {{loop_var, padded_extent}};
  std::map<const Block*, const Growth*> writers;
  for (auto& [node, g] : growths) {
    std::vector<const Block*> found;
    for (const Block* w : sched::BlocksUnder(root)) {
      if (const Store* s = sched::BlockStore(w); s && s->buffer.get() == node) found.push_back(w);
    }
    auto cannot = [&](const std::string& why) {
      return fail("its input " + node->name + " would have to grow, but " + why);
    };
    if (found.size() != 1) return cannot(std::to_string(found.size()) + " blocks write it");
    const Block* w = found[0];
    const Store* ws = sched::BlockStore(w);
    if (w->init.defined() || w->predicate.defined() || !sched::LoopsAbove(root, sched::NestOf(root, w)).empty()) {
      return cannot("its writer " + w->name + " is not a plain copy at the root (place copies after pad_axis)");
    }
    for (size_t d = 0; d < w->iter_vars.size(); ++d) {
      const IterVar& wv = w->iter_vars[d];
      const Variable* lv = BoundLoop(wv);
      const For* wl = lv ? sched::FindLoop(root, lv) : nullptr;
      const int64_t* we = wl ? AsConstInt(wl->extent) : nullptr;
      if (ws->indices.size() != w->iter_vars.size() || ws->indices[d].as<Variable>() != wv.var.get() ||
          wv.kind != IterKind::kSpatial || !we || *we != wv.extent || wv.extent != node->shape[d]) {
        return cannot("its writer " + w->name + " does not copy it element by element over its whole shape");
      }
      if (g.shape[d] != wv.extent) loop_extents[lv] = g.shape[d];
    }
    g.writer = w;
    writers[w] = &g;
  }

  PadRewriter rewriter(loop_extents, block, size_t(axis), padded_extent, writers);
  Stmt body = rewriter.Mutate(root);
  for (const auto& [node, g] : growths) {
    body = sched::ReplaceBuffer(body, node, MakeBuffer(node->name, node->dtype, g.shape, node->scope));
  }
  std::vector<int64_t> out_shape = store->buffer->shape;
  out_shape[size_t(store_dim)] = padded_extent;
  body = sched::ReplaceBuffer(body, store->buffer.get(),
                              MakeBuffer(store->buffer->name, store->buffer->dtype, out_shape, store->buffer->scope));
  SetBody(body);
  Record({InstructionKind::kPadAxis, {TraceArg::Ref(Name(block_rv)), TraceArg::Int(axis), TraceArg::Int(multiple)}});
  return Status::OK();
}

}  // namespace tunefarm
