// Schedule state, handles, and the loop primitives: split, reorder, fuse,
// loop kinds, bind and annotations.
#include "tunefarm/compiler/schedule/schedule.h"

#include <algorithm>
#include <set>

#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {

using namespace ir;
using sched::FindLoop;

Schedule::Schedule(PrimFunc func, uint64_t seed) : func_(std::move(func)), rng_(seed) {}

LoopRV Schedule::NewLoopRV(const Var& v) {
  loops_.push_back(v);
  return LoopRV{int(loops_.size()) - 1};
}
BlockRV Schedule::NewBlockRV(const std::string& name) {
  blocks_.push_back(name);
  return BlockRV{int(blocks_.size()) - 1};
}
ValueRV Schedule::NewValueRV(int64_t v) {
  values_.push_back(v);
  return ValueRV{int(values_.size()) - 1};
}

Result<Var> Schedule::ResolveLoop(LoopRV loop) const {
  if (loop.id < 0 || size_t(loop.id) >= loops_.size()) {
    return Status::InvalidArgument("unknown loop handle " + Name(loop));
  }
  const Var& v = loops_[size_t(loop.id)];
  if (!v.defined()) return Status::InvalidArgument(Name(loop) + " is the root location, not a loop");
  if (!FindLoop(func_.body, v.get())) {
    return Status::InvalidArgument("loop " + v.name() + " (" + Name(loop) + ") no longer exists");
  }
  return v;
}

Result<std::string> Schedule::ResolveBlock(BlockRV block) const {
  if (block.id < 0 || size_t(block.id) >= blocks_.size()) {
    return Status::InvalidArgument("unknown block handle " + Name(block));
  }
  const std::string& name = blocks_[size_t(block.id)];
  if (!sched::FindBlock(func_.body, name)) {
    return Status::InvalidArgument("block " + name + " (" + Name(block) + ") no longer exists");
  }
  return name;
}

Result<Var> Schedule::LoopVar(LoopRV loop) const { return ResolveLoop(loop); }

Result<int64_t> Schedule::LoopExtent(LoopRV loop) const {
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  const For* f = FindLoop(func_.body, v.get());
  const int64_t* e = AsConstInt(f->extent);
  if (!e) return Status::InvalidArgument("loop " + v.name() + " has no constant extent");
  return *e;
}

Result<std::string> Schedule::BlockName(BlockRV block) const { return ResolveBlock(block); }

std::vector<std::string> Schedule::BlockNames() const {
  std::vector<std::string> names;
  for (const Block* b : sched::BlocksUnder(func_.body)) names.push_back(b->name);
  return names;
}

Result<BlockRV> Schedule::GetBlock(const std::string& name) {
  if (!sched::FindBlock(func_.body, name)) {
    std::string known;
    for (const std::string& n : BlockNames()) known += (known.empty() ? "" : ", ") + n;
    return Status::InvalidArgument("no block named '" + name + "' (blocks: " + known + ")");
  }
  BlockRV rv = NewBlockRV(name);
  Record({InstructionKind::kGetBlock, {TraceArg::Str(name)}, {Name(rv)}});
  return rv;
}

Result<std::vector<LoopRV>> Schedule::GetLoops(BlockRV block) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block));
  const Block* b = sched::FindBlock(func_.body, name);
  std::vector<LoopRV> out;
  Instruction inst{InstructionKind::kGetLoops, {TraceArg::Ref(Name(block))}, {}, {}, false};
  for (const For* f : sched::LoopsAbove(func_.body, b)) {
    out.push_back(NewLoopRV(f->loop_var));
    inst.outputs.push_back(Name(out.back()));
  }
  Record(std::move(inst));
  return out;
}

