// rfactor, storage_align and sample_compute_location.
#include <algorithm>
#include <set>

#include "schedule_utils.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/ir/simplify.h"

namespace tunefarm {

using namespace ir;

namespace {

// The combiner of a reduction update D[v] = combine(D[v], term): returns the
// term and a function rebuilding combine(acc, x), or false.
bool MatchReduction(const Store* store, Expr* term, std::function<Expr(Expr, Expr)>* combine) {
  auto is_acc = [&](const Expr& e) {
    const Load* l = e.as<Load>();
    if (!l || l->buffer.get() != store->buffer.get() || l->indices.size() != store->indices.size()) return false;
    for (size_t d = 0; d < l->indices.size(); ++d) {
      if (!l->indices[d].same_as(store->indices[d]) &&
          l->indices[d].as<Variable>() != store->indices[d].as<Variable>()) {
        return false;
      }
    }
    return true;
  };
#define TF_MATCH(Node, Make)                                   \
  if (const auto* op = store->value.as<Node>()) {              \
    if (is_acc(op->a)) {                                       \
      *term = op->b;                                           \
      *combine = [](Expr a, Expr b) { return Make(a, b); };    \
      return true;                                             \
    }                                                          \
  }
  TF_MATCH(Add, Add::Make)
  TF_MATCH(Mul, Mul::Make)
  TF_MATCH(Max, Max::Make)
  TF_MATCH(Min, Min::Make)
#undef TF_MATCH
  return false;
}

const StmtNode* NestRoot(const Stmt& root, const Block* block) {
  // The outermost loop above the block (the whole nest it lives in).
  auto loops = sched::LoopsAbove(root, block);
  return loops.empty() ? static_cast<const StmtNode*>(block) : loops.front();
}

}  // namespace

Result<BlockRV> Schedule::RFactor(LoopRV loop_rv, int factor_axis) {
  TF_ASSIGN_OR_RETURN(Var loop_var, ResolveLoop(loop_rv));
  const Stmt& root = func_.body;
  const For* loop = sched::FindLoop(root, loop_var.get());
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("rfactor(" + loop_var.name() + "): " + why); };
  std::vector<const Block*> blocks = sched::BlocksUnder(loop->body);
  if (blocks.size() != 1) return fail("the loop must hold exactly one block");
  const Block* block = blocks[0];
  if (!block->init.defined()) return fail("block " + block->name + " is not a reduction");
  if (!sched::IsReductionLoop(loop->body, loop_var.get())) return fail("the loop is not a reduction loop of " + block->name);
  const Store* store = sched::BlockStore(block);
  const Store* init_store = block->init.as<Store>();
  Expr term;
  std::function<Expr(Expr, Expr)> combine;
  if (!store || !init_store || !MatchReduction(store, &term, &combine)) {
    return fail("block " + block->name + " is not of the form D[v] = D[v] op term (op: + * max min)");
  }
  const Buffer& out = store->buffer;
  int rank = int(out->shape.size());
  if (factor_axis < 0 || factor_axis > rank) return fail("factor axis " + std::to_string(factor_axis) + " is out of range");
  const int64_t* loop_extent = AsConstInt(loop->extent);
  if (!loop_extent) return fail("the loop has no constant extent");

  // Reduction loops of the block (enclosing loops used by reduce bindings).
  std::vector<const For*> above = sched::LoopsAbove(root, block);
  std::vector<const For*> reduce_loops;
  for (const For* f : above) {
    if (sched::IsReductionLoop(f->body, f->loop_var.get())) reduce_loops.push_back(f);
  }
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kSpatial && UsesVar(iv.binding, loop_var.get())) return fail("the loop also indexes the output");
  }
  // The rf block: spatial ivs + v_rf (bound to the loop) + one reduce iv per
  // remaining reduction loop; reduce ivs of the block become expressions of those.
  std::vector<IterVar> rf_ivs;
  std::map<const Variable*, Expr> loop_to_iv;
  Var v_rf(loop_var.name() + "_rf", DataType::Index());
  loop_to_iv[loop_var.get()] = v_rf;
  std::vector<Expr> rf_indices;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kSpatial) rf_ivs.push_back(iv);
  }
  rf_ivs.push_back(IterVar{v_rf, *loop_extent, IterKind::kSpatial, loop_var});
  for (const For* f : reduce_loops) {
    if (f == loop) continue;
    const int64_t* e = AsConstInt(f->extent);
    if (!e) return fail("reduction loop " + f->loop_var.name() + " has no constant extent");
    Var v(f->loop_var.name() + "_r", DataType::Index());
    rf_ivs.push_back(IterVar{v, *e, IterKind::kReduce, f->loop_var});
    loop_to_iv[f->loop_var.get()] = v;
  }
  std::map<const Variable*, Expr> reduce_iv_values;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce) reduce_iv_values[iv.var.get()] = Substitute(iv.binding, loop_to_iv);
  }
  std::vector<int64_t> rf_shape = out->shape;
  rf_shape.insert(rf_shape.begin() + factor_axis, *loop_extent);
  Buffer rf = MakeBuffer(sched::UniqueName(func_, out->name + "_rf"), out->dtype, rf_shape, out->scope);
  std::vector<Expr> idx = store->indices;
  idx.insert(idx.begin() + factor_axis, v_rf);
  Expr rf_term = Substitute(term, reduce_iv_values);
  std::string rf_name = sched::UniqueName(func_, block->name + "_rf");
  Stmt rf_block = Block::Make(rf_name, rf_ivs, Store::Make(rf, init_store->value, idx),
                              Store::Make(rf, combine(Load::Make(rf, idx), rf_term), idx), block->predicate);

  // The final reduction over the partials, in its own nest after the original one.
  std::vector<IterVar> final_ivs;
  std::vector<std::pair<Var, int64_t>> final_loops;
  std::vector<Expr> out_idx;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kSpatial) continue;
    Var lv(iv.var.name() + "_o", DataType::Index());
    final_ivs.push_back(IterVar{iv.var, iv.extent, IterKind::kSpatial, lv});
    final_loops.push_back({lv, iv.extent});
  }
  Var r_loop(loop_var.name() + "_red", DataType::Index());
  Var v_r(loop_var.name() + "_v", DataType::Index());
  final_ivs.push_back(IterVar{v_r, *loop_extent, IterKind::kReduce, r_loop});
  final_loops.push_back({r_loop, *loop_extent});
  std::vector<Expr> partial_idx = store->indices;
  partial_idx.insert(partial_idx.begin() + factor_axis, v_r);
  Stmt final_block = Block::Make(block->name, final_ivs, block->init,
                                 Store::Make(out, combine(Load::Make(out, store->indices), Load::Make(rf, partial_idx)), store->indices));
  Stmt final_nest = final_block;
  for (size_t i = final_loops.size(); i-- > 0;) {
    final_nest = For::Make(final_loops[i].first, Expr(int64_t(0)), Expr(final_loops[i].second), ForKind::kSerial, final_nest);
  }
  const StmtNode* nest_root = NestRoot(root, block);
  Stmt old_nest = sched::FindStmt(root, nest_root);
  Stmt rf_nest = sched::ReplaceNode(old_nest, block, rf_block);
  Stmt body = sched::ReplaceNode(root, nest_root, Allocate::Make(rf, SeqStmt::Make({rf_nest, final_nest})));
  SetBody(body);
  BlockRV out_rv = NewBlockRV(rf_name);
  Record({InstructionKind::kRFactor, {TraceArg::Ref(Name(loop_rv)), TraceArg::Int(factor_axis)}, {Name(out_rv)}});
  return out_rv;
}

