// LowerToPrimFunc (workload -> default loop nest) and LowerForCodegen, the
// table of contents of the passes every code generator input goes through.
#include "tunefarm/compiler/lower/lower.h"

#include <set>

#include "tunefarm/compiler/lower/decompose_strided_gather.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/lower/lower_blocks.h"
#include "tunefarm/compiler/lower/promote_accumulators.h"
#include "tunefarm/compiler/ir/simplify.h"
#include "tunefarm/compiler/lower/unroll_loops.h"

namespace tunefarm {

using namespace ir;

namespace {

Expr ReductionIdentity(ReduceKind kind, DataType t) {
  switch (kind) {
    case ReduceKind::kSum: return MakeConst(t, 0);
    case ReduceKind::kProd: return MakeConst(t, 1);
    case ReduceKind::kMax: return MinValue(t);
    case ReduceKind::kMin: return MaxValue(t);
    case ReduceKind::kNone: break;
  }
  return Expr();
}

Expr Combine(ReduceKind kind, const Expr& acc, const Expr& term) {
  switch (kind) {
    case ReduceKind::kSum: return Add::Make(acc, term);
    case ReduceKind::kProd: return Mul::Make(acc, term);
    case ReduceKind::kMax: return Max::Make(acc, term);
    case ReduceKind::kMin: return Min::Make(acc, term);
    case ReduceKind::kNone: break;
  }
  return term;
}

// One loop nest: spatial loops, then reduction loops, around one block.
Stmt LowerStage(const ComputeStage& stage) {
  std::vector<IterVar> iter_vars;
  std::vector<Var> loop_vars;
  std::vector<int64_t> extents;
  std::map<const Variable*, Expr> to_block_var;
  std::vector<Expr> out_indices;

  auto add_axis = [&](const Var& axis, int64_t extent, IterKind kind) {
    Var loop(axis.name(), DataType::Index());
    Var block_var("v" + axis.name(), DataType::Index());
    iter_vars.push_back(IterVar{block_var, extent, kind, loop});
    loop_vars.push_back(loop);
    extents.push_back(extent);
    to_block_var[axis.get()] = block_var;
    if (kind == IterKind::kSpatial) out_indices.push_back(block_var);
  };
  for (size_t d = 0; d < stage.axes.size(); ++d) add_axis(stage.axes[d], stage.output->shape[d], IterKind::kSpatial);
  for (size_t r = 0; r < stage.reduce_axes.size(); ++r) {
    add_axis(stage.reduce_axes[r], stage.reduce_extents[r], IterKind::kReduce);
  }

  Expr value = Substitute(stage.body, to_block_var);
  Stmt init, body;
  if (stage.reduce == ReduceKind::kNone) {
    body = Store::Make(stage.output, value, out_indices);
  } else {
    DataType t = stage.output->dtype;
    init = Store::Make(stage.output, ReductionIdentity(stage.reduce, t), out_indices);
    body = Store::Make(stage.output, Combine(stage.reduce, Load::Make(stage.output, out_indices), value), out_indices);
  }
  Stmt nest = Block::Make(stage.output->name, std::move(iter_vars), init, body);
  for (size_t i = loop_vars.size(); i-- > 0;) {
    nest = For::Make(loop_vars[i], Expr(int64_t(0)), Expr(extents[i]), ForKind::kSerial, nest);
  }
  return nest;
}

}  // namespace

Result<PrimFunc> LowerToPrimFunc(const Workload& w, const LowerOptions& options) {
  TF_RETURN_IF_ERROR(w.Validate());
  PrimFunc f;
  f.name = w.name;
  f.params = w.inputs;
  f.num_inputs = w.inputs.size();
  std::set<const BufferNode*> outputs;
  for (const Buffer& b : w.outputs) {
    f.params.push_back(b);
    outputs.insert(b.get());
  }
  std::vector<Stmt> nests;
  // A strided gather (transposed convolution) visits only its contributing taps.
  for (const ComputeStage& stage : w.stages) {
    nests.push_back(LowerStage(options.decompose_strided_gathers ? DecomposeStridedGathers(stage) : stage));
  }
  Stmt body = SeqStmt::Make(std::move(nests));
  // Intermediate stages live for the whole function, innermost-declared last.
  for (auto it = w.stages.rbegin(); it != w.stages.rend(); ++it) {
    if (!outputs.count(it->output.get())) body = Allocate::Make(it->output, body);
  }
  f.body = body;
  return f;
}

Result<PrimFunc> LowerForCodegen(const PrimFunc& f) {
  PrimFunc out = f;
  out.body = LowerBlocks(out.body);
  out.body = UnrollLoops(out.body);
  out.body = Simplify(out.body);
  out.body = PromoteAccumulators(out.body);
  return out;
}

}  // namespace tunefarm
