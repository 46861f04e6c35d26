// Trace::ApplyTo: replays instructions onto a Schedule, mapping the trace's
// handle names to the schedule's handles, and checking that every argument
// has the kind the instruction needs. A trace that does not fit the workload
// fails with the line of the instruction and the primitive's own message.
#include <map>

#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm {

const std::vector<std::string>& ReplayedInstructionNames() {
  // Every name TraceReplayer::Apply dispatches on (a test replays each).
  static const std::vector<std::string> kNames = {
      "get_block",     "get_loops",       "split",         "reorder",     "fuse",
      "parallel",      "vectorize",       "unroll",        "bind",        "annotate",
      "compute_at",    "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
      "cache_write",   "pad_input",       "pack_layout",   "storage_align", "rfactor",
      "sample_compute_location", "sample_perfect_tile", "sample_categorical"};
  return kNames;
}

class TraceReplayer {
 public:
  TraceReplayer(Schedule& sch, const Instruction& inst, size_t index, std::map<std::string, int>& env)
      : sch_(sch), inst_(inst), index_(index), env_(env) {}

  Status Apply(const std::vector<int64_t>* decision) {
    const std::string& n = inst_.name;
    if (n == "get_block") {
      TF_ASSIGN_OR_RETURN(std::string name, Str(0));
      TF_ASSIGN_OR_RETURN(BlockRV b, Wrap(sch_.GetBlock(name)));
      return Define({b.id});
    }
    if (n == "get_loops") {
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
    if (n == "split") {
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
    if (n == "reorder" || n == "fuse") {
      std::vector<LoopRV> loops;
      for (size_t i = 0; i < inst_.args.size(); ++i) {
        TF_ASSIGN_OR_RETURN(LoopRV l, Loop(i));
        loops.push_back(l);
      }
      if (n == "reorder") return Wrap(sch_.Reorder(loops));
      TF_ASSIGN_OR_RETURN(LoopRV fused, Wrap(sch_.Fuse(loops)));
      return Define({fused.id});
    }
    if (n == "parallel" || n == "vectorize" || n == "unroll") {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
      if (n == "parallel") return Wrap(sch_.Parallel(l));
      if (n == "vectorize") return Wrap(sch_.Vectorize(l));
      return Wrap(sch_.Unroll(l));
    }
    if (n == "bind") {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
      TF_ASSIGN_OR_RETURN(std::string tag, Str(1));
      return Wrap(sch_.Bind(l, tag));
    }
    if (n == "annotate") {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
      TF_ASSIGN_OR_RETURN(std::string key, Str(1));
      TF_ASSIGN_OR_RETURN(int64_t value, Int(2));
      return Wrap(sch_.Annotate(l, key, value));
    }
    if (n == "compute_at" || n == "reverse_compute_at") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(1));
      return Wrap(n == "compute_at" ? sch_.ComputeAt(b, l) : sch_.ReverseComputeAt(b, l));
    }
    if (n == "compute_inline" || n == "reverse_compute_inline") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      return Wrap(n == "compute_inline" ? sch_.ComputeInline(b) : sch_.ReverseComputeInline(b));
    }
    if (n == "cache_read" || n == "cache_write") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      int64_t read_index = 0;
      size_t scope_arg = 1;
      if (n == "cache_read") {
        TF_ASSIGN_OR_RETURN(read_index, Int(1));
        scope_arg = 2;
      }
      TF_ASSIGN_OR_RETURN(std::string scope_name, Str(scope_arg));
      ir::MemoryScope scope;
      if (scope_name == "global") scope = ir::MemoryScope::kGlobal;
      else if (scope_name == "shared") scope = ir::MemoryScope::kShared;
      else if (scope_name == "local") scope = ir::MemoryScope::kLocal;
      else return Error("unknown memory scope '" + scope_name + "' (global, shared or local)");
      Result<BlockRV> out = n == "cache_read" ? sch_.CacheRead(b, int(read_index), scope) : sch_.CacheWrite(b, scope);
      TF_ASSIGN_OR_RETURN(BlockRV copy, Wrap(std::move(out)));
      return Define({copy.id});
    }
    if (n == "pad_input") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      TF_ASSIGN_OR_RETURN(int64_t read_index, Int(1));
      TF_ASSIGN_OR_RETURN(BlockRV copy, Wrap(sch_.PadInput(b, int(read_index))));
      return Define({copy.id});
    }
    if (n == "pack_layout") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      TF_ASSIGN_OR_RETURN(int64_t dim, Int(1));
      TF_ASSIGN_OR_RETURN(int64_t factor, Int(2));
      TF_ASSIGN_OR_RETURN(int64_t outer, Int(3));
      return Wrap(sch_.PackLayout(b, int(dim), factor, int(outer)));
    }
    if (n == "storage_align") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      TF_ASSIGN_OR_RETURN(int64_t axis, Int(1));
      TF_ASSIGN_OR_RETURN(int64_t factor, Int(2));
      TF_ASSIGN_OR_RETURN(int64_t offset, Int(3));
      return Wrap(sch_.StorageAlign(b, int(axis), factor, offset));
    }
    if (n == "rfactor") {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
      TF_ASSIGN_OR_RETURN(int64_t axis, Int(1));
      TF_ASSIGN_OR_RETURN(BlockRV rf, Wrap(sch_.RFactor(l, int(axis))));
      return Define({rf.id});
    }
    if (n == "sample_compute_location") {
      TF_ASSIGN_OR_RETURN(BlockRV b, Block(0));
      std::optional<int64_t> d;
      if (decision && !decision->empty()) d = (*decision)[0];
      TF_ASSIGN_OR_RETURN(LoopRV l, Wrap(sch_.SampleComputeLocation(b, d)));
      return Define({l.id});
    }
    if (n == "sample_perfect_tile") {
      TF_ASSIGN_OR_RETURN(LoopRV l, Loop(0));
      TF_ASSIGN_OR_RETURN(int64_t parts, Int(1));
      TF_ASSIGN_OR_RETURN(int64_t max_innermost, Int(2));
      std::optional<std::vector<int64_t>> d;
      if (decision && !decision->empty()) d = *decision;
      TF_ASSIGN_OR_RETURN(std::vector<ValueRV> values, Wrap(sch_.SamplePerfectTile(l, int(parts), max_innermost, d)));
      std::vector<int> ids;
      for (ValueRV v : values) ids.push_back(v.id);
      return Define(ids);
    }
    if (n == "sample_categorical") {
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
    return Error("unknown instruction '" + n + "'");
  }

 private:
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