Status Schedule::StorageAlign(BlockRV block_rv, int axis, int64_t factor, int64_t offset) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Block* block = sched::FindBlock(func_.body, name);
  const Store* store = sched::BlockStore(block);
  auto fail = [&](const std::string& why) { return Status::InvalidArgument("storage_align(" + name + "): " + why); };
  if (!store) return fail("the block's body is not a single store");
  const Buffer& buffer = store->buffer;
  int rank = int(buffer->shape.size());
  if (sched::IsParam(func_, buffer.get())) return fail(buffer->name + " is a function parameter; its layout is fixed");
  if (axis < 0 || axis >= rank - 1) return fail("axis " + std::to_string(axis) + " must be an outer dimension of " + buffer->name);
  if (factor <= 0 || offset < 0 || offset >= factor) return fail("need factor > 0 and 0 <= offset < factor");
  std::vector<int64_t> shape = buffer->shape;
  int64_t inner = 1;
  for (int d = axis + 1; d < rank - 1; ++d) inner *= shape[size_t(d)];
  int64_t pad = 0;
  while (((shape.back() + pad) * inner) % factor != offset) {
    if (++pad > factor) return fail("no padding of the innermost dimension gives that stride");
  }
  shape.back() += pad;
  Buffer padded = MakeBuffer(buffer->name, buffer->dtype, shape, buffer->scope);
  SetBody(sched::ReplaceBuffer(func_.body, buffer.get(), padded));
  Record({InstructionKind::kStorageAlign,
          {TraceArg::Ref(Name(block_rv)), TraceArg::Int(axis), TraceArg::Int(factor), TraceArg::Int(offset)}});
  return Status::OK();
}

Result<LoopRV> Schedule::SampleComputeLocation(BlockRV block_rv, std::optional<int64_t> decision) {
  TF_ASSIGN_OR_RETURN(std::string name, ResolveBlock(block_rv));
  const Stmt& root = func_.body;
  const Block* block = sched::FindBlock(root, name);
  const Store* store = sched::BlockStore(block);
  std::vector<const For*> candidates;
  if (store) {
    std::vector<const Block*> consumers;
    for (const Block* b : sched::BlocksUnder(root)) {
      if (b != block && !sched::BlockLoadsOf(b, store->buffer.get()).empty()) consumers.push_back(b);
    }
    if (!consumers.empty()) {
      candidates = sched::LoopsAbove(root, consumers[0]);
      for (const Block* c : consumers) {
        auto loops = sched::LoopsAbove(root, c);
        std::set<const For*> keep(loops.begin(), loops.end());
        std::erase_if(candidates, [&](const For* f) { return !keep.count(f); });
      }
      auto own = sched::LoopsAbove(root, block);
      std::erase_if(candidates, [&](const For* f) { return std::find(own.begin(), own.end(), f) != own.end(); });
    }
  }
  int64_t index;
  const std::vector<int64_t>* hint = decision ? nullptr : NextHint();
  if (decision) {
    index = *decision;
    if (index < -1 || index >= int64_t(candidates.size())) {
      return Status::InvalidArgument("sample_compute_location(" + name + "): decision " + std::to_string(index) +
                                     " is not -1 or an index into " + std::to_string(candidates.size()) + " candidate loops");
    }
  } else if (hint && hint->size() == 1 && (*hint)[0] >= -1 && (*hint)[0] < int64_t(candidates.size())) {
    index = (*hint)[0];
  } else {
    index = int64_t(rng_() % (candidates.size() + 1)) - 1;
  }
  LoopRV out = index < 0 ? NewLoopRV(Var()) : NewLoopRV(candidates[size_t(index)]->loop_var);
  Record({InstructionKind::kSampleComputeLocation, {TraceArg::Ref(Name(block_rv))}, {Name(out)}, {index}, true});
  return out;
}

}  // namespace tunefarm