Result<std::vector<LoopRV>> Schedule::Split(LoopRV loop, const std::vector<Factor>& factors) {
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  const For* f = FindLoop(func_.body, v.get());
  const int64_t* extent = AsConstInt(f->extent);
  const int64_t* min = AsConstInt(f->min);
  if (!extent || !min || *min != 0) {
    return Status::InvalidArgument("split: loop " + v.name() + " must start at 0 and have a constant extent");
  }
  if (f->kind != ForKind::kSerial) {
    return Status::InvalidArgument("split: loop " + v.name() + " is " + ForKindName(f->kind) +
                                   "; split it before changing its kind");
  }
  if (factors.size() < 2) return Status::InvalidArgument("split: needs at least two factors");
  std::vector<int64_t> values;
  int inferred = -1;
  int64_t known_product = 1;
  for (size_t i = 0; i < factors.size(); ++i) {
    int64_t x = factors[i].rv >= 0 ? Get(ValueRV{factors[i].rv}) : factors[i].literal;
    if (x == -1 && inferred < 0) {
      inferred = int(i);
    } else if (x <= 0) {
      return Status::InvalidArgument("split: factor " + std::to_string(i) + " of loop " + v.name() + " is " +
                                     std::to_string(x) + "; factors must be positive (one may be -1)");
    } else {
      known_product *= x;
    }
    values.push_back(x);
  }
  if (inferred >= 0) values[size_t(inferred)] = (*extent + known_product - 1) / known_product;
  int64_t product = 1;
  for (int64_t x : values) product *= x;

  // New loops outermost first; the old variable becomes their mixed-radix sum.
  std::vector<Var> vars;
  Expr fused;
  for (size_t i = 0; i < values.size(); ++i) {
    vars.emplace_back(v.name() + "_" + std::to_string(i), DataType::Index());
    fused = fused.defined() ? Add::Make(Mul::Make(fused, Expr(values[i])), vars.back()) : Expr(vars.back());
  }
  Stmt body = Substitute(f->body, {{v.get(), fused}});
  if (product != *extent) {
    // Non-divisible: guard every block under the loop.
    Expr guard = LT::Make(fused, Expr(*extent));
    class Guarder : public IRMutator {
     public:
      explicit Guarder(Expr g) : g_(std::move(g)) {}
      using IRMutator::Mutate;
     protected:
      Stmt MutateBlock(const Block* op, const Stmt&) override {
        Expr p = op->predicate.defined() ? And::Make(op->predicate, g_) : g_;
        return Block::Make(op->name, op->iter_vars, op->init, op->body, p);
      }
     private:
      Expr g_;
    } guarder(guard);
    body = guarder.Mutate(body);
  }
  for (size_t i = values.size(); i-- > 0;) {
    body = For::Make(vars[i], Expr(int64_t(0)), Expr(values[i]), ForKind::kSerial, body);
  }
  SetBody(sched::ReplaceNode(func_.body, f, body));

  std::vector<LoopRV> out;
  Instruction inst{InstructionKind::kSplit, {TraceArg::Ref(Name(loop))}, {}, {}, false};
  std::vector<TraceArg> factor_args;
  for (const Factor& fa : factors) {
    factor_args.push_back(fa.rv >= 0 ? TraceArg::Ref(Name(ValueRV{fa.rv})) : TraceArg::Int(fa.literal));
  }
  inst.args.push_back(TraceArg::List(std::move(factor_args)));
  for (const Var& nv : vars) {
    out.push_back(NewLoopRV(nv));
    inst.outputs.push_back(Name(out.back()));
  }
  Record(std::move(inst));
  return out;
}

namespace {

// The chain of directly nested loops from `outer` down, while each body is a For.
std::vector<const For*> PerfectChain(const For* outer) {
  std::vector<const For*> chain{outer};
  while (const For* inner = chain.back()->body.as<For>()) chain.push_back(inner);
  return chain;
}

Stmt Rebuild(const std::vector<const For*>& loops, Stmt body) {
  for (size_t i = loops.size(); i-- > 0;) {
    const For* f = loops[i];
    body = For::Make(f->loop_var, f->min, f->extent, f->kind, body, f->thread_tag, f->annotations);
  }
  return body;
}

}  // namespace

