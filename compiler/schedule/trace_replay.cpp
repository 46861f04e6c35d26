// Trace::ApplyTo: replays instructions onto a Schedule, mapping the trace's
// handle names to the schedule's handles, and checking that every argument
// has the kind the instruction needs. A trace that does not fit the workload
// fails with the line of the instruction and the primitive's own message.
#include <map>

#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm {

class TraceReplayer {
 public:
  TraceReplayer(Schedule& sch, const Instruction& inst, size_t index, std::map<std::string, int>& env)
      : sch_(sch), inst_(inst), index_(index), env_(env) {}

  Status Apply(const std::vector<int64_t>* decision) {
    if (!inst_.kind) return Error("unknown instruction '" + inst_.name + "'");
    // One case per listed instruction and no default (-Werror=switch): an
    // instruction added to TF_TRACE_INSTRUCTIONS without a replay here does
    // not compile.
    switch (*inst_.kind) {
      case InstructionKind::kGetBlock: {
        TF_ASSIGN_OR_RETURN(std::string name, Str(0));
        TF_ASSIGN_OR_RETURN(BlockRV b, Wrap(sch_.GetBlock(name)));
        return Define({b.id});
      }
      case InstructionKind::kGetLoops: return GetLoops();
      case InstructionKind::kSplit: return Split();
      case InstructionKind::kReorder: {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, AllLoops());
        return Wrap(sch_.Reorder(loops));
      }
      case InstructionKind::kFuse: {
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, AllLoops());
        TF_ASSIGN_OR_RETURN(LoopRV fused, Wrap(sch_.Fuse(loops)));
        return Define({fused.id});
      }
      case InstructionKind::kParallel: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        return Wrap(sch_.Parallel(l));
      }
      case InstructionKind::kVectorize: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        return Wrap(sch_.Vectorize(l));
      }
      case InstructionKind::kUnroll: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        return Wrap(sch_.Unroll(l));
      }
      case InstructionKind::kBind: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        TF_ASSIGN_OR_RETURN(std::string tag, Str(1));
        return Wrap(sch_.Bind(l, tag));
      }
      case InstructionKind::kAnnotate: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        TF_ASSIGN_OR_RETURN(std::string key, Str(1));
        TF_ASSIGN_OR_RETURN(int64_t value, Int(2));
        return Wrap(sch_.Annotate(l, key, value));
      }
      case InstructionKind::kComputeAt: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(1));
        return Wrap(sch_.ComputeAt(b, l));
      }
      case InstructionKind::kReverseComputeAt: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(1));
        return Wrap(sch_.ReverseComputeAt(b, l));
      }
      case InstructionKind::kComputeInline: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        return Wrap(sch_.ComputeInline(b));
      }
      case InstructionKind::kReverseComputeInline: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        return Wrap(sch_.ReverseComputeInline(b));
      }
      case InstructionKind::kCacheRead: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t read_index, Int(1));
        TF_ASSIGN_OR_RETURN(ir::MemoryScope scope, Scope(2));
        TF_ASSIGN_OR_RETURN(BlockRV copy, Wrap(sch_.CacheRead(b, int(read_index), scope)));
        return Define({copy.id});
      }
      case InstructionKind::kCacheWrite: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(ir::MemoryScope scope, Scope(1));
        TF_ASSIGN_OR_RETURN(BlockRV copy, Wrap(sch_.CacheWrite(b, scope)));
        return Define({copy.id});
      }
      case InstructionKind::kPadInput: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t read_index, Int(1));
        TF_ASSIGN_OR_RETURN(BlockRV copy, Wrap(sch_.PadInput(b, int(read_index))));
        return Define({copy.id});
      }
      case InstructionKind::kPadAxis: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t axis, Int(1));
        TF_ASSIGN_OR_RETURN(int64_t multiple, Int(2));
        return Wrap(sch_.PadAxis(b, int(axis), multiple));
      }
      case InstructionKind::kSplitPhases: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t dim, Int(1));
        TF_ASSIGN_OR_RETURN(int64_t stride, Int(2));
        return Wrap(sch_.SplitPhases(b, int(dim), stride));
      }
      case InstructionKind::kPackLayout: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t dim, Int(1));
        TF_ASSIGN_OR_RETURN(int64_t factor, Int(2));
        TF_ASSIGN_OR_RETURN(int64_t outer, Int(3));
        return Wrap(sch_.PackLayout(b, int(dim), factor, int(outer)));
      }
      case InstructionKind::kStorageAlign: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        TF_ASSIGN_OR_RETURN(int64_t axis, Int(1));
        TF_ASSIGN_OR_RETURN(int64_t factor, Int(2));
        TF_ASSIGN_OR_RETURN(int64_t offset, Int(3));
        return Wrap(sch_.StorageAlign(b, int(axis), factor, offset));
      }
      case InstructionKind::kRFactor: {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
        TF_ASSIGN_OR_RETURN(int64_t axis, Int(1));
        TF_ASSIGN_OR_RETURN(BlockRV rf, Wrap(sch_.RFactor(l, int(axis))));
        return Define({rf.id});
      }
      case InstructionKind::kSampleComputeLocation: {
        TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
        std::optional<int64_t> d;
        if (decision && !decision->empty()) d = (*decision)[0];
        TF_ASSIGN_OR_RETURN(LoopRV l, Wrap(sch_.SampleComputeLocation(b, d)));
        return Define({l.id});
      }
      case InstructionKind::kSamplePerfectTile: return SamplePerfectTile(decision);
      case InstructionKind::kSampleCategorical: return SampleCategorical(decision);
    }
    return Error("unknown instruction '" + inst_.name + "'");  // not reached: every kind has a case
  }

 private:
  Status GetLoops() {
    TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, Wrap(sch_.GetLoops(b)));
    if (loops.size() != inst_.outputs.size()) {
      return Error("the block has " + std::to_string(loops.size()) + " loops here, the trace expects " +
                   std::to_string(inst_.outputs.size()));
    }
    std::vector<int> ids;
    for (LoopRV l : loops) ids.push_back(l.id);
    return Define(ids);
  }
  Status Split() {
    TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
    TF_RETURN_IF_ERROR(Arity(2));
    if (inst_.args[1].kind != TraceArg::Kind::kList) return Error("split takes a list of factors");
    std::vector<Factor> factors;
    for (const TraceArg& a : inst_.args[1].list) {
      if (a.kind == TraceArg::Kind::kInt) {
        factors.emplace_back(a.value);
      } else if (a.kind == TraceArg::Kind::kRef && a.ref[0] == 'v') {
        TF_ASSIGN_OR_RETURN(int id, Lookup(a.ref));
        factors.emplace_back(ValueRV{id});
      } else {
        return Error("a split factor is an integer or a sampled value v<N>");
      }
    }
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, Wrap(sch_.Split(l, factors)));
    std::vector<int> ids;
    for (LoopRV x : loops) ids.push_back(x.id);
    return Define(ids);
  }
  Status SamplePerfectTile(const std::vector<int64_t>* decision) {
    TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
    TF_ASSIGN_OR_RETURN(int64_t parts, Int(1));
    TF_ASSIGN_OR_RETURN(int64_t max_innermost, Int(2));
    int64_t min_innermost = 1;  // an optional fourth argument
    if (inst_.args.size() > 3) {
      TF_ASSIGN_OR_RETURN(min_innermost, Int(3));
    }
    std::optional<std::vector<int64_t>> d;
    if (decision && !decision->empty()) d = *decision;
    TF_ASSIGN_OR_RETURN(std::vector<ValueRV> values,
                        Wrap(sch_.SamplePerfectTile(l, int(parts), max_innermost, d, min_innermost)));
    std::vector<int> ids;
    for (ValueRV v : values) ids.push_back(v.id);
    return Define(ids);
  }
  Status SampleCategorical(const std::vector<int64_t>* decision) {
    TF_RETURN_IF_ERROR(Arity(2));
    if (inst_.args[0].kind != TraceArg::Kind::kList || inst_.args[1].kind != TraceArg::Kind::kList) {
      return Error("sample_categorical takes a list of candidates and a list of probabilities");
    }
    std::vector<int64_t> candidates;
    std::vector<double> probs;
    for (const TraceArg& a : inst_.args[0].list) candidates.push_back(a.value);
    for (const TraceArg& a : inst_.args[1].list) probs.push_back(double(a.value) / 1e6);
    std::optional<int64_t> d;
    if (decision && !decision->empty()) d = (*decision)[0];
    TF_ASSIGN_OR_RETURN(ValueRV v, Wrap(sch_.SampleCategorical(candidates, probs, d)));
    return Define({v.id});
  }

  // Every argument a loop (reorder, fuse).
  Result<std::vector<LoopRV>> AllLoops() const {
    std::vector<LoopRV> loops;
    for (size_t i = 0; i < inst_.args.size(); ++i) {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(i));
      loops.push_back(l);
    }
    return loops;
  }
  Result<ir::MemoryScope> Scope(size_t i) const {
    TF_ASSIGN_OR_RETURN(std::string scope_name, Str(i));
    if (scope_name == "global") return ir::MemoryScope::kGlobal;
    if (scope_name == "shared") return ir::MemoryScope::kShared;
    if (scope_name == "local") return ir::MemoryScope::kLocal;
    return Error("unknown memory scope '" + scope_name + "' (global, shared or local)");
  }

  Status Error(const std::string& what) const {
    // Parsed traces know their lines; in-memory ones count from the header.
    int line = inst_.source_line > 0 ? inst_.source_line : int(index_) + 2;
    return Status::InvalidArgument("trace line " + std::to_string(line) + " (" + inst_.name + "): " + what);
  }
  template <typename T>
  Result<T> Wrap(Result<T> r) const {
    if (r.ok()) return r;
    return Error(r.status().message());
  }
  Status Wrap(Status s) const { return s.ok() ? s : Error(s.message()); }

  Status Arity(size_t n) const {
    if (inst_.args.size() < n) return Error("expects " + std::to_string(n) + " arguments");
    return Status::OK();
  }
  Result<int> Lookup(const std::string& ref) const {
    auto it = env_.find(ref);
    if (it == env_.end()) return Error("'" + ref + "' is used before it is defined");
    return it->second;
  }
  Result<LoopRV> Loop(size_t i) const {
    TF_RETURN_IF_ERROR(Arity(i + 1));
    const TraceArg& a = inst_.args[i];
    if (a.kind != TraceArg::Kind::kRef || a.ref[0] != 'l') return Error("argument " + std::to_string(i + 1) + " must be a loop l<N>");
    TF_ASSIGN_OR_RETURN(int id, Lookup(a.ref));
    return LoopRV{id};
  }
  Result<BlockRV> Block(size_t i) const {
    TF_RETURN_IF_ERROR(Arity(i + 1));
    const TraceArg& a = inst_.args[i];
    if (a.kind != TraceArg::Kind::kRef || a.ref[0] != 'b') return Error("argument " + std::to_string(i + 1) + " must be a block b<N>");
    TF_ASSIGN_OR_RETURN(int id, Lookup(a.ref));
    return BlockRV{id};
  }
  Result<int64_t> Int(size_t i) const {
    TF_RETURN_IF_ERROR(Arity(i + 1));
    if (inst_.args[i].kind != TraceArg::Kind::kInt) return Error("argument " + std::to_string(i + 1) + " must be an integer");
    return inst_.args[i].value;
  }
  Result<std::string> Str(size_t i) const {
    TF_RETURN_IF_ERROR(Arity(i + 1));
    if (inst_.args[i].kind != TraceArg::Kind::kString) return Error("argument " + std::to_string(i + 1) + " must be a string");
    return inst_.args[i].ref;
  }
  Status Define(const std::vector<int>& ids) {
    if (ids.size() != inst_.outputs.size()) {
      return Error("defines " + std::to_string(ids.size()) + " values, the trace names " + std::to_string(inst_.outputs.size()));
    }
    for (size_t i = 0; i < ids.size(); ++i) env_[inst_.outputs[i]] = ids[i];
    return Status::OK();
  }

  Schedule& sch_;
  const Instruction& inst_;
  size_t index_;
  std::map<std::string, int>& env_;
};

Status Trace::ApplyTo(Schedule& sch, const std::map<size_t, std::vector<int64_t>>& decisions) const {
  std::map<std::string, int> env;
  for (size_t i = 0; i < instructions_.size(); ++i) {
    const Instruction& inst = instructions_[i];
    const std::vector<int64_t>* decision = nullptr;
    if (auto it = decisions.find(i); it != decisions.end()) {
      decision = &it->second;
    } else if (inst.has_decision) {
      decision = &inst.decision;
    }
    TF_RETURN_IF_ERROR(TraceReplayer(sch, inst, i, env).Apply(decision));
  }
  return Status::OK();
}

}  // namespace tunefarm
