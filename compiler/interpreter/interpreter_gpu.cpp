// Kernels in the reference interpreter: GPU semantics for loops bound to
// blockIdx / threadIdx / vthread, for Barrier, and for shared memory.
//
// A kernel's blockIdx loops run serially at the grid level. The block body --
// what lies under the last blockIdx loop, or the outermost threadIdx loop of
// a kernel without blockIdx loops -- runs once per thread of the block, its
// shape being the largest extent of each threadIdx tag in the body (as the
// CUDA launch takes it). In a thread, every threadIdx loop takes the thread's
// index (one iteration; none when the index is past its extent), whether it
// is the outermost one or a cooperative fetch's inner loop bound to the same
// tag; vthread loops are serial loops. Non-local allocations under the block
// body are one buffer per block; kLocal ones are per thread.
//
// A body without barriers runs its threads one after another. A body with
// barriers runs them as fibers on this thread (fiber.h), in phases: each
// thread runs until it reaches a barrier; when all wait at the same one, the
// next phase begins. A barrier that only some threads reach, threads waiting
// at different barriers, or an error in any thread ends the block: the
// paused threads are unwound and Interpret returns the error.
#include <algorithm>
#include <exception>
#include <map>
#include <unordered_map>

#include "interpreter/fiber.h"
#include "interpreter/interpreter_impl.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::interp {

using namespace ir;

namespace {

// 512 KiB: the walk recurses once per statement and expression level.
constexpr size_t kFiberStackBytes = size_t(512) << 10;

bool HasPrefix(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
int TagAxis(const std::string& tag) { return tag.back() - 'x'; }  // "threadIdx.y" -> 1

// What a block body needs known before its threads start.
struct BlockShape {
  std::array<int64_t, 3> dims = {1, 1, 1};
  bool has_barrier = false;
  std::string error;  // a threadIdx extent that is not a constant
};

BlockShape ShapeOf(const Stmt& body) {
  BlockShape shape;
  PostOrderVisit(body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBarrier) shape.has_barrier = true;
    if (n->kind != IRNodeKind::kFor) return;
    const auto* f = static_cast<const For*>(n);
    if (f->kind != ForKind::kThreadBinding || !HasPrefix(f->thread_tag, "threadIdx.")) return;
    const int64_t* e = AsConstInt(f->extent);
    if (e == nullptr) {
      shape.error =
          "interpreter: the extent of " + f->thread_tag + " loop " + f->loop_var.name() + " is not a constant";
      return;
    }
    int64_t& d = shape.dims[size_t(TagAxis(f->thread_tag))];
    d = std::max(d, *e);
  });
  return shape;
}

bool ContainsBlockIdx(const Stmt& s) {
  bool found = false;
  PostOrderVisit(s, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kFor) {
      const auto* f = static_cast<const For*>(n);
      found |= f->kind == ForKind::kThreadBinding && HasPrefix(f->thread_tag, "blockIdx.");
    }
  });
  return found;
}

std::string ThreadName(const std::array<int64_t, 3>& idx) {
  return "thread (" + std::to_string(idx[0]) + ", " + std::to_string(idx[1]) + ", " + std::to_string(idx[2]) + ")";
}

// Where `target` sits in `root`: the conditions and loops around it, "" at the top.
bool FindSite(const Stmt& root, const StmtNode* target, std::vector<std::string>* path) {
  if (!root.defined()) return false;
  if (root.get() == target) return true;
  auto nested = [&](const Stmt& child, std::string step) {
    path->push_back(std::move(step));
    if (FindSite(child, target, path)) return true;
    path->pop_back();
    return false;
  };
  if (const auto* seq = root.as<SeqStmt>()) {
    return std::any_of(seq->seq.begin(), seq->seq.end(), [&](const Stmt& c) { return FindSite(c, target, path); });
  }
  if (const auto* i = root.as<IfThenElse>()) {
    std::string c = ToString(i->condition);  // binary nodes print in parentheses already
    if (c.empty() || c.front() != '(') c = "(" + c + ")";
    return nested(i->then_case, "if " + c) || nested(i->else_case, "else of if " + c);
  }
  if (const auto* f = root.as<For>()) {
    std::string tag = f->thread_tag.empty() ? "" : " (" + f->thread_tag + ")";
    return nested(f->body, "for " + f->loop_var.name() + tag);
  }
  if (const auto* b = root.as<Block>())
    return nested(b->init, "init of block " + b->name) || nested(b->body, "block " + b->name);
  if (const auto* a = root.as<Allocate>()) return FindSite(a->body, target, path);
  if (const auto* l = root.as<LetStmt>()) return FindSite(l->body, target, path);
  return false;
}