Status Schedule::Reorder(const std::vector<LoopRV>& order) {
  std::vector<const For*> wanted;
  std::set<const For*> seen;
  for (LoopRV rv : order) {
    TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(rv));
    const For* f = FindLoop(func_.body, v.get());
    if (!seen.insert(f).second) return Status::InvalidArgument("reorder: loop " + v.name() + " is listed twice");
    wanted.push_back(f);
  }
  if (wanted.size() < 2) return Status::OK();
  // The outermost of the loops: the one no other listed loop encloses.
  const For* outer = nullptr;
  for (const For* f : wanted) {
    auto above = sched::LoopsAbove(func_.body, f);
    bool enclosed = std::any_of(above.begin(), above.end(), [&](const For* a) { return seen.count(a) > 0; });
    if (!enclosed) {
      if (outer) {
        return Status::InvalidArgument("reorder: loops " + outer->loop_var.name() + " and " + f->loop_var.name() +
                                       " are not in one loop nest");
      }
      outer = f;
    }
  }
  std::vector<const For*> chain = PerfectChain(outer);
  size_t last = 0, found = 0;
  for (size_t i = 0; i < chain.size(); ++i) {
    if (seen.count(chain[i])) {
      ++found;
      last = i;
    }
    if (found == seen.size()) break;
  }
  if (found != seen.size()) {
    return Status::InvalidArgument(
        "reorder: the loops must form a perfect nest (only loops between them); something other than a loop "
        "lies between " + outer->loop_var.name() + " and the rest");
  }
  chain.resize(last + 1);
  std::vector<const For*> reordered = chain;
  size_t next = 0;
  for (auto& slot : reordered) {
    if (seen.count(slot)) slot = wanted[next++];
  }
  // Loop extents here are constants, so moving a loop never moves a use of a
  // variable above its definition.
  SetBody(sched::ReplaceNode(func_.body, outer, Rebuild(reordered, chain.back()->body)));
  Instruction inst{InstructionKind::kReorder, {}, {}, {}, false};
  for (LoopRV rv : order) inst.args.push_back(TraceArg::Ref(Name(rv)));
  Record(std::move(inst));
  return Status::OK();
}

Result<LoopRV> Schedule::Fuse(const std::vector<LoopRV>& loops) {
  if (loops.size() < 2) return Status::InvalidArgument("fuse: needs at least two loops");
  std::vector<const For*> fs;
  for (LoopRV rv : loops) {
    TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(rv));
    fs.push_back(FindLoop(func_.body, v.get()));
  }
  for (size_t i = 0; i + 1 < fs.size(); ++i) {
    if (fs[i]->body.get() != fs[i + 1]) {
      return Status::InvalidArgument("fuse: loop " + fs[i + 1]->loop_var.name() + " is not directly inside loop " +
                                     fs[i]->loop_var.name() + "; only adjacent loops of a perfect nest fuse");
    }
  }
  int64_t total = 1;
  std::vector<int64_t> extents;
  for (const For* f : fs) {
    const int64_t* e = AsConstInt(f->extent);
    const int64_t* m = AsConstInt(f->min);
    if (!e || !m || *m != 0) return Status::InvalidArgument("fuse: loop " + f->loop_var.name() + " must start at 0 with a constant extent");
    if (f->kind != ForKind::kSerial) return Status::InvalidArgument("fuse: loop " + f->loop_var.name() + " is not serial");
    extents.push_back(*e);
    total *= *e;
  }
  std::string name;
  for (const For* f : fs) name += (name.empty() ? "" : "_") + f->loop_var.name();
  Var fused(name + "_fused", DataType::Index());
  std::map<const Variable*, Expr> vmap;
  int64_t stride = total;
  for (size_t i = 0; i < fs.size(); ++i) {
    stride /= extents[i];
    Expr e = Div::Make(fused, Expr(stride));
    if (i > 0) e = Mod::Make(e, Expr(extents[i]));
    vmap[fs[i]->loop_var.get()] = Simplify(e, {{fused.get(), {0, total - 1}}});
  }
  Stmt body = Substitute(fs.back()->body, vmap);
  SetBody(sched::ReplaceNode(func_.body, fs.front(), For::Make(fused, Expr(int64_t(0)), Expr(total), ForKind::kSerial, body)));
  LoopRV out = NewLoopRV(fused);
  Instruction inst{InstructionKind::kFuse, {}, {Name(out)}, {}, false};
  for (LoopRV rv : loops) inst.args.push_back(TraceArg::Ref(Name(rv)));
  Record(std::move(inst));
  return out;
}

