// CudaKernelEmitter: statements -- thread bindings, loops, allocations,
// stores, branches and barriers.
#include <algorithm>
#include <cstdint>

#include "codegen_cuda_internal.h"

namespace tunefarm::cuda::detail {

using namespace ir;

namespace {

bool IsLaunchTag(const std::string& tag) {
  return tag == "blockIdx.x" || tag == "blockIdx.y" || tag == "blockIdx.z" || tag == "threadIdx.x" ||
         tag == "threadIdx.y" || tag == "threadIdx.z";
}

// "the loop 'i_1' (bound to threadIdx.x)"
std::string LoopText(const For* op) {
  std::string s = "loop '" + op->loop_var.name() + "'";
  if (op->kind == ForKind::kThreadBinding) s += " (bound to " + op->thread_tag + ")";
  return s;
}

}  // namespace

void CudaKernelEmitter::Line(const std::string& text) {
  out_ << std::string(size_t(indent_) * 2, ' ') << text << '\n';
}

void CudaKernelEmitter::Run(const Stmt& root) {
  for (const char* tag : {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
    extents_[tag] = 1;
  }
  std::map<std::string, int64_t> enclosing;
  ScanBindings(root, enclosing);
  if (!status_.ok()) return;
  EmitStmt(root);
}

// Launch extents: the widest binding of each tag that no enclosing loop binds;
// a nested binding of a bound tag must fit in the enclosing one.
void CudaKernelEmitter::ScanBindings(const Stmt& s, std::map<std::string, int64_t>& enclosing) {
  if (!s.defined() || !status_.ok()) return;
  switch (s.kind()) {
    case IRNodeKind::kFor: {
      const auto* op = s.as<For>();
      if (op->kind != ForKind::kThreadBinding || op->thread_tag == "vthread") {
        if (op->kind == ForKind::kThreadBinding && !AsConstInt(op->extent)) {
          return Fail(Status::InvalidArgument("cuda codegen: " + LoopText(op) + " has a non-constant extent"));
        }
        return ScanBindings(op->body, enclosing);
      }
      if (!IsLaunchTag(op->thread_tag)) {
        return Fail(Status::InvalidArgument("cuda codegen: " + LoopText(op) + ": unknown thread tag"));
      }
      const int64_t* ext = AsConstInt(op->extent);
      if (!ext || *ext < 1) {
        return Fail(Status::InvalidArgument("cuda codegen: " + LoopText(op) +
                                            " needs a constant, positive extent (grid and block extents are fixed)"));
      }
      auto it = enclosing.find(op->thread_tag);
      if (it != enclosing.end()) {
        if (*ext > it->second) {
          return Fail(Status::InvalidArgument("cuda codegen: " + LoopText(op) + " has extent " + std::to_string(*ext) +
                                              ", wider than the enclosing binding of " + op->thread_tag + " (" +
                                              std::to_string(it->second) + ")"));
        }
        return ScanBindings(op->body, enclosing);
      }
      extents_[op->thread_tag] = std::max(extents_[op->thread_tag], *ext);
      enclosing[op->thread_tag] = *ext;
      ScanBindings(op->body, enclosing);
      enclosing.erase(op->thread_tag);
      return;
    }
    case IRNodeKind::kAllocate: return ScanBindings(s.as<Allocate>()->body, enclosing);
    case IRNodeKind::kLetStmt: return ScanBindings(s.as<LetStmt>()->body, enclosing);
    case IRNodeKind::kIfThenElse:
      ScanBindings(s.as<IfThenElse>()->then_case, enclosing);
      return ScanBindings(s.as<IfThenElse>()->else_case, enclosing);
    case IRNodeKind::kSeqStmt:
      for (const Stmt& item : s.as<SeqStmt>()->seq) ScanBindings(item, enclosing);
      return;
    case IRNodeKind::kStore:
    case IRNodeKind::kBlock:
    case IRNodeKind::kEvaluate:
    case IRNodeKind::kBarrier: return;
    TF_EXPR_KIND_CASES return;
  }
}

std::string CudaKernelEmitter::DeclareVar(const Var& v, std::optional<Interval> range) {
  if (range) ranges_[v.get()] = *range;
  bool is_int = v.dtype() == DataType::Index() && range && range->min >= INT32_MIN && range->max <= INT32_MAX;
  if (v.dtype() == DataType::Index()) var_is_int_[v.get()] = is_int;
  return names_->NameOf(v.get(), v.name());
}

void CudaKernelEmitter::EmitStmt(const Stmt& s) {
  if (!s.defined() || !status_.ok()) return;
  switch (s.kind()) {
    case IRNodeKind::kFor: return EmitFor(s.as<For>());
    case IRNodeKind::kStore: return EmitStore(s.as<Store>());
    case IRNodeKind::kAllocate: return EmitAllocate(s.as<Allocate>());
    case IRNodeKind::kLetStmt: {
      const auto* op = s.as<LetStmt>();
      std::string value = EmitExpr(op->value);
      std::string name = DeclareVar(op->var, BoundOf(op->value, ranges_));
      std::string type = op->var.dtype() == DataType::Index() && var_is_int_[op->var.get()] ? "int" : ValueCType(op->var.dtype());
      if (type.empty()) return Fail(Status::Unimplemented("cuda codegen: let of type " + op->var.dtype().ToString()));
      Line("{");
      ++indent_;
      Line("const " + type + " " + name + " = " + value + ";");
      EmitStmt(op->body);
      --indent_;
      Line("}");
      return;
    }
    case IRNodeKind::kIfThenElse: {
      const auto* op = s.as<IfThenElse>();
      Line("if (" + EmitExpr(op->condition) + ") {");
      ++indent_;
      EmitStmt(op->then_case);
      --indent_;
      if (op->else_case.defined()) {
        Line("} else {");
        ++indent_;
        EmitStmt(op->else_case);
        --indent_;
      }
      Line("}");
      return;
    }
    case IRNodeKind::kSeqStmt:
      for (const Stmt& item : s.as<SeqStmt>()->seq) EmitStmt(item);
      return;
    case IRNodeKind::kEvaluate: Line("(void)" + EmitExpr(s.as<Evaluate>()->value) + ";"); return;
    case IRNodeKind::kBarrier: Line("__syncthreads();"); return;
    case IRNodeKind::kBlock:
      return Fail(Status::Internal("cuda codegen: Block '" + s.as<Block>()->name +
                                   "' reached code generation; LowerForCuda must remove blocks first"));
    TF_EXPR_KIND_CASES
      return Fail(Status::Internal(std::string("cuda codegen: unexpected statement node ") + IRNodeKindName(s.kind())));
  }
}

void CudaKernelEmitter::EmitFor(const For* op) {
  if (op->kind == ForKind::kThreadBinding && op->thread_tag != "vthread") return EmitBoundLoop(op);
  const int64_t* cmin = AsConstInt(op->min);
  const int64_t* cext = AsConstInt(op->extent);
  std::optional<Interval> range;
  if (cmin && cext) {
    range = Interval{*cmin, *cmin + *cext - 1};
  } else if (auto lo = BoundOf(op->min, ranges_), n = BoundOf(op->extent, ranges_); lo && n) {
    range = Interval{lo->min, lo->max + n->max - 1};
  }
  if (op->kind == ForKind::kVectorized && cext && cmin && *cmin == 0 && (*cext == 2 || *cext == 4)) {
    DeclareVar(op->loop_var, range);
    if (TryEmitVectorLoop(op)) return;
  }
  std::string begin = EmitIndex(op->min);
  std::string end = EmitIndex(Simplify(op->min + op->extent, ranges_));
  std::string name = DeclareVar(op->loop_var, range);
  std::string type = var_is_int_[op->loop_var.get()] ? "int" : "long long";
  bool unroll = op->kind == ForKind::kUnrolled || op->kind == ForKind::kVectorized ||
                op->kind == ForKind::kThreadBinding;  // vthread: each thread runs the virtual threads in turn
  if (auto it = op->annotations.find("pragma_auto_unroll_max_step"); it != op->annotations.end()) {
    unroll = unroll || (cext && *cext <= it->second);
  }
  if (unroll) Line("#pragma unroll");
  Line("for (" + type + " " + name + " = " + begin + "; " + name + " < " + end + "; ++" + name + ") {");
  ++indent_;
  EmitStmt(op->body);
  --indent_;
  Line("}");
}

void CudaKernelEmitter::EmitBoundLoop(const For* op) {
  const std::string& tag = op->thread_tag;
  int64_t ext = *AsConstInt(op->extent);  // ScanBindings checked
  const int64_t* cmin = AsConstInt(op->min);
  std::optional<Interval> range;
  if (cmin) range = Interval{*cmin, *cmin + ext - 1};
  std::string name = DeclareVar(op->loop_var, range);
  std::string builtin = tag.substr(0, tag.size() - 2) + "." + tag.back();  // "threadIdx.x"
  std::string value = "(int)" + builtin;
  if (!cmin || *cmin != 0) value += " + " + EmitExpr(op->min);
  bool is_thread = tag.rfind("threadIdx", 0) == 0;
  Line("{");
  ++indent_;
  Line("const " + std::string(var_is_int_[op->loop_var.get()] ? "int" : "long long") + " " + name + " = " + value +
       ";");
  bool guard = ext < extents_.at(tag);
  if (guard) {
    Line("if (" + builtin + " < " + std::to_string(ext) + ") {");
    ++indent_;
  }
  thread_loops_ += is_thread ? 1 : 0;
  EmitStmt(op->body);
  thread_loops_ -= is_thread ? 1 : 0;
  if (guard) {
    --indent_;
    Line("}");
  }
  --indent_;
  Line("}");
}

void CudaKernelEmitter::EmitAllocate(const Allocate* op) {
  const Buffer& b = op->buffer;
  std::string type = CType(b->dtype);
  if (type.empty()) {
    return Fail(Status::Unimplemented("cuda codegen: buffer '" + b->name + "' has element type " +
                                      b->dtype.ToString() + ", which the CUDA code generator does not support"));
  }
  std::string name = BufferName(b);
  std::string count = std::to_string(std::max<int64_t>(b->num_elements(), 1));
  on_chip_.insert(b.get());
  if (b->scope == MemoryScope::kShared) {
    // One array per block for the whole kernel, wherever the Allocate sits.
    shared_arrays_.push_back({type, name, std::max<int64_t>(b->num_elements(), 1), shared_bytes_});
    shared_bytes_ += (std::max<int64_t>(b->size_bytes(), 1) + 15) / 16 * 16;
    return EmitStmt(op->body);
  }
  if (b->scope == MemoryScope::kGlobal && thread_loops_ == 0) {
    return Fail(Status::InvalidArgument(
        "cuda codegen: buffer '" + b->name +
        "' is allocated in global scope inside a kernel but outside its threadIdx loops: give it shared scope "
        "(cache_read / cache_write to shared) or allocate it at the root"));
  }
  // Local scope (or a global buffer private to one thread): a per-thread array,
  // in registers where the indices are constant after unrolling.
  Line("{");
  ++indent_;
  Line(type + " " + name + "[" + count + "];");
  EmitStmt(op->body);
  --indent_;
  Line("}");
}

void CudaKernelEmitter::EmitStore(const Store* op) {
  const Buffer& b = op->buffer;
  if (CType(b->dtype).empty()) {
    return Fail(Status::Unimplemented("cuda codegen: buffer '" + b->name + "' has element type " +
                                      b->dtype.ToString() + ", which the CUDA code generator does not support"));
  }
  if (!on_chip_.count(b.get())) writes_.insert(b.get());
  std::string value = StoreValue(b, op->value.dtype(), EmitExpr(op->value));
  Line(BufferName(b) + "[" + EmitIndex(FlatIndex(b, op->indices)) + "] = " + value + ";");
}

}  // namespace tunefarm::cuda::detail
