#include "tunefarm/compiler/lower/verify_gpu.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm {

using namespace ir;

namespace {

bool IsBlockTag(const std::string& tag) { return tag.rfind("blockIdx.", 0) == 0; }
bool IsThreadTag(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }
bool IsLaunchTag(const std::string& tag) {
  static const std::set<std::string> kTags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                              "threadIdx.x", "threadIdx.y", "threadIdx.z"};
  return kTags.count(tag) > 0;
}
bool IsBound(const For* f) { return f->kind == ForKind::kThreadBinding; }

std::string LoopName(const For* f) {
  return "loop " + f->loop_var.name() + (IsBound(f) ? " (" + f->thread_tag + ")" : "");
}

// Launch extents of a kernel: the widest binding of each tag that no
// enclosing loop binds (codegen_cuda's ScanBindings); vthread is no launch tag.
void LaunchExtents(const StmtNode* node, std::set<std::string> enclosing, std::map<std::string, int64_t>& out) {
  if (!node) return;
  switch (node->kind) {
    case IRNodeKind::kFor: {
      const auto* f = static_cast<const For*>(node);
      const int64_t* e = AsConstInt(f->extent);
      if (IsBound(f) && IsLaunchTag(f->thread_tag) && e && !enclosing.count(f->thread_tag)) {
        out[f->thread_tag] = std::max(out[f->thread_tag], *e);
        enclosing.insert(f->thread_tag);
      }
      return LaunchExtents(f->body.get(), std::move(enclosing), out);
    }
    case IRNodeKind::kAllocate: return LaunchExtents(static_cast<const Allocate*>(node)->body.get(), enclosing, out);
    case IRNodeKind::kLetStmt: return LaunchExtents(static_cast<const LetStmt*>(node)->body.get(), enclosing, out);
    case IRNodeKind::kIfThenElse: {
      const auto* op = static_cast<const IfThenElse*>(node);
      LaunchExtents(op->then_case.get(), enclosing, out);
      return LaunchExtents(op->else_case.get(), enclosing, out);
    }
    case IRNodeKind::kSeqStmt:
      for (const Stmt& item : static_cast<const SeqStmt*>(node)->seq) LaunchExtents(item.get(), enclosing, out);
      return;
    case IRNodeKind::kBlock: {
      const auto* op = static_cast<const Block*>(node);
      LaunchExtents(op->init.get(), enclosing, out);
      return LaunchExtents(op->body.get(), enclosing, out);
    }
    case IRNodeKind::kStore:
    case IRNodeKind::kEvaluate:
    case IRNodeKind::kBarrier: return;
    TF_EXPR_KIND_CASES return;
  }
}

// Where a statement sits: its kernel and the loops, allocations and branches around it.
struct Scope {
  const For* kernel = nullptr;          // the root loop of the enclosing kernel
  std::map<std::string, int64_t> bound;  // tag -> extent of the nearest enclosing binding
  bool under_thread = false;             // some threadIdx loop encloses it
  std::string divergence;                // why some threads may not get here; "" when all do
};

struct AllocInfo {
  const For* kernel;  // null for a global buffer allocated outside every kernel
  bool under_thread;
};

class GpuVerifier {
 public:
  explicit GpuVerifier(const GpuLimits& limits) : limits_(limits) {}