namespace {
// Sets the loop kind; `instruction` (the primitive) names itself in errors.
Status SetKind(Schedule& sch, PrimFunc& func, const Var& v, ForKind kind, const std::string& tag,
               InstructionKind instruction) {
  const std::string primitive = InstructionName(instruction);
  const For* f = FindLoop(func.body, v.get());
  if (kind != ForKind::kUnrolled && kind != ForKind::kThreadBinding && sched::IsReductionLoop(f->body, v.get())) {
    return Status::InvalidArgument(primitive + ": loop " + v.name() +
                                   " carries a reduction; its iterations are not independent");
  }
  if ((kind == ForKind::kVectorized || kind == ForKind::kUnrolled) && !AsConstInt(f->extent)) {
    return Status::InvalidArgument(primitive + ": loop " + v.name() + " needs a constant extent");
  }
  if (kind == ForKind::kVectorized && *AsConstInt(f->extent) > 1024) {
    return Status::InvalidArgument("vectorize: loop " + v.name() + " has " + std::to_string(*AsConstInt(f->extent)) +
                                   " iterations; split it to at most 1024 lanes first");
  }
  func.body = sched::ReplaceNode(func.body, f, For::Make(f->loop_var, f->min, f->extent, kind, f->body, tag, f->annotations));
  return Status::OK();
}
}  // namespace

Status Schedule::Parallel(LoopRV loop) {
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  TF_RETURN_IF_ERROR(SetKind(*this, func_, v, ForKind::kParallel, "", InstructionKind::kParallel));
  Record({InstructionKind::kParallel, {TraceArg::Ref(Name(loop))}});
  return Status::OK();
}

Status Schedule::Vectorize(LoopRV loop) {
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  TF_RETURN_IF_ERROR(SetKind(*this, func_, v, ForKind::kVectorized, "", InstructionKind::kVectorize));
  Record({InstructionKind::kVectorize, {TraceArg::Ref(Name(loop))}});
  return Status::OK();
}

Status Schedule::Unroll(LoopRV loop) {
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  TF_RETURN_IF_ERROR(SetKind(*this, func_, v, ForKind::kUnrolled, "", InstructionKind::kUnroll));
  Record({InstructionKind::kUnroll, {TraceArg::Ref(Name(loop))}});
  return Status::OK();
}

Status Schedule::Bind(LoopRV loop, const std::string& thread_tag) {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                              "threadIdx.y", "threadIdx.z", "vthread"};
  if (!kTags.count(thread_tag)) {
    return Status::InvalidArgument("bind: unknown thread tag '" + thread_tag +
                                   "' (expected blockIdx.x/y/z, threadIdx.x/y/z or vthread)");
  }
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  TF_RETURN_IF_ERROR(SetKind(*this, func_, v, ForKind::kThreadBinding, thread_tag, InstructionKind::kBind));
  Record({InstructionKind::kBind, {TraceArg::Ref(Name(loop)), TraceArg::Str(thread_tag)}});
  return Status::OK();
}

Status Schedule::Annotate(LoopRV loop, const std::string& key, int64_t value) {
  // The list workers report to a tuner daemon: what replays here is what they say.
  static const std::set<std::string> kKeys(std::begin(ir::kLoopAnnotations), std::end(ir::kLoopAnnotations));
  if (!kKeys.count(key)) return Status::InvalidArgument("annotate: unknown annotation '" + key + "'");
  if (value < 0) return Status::InvalidArgument("annotate: " + key + " must not be negative");
  TF_ASSIGN_OR_RETURN(Var v, ResolveLoop(loop));
  const For* f = FindLoop(func_.body, v.get());
  if (key == ir::kDotProductAnnotation) {
    // The dot product instructions sum groups of kDotProductSteps bytes; a
    // wrong value or extent is a mistake of the caller, not a generic nest.
    const int64_t* extent = AsConstInt(f->extent);
    if (value != ir::kDotProductSteps || extent == nullptr || *extent != ir::kDotProductSteps) {
      return Status::InvalidArgument("annotate: " + key + " must be " + std::to_string(ir::kDotProductSteps) +
                                     ", on a loop of extent " + std::to_string(ir::kDotProductSteps) + " (loop '" +
                                     v.name() + "' has extent " + (extent ? std::to_string(*extent) : "not constant") +
                                     ", value " + std::to_string(value) + ")");
    }
  }
  auto annotations = f->annotations;
  annotations[key] = value;
  SetBody(sched::ReplaceNode(func_.body, f, For::Make(f->loop_var, f->min, f->extent, f->kind, f->body, f->thread_tag, annotations)));
  Record({InstructionKind::kAnnotate, {TraceArg::Ref(Name(loop)), TraceArg::Str(key), TraceArg::Int(value)}});
  return Status::OK();
}

}  // namespace tunefarm