std::string DescribeBarrier(const Stmt& body, const StmtNode* barrier) {
  std::vector<std::string> path;
  if (!FindSite(body, barrier, &path) || path.empty()) return "the barrier at the top of the block";
  std::string out = "the barrier under ";
  for (size_t i = path.size(); i-- > 0;) out += "`" + path[i] + "`" + (i ? " in " : "");
  return out;
}

}  // namespace

struct GpuThread {
  std::array<int64_t, 3> idx = {0, 0, 0};
  std::map<const BufferNode*, std::vector<char>>* block_storage = nullptr;
  Fiber* fiber = nullptr;                // null on the one-after-another path
  const StmtNode* waiting_at = nullptr;  // the barrier this thread waits at
  const bool* abandon = nullptr;         // set: unwind at the next resume
  bool failed = false;
  Status error;
};

class GpuContext {
 public:
  const BlockShape& Shape(const Stmt& body) {
    auto it = shapes_.find(body.get());
    if (it == shapes_.end()) it = shapes_.emplace(body.get(), ShapeOf(body)).first;
    return it->second;
  }
  bool HasBlockIdx(const Stmt& s) {
    auto it = has_block_idx_.find(s.get());
    if (it == has_block_idx_.end()) it = has_block_idx_.emplace(s.get(), ContainsBlockIdx(s)).first;
    return it->second;
  }
  Fiber* FiberAt(size_t i) {
    while (fibers_.size() <= i) fibers_.push_back(std::make_unique<Fiber>(kFiberStackBytes));
    return fibers_[i].get();
  }

  std::vector<std::pair<std::string, int64_t>> grid_position;  // blockIdx tags and values being run

 private:
  // Keyed by node: the IR outlives the Interpret call that owns this.
  std::unordered_map<const StmtNode*, BlockShape> shapes_;
  std::unordered_map<const StmtNode*, bool> has_block_idx_;
  std::vector<std::unique_ptr<Fiber>> fibers_;  // reused by every block of the call
};

Interpreter::Interpreter() = default;
Interpreter::~Interpreter() = default;
Interpreter::Interpreter(Interpreter&&) noexcept = default;
Interpreter& Interpreter::operator=(Interpreter&&) noexcept = default;

void Interpreter::ExecBoundFor(const For* op, const Stmt& self) {
  const std::string& tag = op->thread_tag;
  if (thread_ != nullptr) {
    if (HasPrefix(tag, "threadIdx.")) {
      int64_t min = Eval(op->min).i, extent = Eval(op->extent).i;
      int64_t i = thread_->idx[size_t(TagAxis(tag))];
      if (i >= extent) return;
      vars_.push_back({op->loop_var.get(), Scalar{min + i}});
      Exec(op->body);
      vars_.pop_back();
      return;
    }
    if (HasPrefix(tag, "blockIdx.")) {
      Fail(Status::Internal("interpreter: " + tag + " loop " + op->loop_var.name() + " inside a block's body"));
    }
    return ExecSerialFor(op);  // vthread
  }
  if (!gpu_) gpu_ = std::make_unique<GpuContext>();
  if (HasPrefix(tag, "threadIdx.")) return RunBlock(self);  // a kernel of one block
  if (!HasPrefix(tag, "blockIdx.")) return ExecSerialFor(op);
  int64_t min = Eval(op->min).i, extent = Eval(op->extent).i;
  bool grid_below = gpu_->HasBlockIdx(op->body);
  vars_.push_back({op->loop_var.get(), Scalar{}});
  gpu_->grid_position.emplace_back(tag, 0);
  for (int64_t i = min; i < min + extent; ++i) {
    vars_.back().value.i = i;
    gpu_->grid_position.back().second = i;
    if (grid_below) {
      Exec(op->body);
    } else {
      RunBlock(op->body);
    }
  }
  gpu_->grid_position.pop_back();
  vars_.pop_back();
}

std::string Interpreter::GridPosition() const {
  if (!gpu_ || gpu_->grid_position.empty()) return "the block";
  std::string out = "block (";
  for (const auto& [tag, value] : gpu_->grid_position) {
    out += (out.back() == '(' ? "" : ", ") + tag + "=" + std::to_string(value);
  }
  return out + ")";
}

char* Interpreter::BlockStorage(const BufferNode* b) {
  std::vector<char>& storage = (*thread_->block_storage)[b];
  // Poisoned like any fresh allocation, once per block: later threads reaching
  // the Allocate must see what earlier ones wrote.
  if (storage.empty()) storage.assign(size_t(b->size_bytes()), char(0x7f));
  return storage.data();
}