  Status Check(const Stmt& s, Scope scope) {
    if (!s.defined()) return Status::OK();
    switch (s.kind()) {
      case IRNodeKind::kFor: return CheckFor(s.as<For>(), std::move(scope));
      case IRNodeKind::kStore: {
        const auto* op = s.as<Store>();
        if (!scope.kernel) return Fail("the store to " + op->buffer->name + " is outside any kernel");
        TF_RETURN_IF_ERROR(CheckUse(op->buffer.get(), scope, /*write=*/true));
        TF_RETURN_IF_ERROR(CheckExpr(op->value, scope));
        for (const Expr& i : op->indices) TF_RETURN_IF_ERROR(CheckExpr(i, scope));
        return Status::OK();
      }
      case IRNodeKind::kAllocate: return CheckAllocate(s.as<Allocate>(), std::move(scope));
      case IRNodeKind::kLetStmt: {
        const auto* op = s.as<LetStmt>();
        TF_RETURN_IF_ERROR(CheckExpr(op->value, scope));
        if (ThreadDependent(op->value)) thread_dependent_.insert(op->var.get());
        return Check(op->body, std::move(scope));
      }
      case IRNodeKind::kIfThenElse: {
        const auto* op = s.as<IfThenElse>();
        if (!scope.kernel) return Fail("a branch on " + ToString(op->condition) + " is outside any kernel");
        TF_RETURN_IF_ERROR(CheckExpr(op->condition, scope));
        if (scope.divergence.empty() && ThreadDependent(op->condition)) {
          scope.divergence = "the branch on " + ToString(op->condition) + " depends on a threadIdx variable";
        }
        TF_RETURN_IF_ERROR(Check(op->then_case, scope));
        return Check(op->else_case, std::move(scope));
      }
      case IRNodeKind::kSeqStmt:
        for (const Stmt& item : s.as<SeqStmt>()->seq) TF_RETURN_IF_ERROR(Check(item, scope));
        return Status::OK();
      case IRNodeKind::kBlock: {
        const auto* op = s.as<Block>();
        if (!scope.kernel) return Fail("block " + op->name + " is outside any kernel");
        if (op->predicate.defined()) {
          TF_RETURN_IF_ERROR(CheckExpr(op->predicate, scope));
          if (scope.divergence.empty() && ThreadDependent(op->predicate)) {
            scope.divergence = "the predicate of block " + op->name + " depends on a threadIdx variable";
          }
        }
        for (const IterVar& iv : op->iter_vars) {
          if (ThreadDependent(iv.binding)) thread_dependent_.insert(iv.var.get());
        }
        TF_RETURN_IF_ERROR(Check(op->init, scope));
        return Check(op->body, std::move(scope));
      }
      case IRNodeKind::kEvaluate: return CheckExpr(s.as<Evaluate>()->value, scope);
      case IRNodeKind::kBarrier:
        if (!scope.kernel) return Fail("a barrier is outside any kernel");
        if (!scope.divergence.empty()) {
          return Fail("a barrier in the kernel at " + LoopName(scope.kernel) + " is not reached by every thread: " +
                      scope.divergence);
        }
        return Status::OK();
      TF_EXPR_KIND_CASES return Status::Internal("verify_gpu: an expression where a statement belongs");
    }
    return Status::OK();
  }

 private:
  static Status Fail(const std::string& what) { return Status::InvalidArgument("gpu: " + what); }

  bool ThreadDependent(const Expr& e) const {
    bool dependent = false;
    PostOrderVisit(Evaluate::Make(e), [&](const IRNode* n) {
      if (n->kind == IRNodeKind::kVariable) dependent |= thread_dependent_.count(static_cast<const Variable*>(n)) > 0;
    });
    return dependent;
  }

  Status CheckExpr(const Expr& e, const Scope& scope) {
    if (!e.defined()) return Status::OK();
    std::vector<const BufferNode*> loaded;
    PostOrderVisit(Evaluate::Make(e), [&](const IRNode* n) {
      if (n->kind == IRNodeKind::kLoad) loaded.push_back(static_cast<const Load*>(n)->buffer.get());
    });
    for (const BufferNode* b : loaded) TF_RETURN_IF_ERROR(CheckUse(b, scope, /*write=*/false));
    return Status::OK();
  }

  // A shared or local buffer is used only inside the kernel that allocates it
  // (and under its Allocate); a local one allocated outside the threadIdx
  // loops is not written inside them.
  Status CheckUse(const BufferNode* b, const Scope& scope, bool write) {
    if (b->scope == MemoryScope::kGlobal) return Status::OK();
    const std::string what = std::string(MemoryScopeName(b->scope)) + " buffer " + b->name;
    auto it = allocs_.find(b);
    if (it == allocs_.end() || it->second.kernel != scope.kernel) {
      return Fail(what + " is used outside the kernel that allocates it");
    }
    if (write && b->scope == MemoryScope::kLocal && scope.under_thread && !it->second.under_thread) {
      return Fail(what + " is allocated outside the threadIdx loops of the kernel at " + LoopName(scope.kernel) +
                  " but written inside them: allocate it inside the threadIdx loops (one copy per thread)");
    }
    return Status::OK();
  }

  Status CheckAllocate(const Allocate* op, Scope scope) {
    const Buffer& b = op->buffer;
    const std::string what = std::string(MemoryScopeName(b->scope)) + " buffer " + b->name;
    if (b->scope == MemoryScope::kGlobal && scope.kernel && !scope.under_thread) {
      // Nothing allocates global memory inside a kernel; inside the threadIdx
      // loops such a buffer is one thread's (local) array.
      return Fail(what + " is allocated inside the kernel at " + LoopName(scope.kernel) +
                  " but outside its threadIdx loops: give it shared scope or allocate it at the root");
    }
    // (Inside a kernel is inside its root blockIdx loop: one shared copy per block.)
    if (b->scope != MemoryScope::kGlobal && !scope.kernel) return Fail(what + " is allocated outside any kernel");
    if (b->scope == MemoryScope::kShared) shared_bytes_ += (std::max<int64_t>(b->size_bytes(), 1) + 15) / 16 * 16;
    if (b->scope == MemoryScope::kShared) shared_buffers_.push_back(b->name);
    allocs_[b.get()] = AllocInfo{scope.kernel, scope.under_thread};
    Status s = Check(op->body, std::move(scope));
    allocs_.erase(b.get());
    return s;
  }

  Status CheckFor(const For* op, Scope scope) {
    TF_RETURN_IF_ERROR(CheckExpr(op->min, scope));
    TF_RETURN_IF_ERROR(CheckExpr(op->extent, scope));
    bool bounds_diverge = ThreadDependent(op->min) || ThreadDependent(op->extent);
    if (!IsBound(op) || op->thread_tag == "vthread") {
      if (!scope.kernel) return Fail(LoopName(op) + " is outside any kernel: bind the root loop nest to blockIdx (BindUnboundLoops binds one)");
      if (IsBound(op) && !AsConstInt(op->extent)) return Fail(LoopName(op) + " has no constant extent");
      if (bounds_diverge) {
        thread_dependent_.insert(op->loop_var.get());
        if (scope.divergence.empty()) scope.divergence = LoopName(op) + " has bounds that depend on a threadIdx variable";
      }
      return Check(op->body, std::move(scope));
    }
    const std::string& tag = op->thread_tag;
    if (!IsLaunchTag(tag)) return Fail(LoopName(op) + " has an unknown thread tag");
    const int64_t* extent = AsConstInt(op->extent);
    if (!extent || *extent < 1) return Fail(LoopName(op) + " has no constant, positive extent");
    if (!scope.kernel) {
      if (!IsBlockTag(tag)) {
        return Fail(LoopName(op) + " is the root of a kernel but not bound to blockIdx: a kernel's root loop nest "
                    "is bound to blockIdx (BindUnboundLoops binds one)");
      }
      return CheckKernel(op, std::move(scope));
    }
    if (IsBlockTag(tag) && scope.under_thread) return Fail(LoopName(op) + " is nested under a threadIdx loop");
    if (auto it = scope.bound.find(tag); it != scope.bound.end() && *extent > it->second) {
      return Fail(LoopName(op) + " has extent " + std::to_string(*extent) + ", larger than the enclosing binding of " +
                  tag + " (" + std::to_string(it->second) + ")");
    }
    if (IsThreadTag(tag)) {
      thread_dependent_.insert(op->loop_var.get());
      if (*extent < launch_.at(tag) && scope.divergence.empty()) {
        scope.divergence = LoopName(op) + " covers " + std::to_string(*extent) + " of the " +
                           std::to_string(launch_.at(tag)) + " threads of " + tag;
      }
      scope.under_thread = true;
    }
    if (bounds_diverge && scope.divergence.empty()) {
      scope.divergence = LoopName(op) + " has bounds that depend on a threadIdx variable";
    }
    scope.bound[tag] = *extent;
    return Check(op->body, std::move(scope));
  }