void Interpreter::ExecBarrier(const Stmt& self) {
  if (thread_ == nullptr) return;  // outside a kernel: one thread, nothing to wait for
  if (thread_->fiber == nullptr) Fail(Status::Internal("interpreter: a barrier on the one-after-another path"));
  thread_->waiting_at = self.get();
  thread_->fiber->Yield();
  if (*thread_->abandon) Fail(Status::Cancelled("interpreter: block abandoned"));
}

void Interpreter::RunBlock(const Stmt& body) {
  const BlockShape& shape = gpu_->Shape(body);
  if (!shape.error.empty()) Fail(Status::InvalidArgument(shape.error));
  const auto& d = shape.dims;
  std::map<const BufferNode*, std::vector<char>> storage;
  std::vector<GpuThread> threads(size_t(d[0] * d[1] * d[2]));
  for (size_t t = 0; t < threads.size(); ++t) {
    threads[t].idx = {int64_t(t) % d[0], int64_t(t) / d[0] % d[1], int64_t(t) / (d[0] * d[1])};
    threads[t].block_storage = &storage;
  }
  if (shape.has_barrier) return RunBlockInPhases(body, threads);
  Interpreter walker;
  for (GpuThread& t : threads) {
    walker.vars_ = vars_;
    walker.buffers_ = buffers_;
    walker.thread_ = &t;
    try {
      walker.Exec(body);
    } catch (const InterpError& e) {
      Fail(Status(e.status.code(), "in " + ThreadName(t.idx) + " of " + GridPosition() + ": " + e.status.message()));
    }
  }
}

void Interpreter::RunBlockInPhases(const Stmt& body, std::vector<GpuThread>& threads) {
  bool abandon = false;
  std::vector<Interpreter> walkers(threads.size());
  for (size_t t = 0; t < threads.size(); ++t) {
    walkers[t].vars_ = vars_;
    walkers[t].buffers_ = buffers_;
    walkers[t].thread_ = &threads[t];
    threads[t].abandon = &abandon;
    threads[t].fiber = gpu_->FiberAt(t);
    threads[t].fiber->Reset([&walker = walkers[t], &thread = threads[t], &body] {
      try {
        walker.Exec(body);
      } catch (const InterpError& e) {
        thread.failed = true;
        thread.error = e.status;
      } catch (const std::exception& e) {  // nothing may leave a fiber
        thread.failed = true;
        thread.error = Status::Internal(std::string("interpreter: ") + e.what());
      }
    });
  }
  Status error;
  while (error.ok()) {
    for (GpuThread& t : threads) {
      t.waiting_at = nullptr;
      t.fiber->Resume();
      if (t.failed) {
        error = Status(t.error.code(), "in " + ThreadName(t.idx) + " of " + GridPosition() + ": " + t.error.message());
        break;
      }
    }
    if (!error.ok()) break;
    auto waits = [](const GpuThread& t) { return t.waiting_at != nullptr; };
    auto waiting = std::find_if(threads.begin(), threads.end(), waits);
    if (waiting == threads.end()) break;  // every thread is done
    auto done = std::find_if_not(threads.begin(), threads.end(), waits);
    auto elsewhere = std::find_if(threads.begin(), threads.end(),
                                  [&](const GpuThread& t) { return waits(t) && t.waiting_at != waiting->waiting_at; });
    std::string where = DescribeBarrier(body, waiting->waiting_at);
    if (done != threads.end()) {
      error = Status::InvalidArgument("interpreter: " + where + " is reached by only some threads of " +
                                      GridPosition() + ": " + ThreadName(waiting->idx) + " waits there, " +
                                      ThreadName(done->idx) + " ends without reaching it");
    } else if (elsewhere != threads.end()) {
      error = Status::InvalidArgument(
          "interpreter: threads of " + GridPosition() + " wait at different barriers: " + ThreadName(waiting->idx) +
          " at " + where + ", " + ThreadName(elsewhere->idx) + " at " + DescribeBarrier(body, elsewhere->waiting_at));
    }
  }
  if (error.ok()) return;
  // Unwind every paused thread (it throws at its barrier) so that what its
  // stack holds is freed; threads not yet started never run.
  abandon = true;
  for (GpuThread& t : threads) {
    if (t.fiber->started()) t.fiber->Resume();
  }
  Fail(std::move(error));
}

}  // namespace tunefarm::interp