  // A root loop bound to blockIdx: one kernel. Checks its launch shape
  // and, after its body, its shared memory.
  Status CheckKernel(const For* root, Scope scope) {
    launch_.clear();
    std::set<std::string> none;
    LaunchExtents(root, none, launch_);
    for (const char* tag : {"blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
      launch_.emplace(tag, 1);
    }
    const std::string kernel = "the kernel at " + LoopName(root);
    int64_t threads = launch_["threadIdx.x"] * launch_["threadIdx.y"] * launch_["threadIdx.z"];
    if (threads > limits_.max_threads_per_block) {
      std::string extents;
      for (const char* tag : {"threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
        extents += std::string(extents.empty() ? "" : " x ") + tag + " " + std::to_string(launch_[tag]) +
                   BindingOf(root, tag);
      }
      return Fail(kernel + " has " + std::to_string(threads) + " threads per block (" + extents +
                  "), over the limit of " + std::to_string(limits_.max_threads_per_block));
    }
    const std::array<int64_t, 3> grid_limit = {limits_.max_grid_x, limits_.max_grid_y_z, limits_.max_grid_y_z};
    const char* axes = "xyz";
    for (int d = 0; d < 3; ++d) {
      std::string thread_tag = std::string("threadIdx.") + axes[d], block_tag = std::string("blockIdx.") + axes[d];
      if (launch_[thread_tag] > limits_.max_block[size_t(d)]) {
        return Fail(kernel + ": " + thread_tag + " has extent " + std::to_string(launch_[thread_tag]) +
                    ", over the limit of " + std::to_string(limits_.max_block[size_t(d)]) + BindingOf(root, thread_tag));
      }
      if (launch_[block_tag] > grid_limit[size_t(d)]) {
        return Fail(kernel + ": " + block_tag + " has extent " + std::to_string(launch_[block_tag]) +
                    ", over the limit of " + std::to_string(grid_limit[size_t(d)]) + BindingOf(root, block_tag));
      }
    }
    shared_bytes_ = 0;
    shared_buffers_.clear();
    scope.kernel = root;
    scope.bound[root->thread_tag] = *AsConstInt(root->extent);
    TF_RETURN_IF_ERROR(Check(root->body, std::move(scope)));
    if (shared_bytes_ > limits_.max_shared_bytes) {
      std::string names;
      for (const std::string& n : shared_buffers_) names += (names.empty() ? "" : ", ") + n;
      return Fail(kernel + " uses " + std::to_string(shared_bytes_) + " bytes of shared memory (" + names +
                  "), over the limit of " + std::to_string(limits_.max_shared_bytes));
    }
    return Status::OK();
  }

  // " (loop v)" naming the first loop bound to `tag` under root, for messages.
  static std::string BindingOf(const For* root, const std::string& tag) {
    std::string name;
    PostOrderVisit(root->body, [&](const IRNode* n) {
      if (n->kind != IRNodeKind::kFor) return;
      const auto* f = static_cast<const For*>(n);
      if (IsBound(f) && f->thread_tag == tag) name = f->loop_var.name();
    });
    if (root->thread_tag == tag) name = root->loop_var.name();
    return name.empty() ? "" : " (loop " + name + ")";
  }

  const GpuLimits& limits_;
  std::map<std::string, int64_t> launch_;  // launch extents of the current kernel
  std::map<const BufferNode*, AllocInfo> allocs_;
  std::set<const Variable*> thread_dependent_;
  int64_t shared_bytes_ = 0;
  std::vector<std::string> shared_buffers_;
};

}  // namespace

GpuLimits GpuLimitsFor(const Target&) {
  // Every architecture tunefarm targets (sm_70 to sm_90) has the same limits
  // for what a kernel declares statically.
  return GpuLimits{};
}

Status VerifyGpuBindings(const PrimFunc& lowered, const GpuLimits& limits) {
  return GpuVerifier(limits).Check(lowered.body, Scope{});
}

}  // namespace tunefarm
