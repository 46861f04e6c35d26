// The kernel of an untuned task is the default schedule under its own
// label (not kernel_comparison's "default", which is timed apart in at most
// three groups): it stands for the task in the model's sum, so it is timed
// in the interleaved rounds like a tuned kernel.
#include "model_comparison.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "bench_timing.h"
#include "onednn_task_op.h"
#include "task_peer.h"
#include "tune/kernel_comparison.h"
#include "tune/tune_log.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::bench {
namespace {

// A kernel timed on its own at each thread count: a task oneDNN cannot express.
std::vector<TaskCell> TimeAlone(const Kernel& k, const ModelComparisonOptions& o, const std::string& why) {
  std::vector<TaskCell> cells(o.threads.size());
  for (TaskCell& c : cells) c.note = why;
  if (!k.problem.empty()) {
    for (TaskCell& c : cells) c.note = k.problem;
    return cells;
  }
  std::mt19937_64 rng(42);
  std::vector<HostBuffer> buffers;
  std::vector<void*> args;
  for (const ir::Buffer& param : k.func.params) buffers.push_back(HostBuffer::Like(param));
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (i < k.func.num_inputs) buffers[i].FillRandom(rng);
    args.push_back(buffers[i].data());
  }
  auto call = PreparedCall::Prepare(*k.jit, k.func, args);
  Status first = call.ok() ? (*call)->Run() : call.status();
  if (!first.ok()) {
    for (TaskCell& c : cells) c.note = "run failed: " + first.message();
    return cells;
  }
  for (size_t t = 0; t < o.threads.size(); ++t) {
    tunefarm_set_num_threads(o.threads[t]);
    PreparedCall* prepared = call->get();
    cells[t].tunefarm_seconds = TimeMedian([prepared] { (void)prepared->Run(); }, o.repeat);
  }
  return cells;
}

// oneDNN at this row's thread count ran below half its 1-thread speed.
bool Stalled(const std::vector<ThreadsRow>& rows, const ThreadsRow& row) {
  if (row.threads <= 1) return false;
  for (const ThreadsRow& one : rows) {
    if (one.threads == 1) return row.onednn_seconds > 2 * one.onednn_seconds;
  }
  return false;
}

void RetryStalls(const Workload& w, std::vector<Kernel>& kernels, const OneDnnMaker& make,
                 const ModelComparisonOptions& o, std::vector<ThreadsRow>* rows) {
  for (ThreadsRow& row : *rows) {
    for (int attempt = 0; attempt < o.retries && Stalled(*rows, row); ++attempt) {
      std::printf("oneDNN stalled at %d threads (%.4f ms): timing again\n", row.threads, row.onednn_seconds * 1e3);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      ComparisonOptions co;
      co.threads = {row.threads};
      co.repeat = o.repeat;
      auto again = CompareWithOneDnn(w, kernels, make, co);
      if (again.ok() && again->size() == 1 && (*again)[0].onednn_seconds < row.onednn_seconds) row = (*again)[0];
    }
  }
}

}  // namespace

TaskResult CompareTask(const frontend::Model& model, const frontend::ModelTask& task, database::Database& db,
                       const ModelComparisonOptions& o) {
  const Workload& w = task.workload;
  TaskResult r;
  r.task = w.name;
  r.op_class = task.op_class;
  r.calls = int(task.calls.size());
  auto trials = LoadTrials(db, StructuralHashHex(w), o.record_target);
  if (trials.ok()) r.trials = int(trials->size());
  std::vector<Kernel> kernels;
  kernels.push_back(TunedKernel(w, trials, 0));
  r.tuned = kernels[0].jit != nullptr;
  r.kernel = kernels[0].provenance;
  r.default_won = r.tuned && r.kernel.find("(the default schedule)") != std::string::npos;
  if (!r.tuned) {
    r.kernel = "default schedule (" + kernels[0].problem + ")";
    kernels[0] = DefaultKernel(w);
    kernels[0].label = "untuned";
  }
  std::printf("%s: %s\n", w.name.c_str(), r.kernel.c_str());

  TaskPeer peer = PeerOf(model, task);
  r.has_peer = peer.kind != PeerKind::kNone;
  r.peer = r.has_peer ? peer.What() : peer.no_peer;
  if (r.has_peer) {
    OneDnnMaker make = [&peer](std::map<std::string, HostBuffer*>& buffers, HostBuffer* output) {
      return MakeTaskOp(peer, buffers, output);
    };
    ComparisonOptions co;
    co.threads = o.threads;
    co.repeat = o.repeat;
    auto rows = CompareWithOneDnn(w, kernels, make, co);
    if (rows.ok()) RetryStalls(w, kernels, make, o, &*rows);
    if (rows.ok()) {
      for (const ThreadsRow& row : *rows) {
        const Cell& cell = row.cells[0];
        TaskCell c;
        c.onednn_seconds = row.onednn_seconds;
        c.note = cell.note;
        c.wrong = cell.wrong;
        c.stalled = Stalled(*rows, row);
        if (cell.note.empty()) {
          c.tunefarm_seconds = cell.seconds;
          c.ratio = cell.ratio;
        }
        r.cells.push_back(std::move(c));
      }
      return r;
    }
    if (rows.status().code() != StatusCode::kUnimplemented) {
      r.cells.assign(o.threads.size(), TaskCell{0, 0, 0, "comparison failed: " + rows.status().message(), false});
      return r;
    }
    // oneDNN refused the primitive: no peer after all.
    r.has_peer = false;
    r.peer = rows.status().message();
  }
  std::printf("%s: no oneDNN peer (%s); tunefarm timed alone\n", w.name.c_str(), r.peer.c_str());
  r.cells = TimeAlone(kernels[0], o, "no oneDNN peer");
  return r;
}

ModelTotals Totals(const std::vector<TaskResult>& results, size_t t, int threads) {
  ModelTotals m;
  m.threads = threads;
  for (const TaskResult& r : results) {
    if (!r.tuned) ++m.untuned_tasks;
    if (r.default_won) ++m.default_won_tasks;
    const TaskCell* c = t < r.cells.size() ? &r.cells[t] : nullptr;
    bool tunefarm_timed = c != nullptr && c->tunefarm_seconds > 0;
    if (!r.has_peer) {
      ++m.no_peer_tasks;
      m.no_peer_calls += r.calls;
      if (tunefarm_timed) m.no_peer_tunefarm_seconds += r.calls * c->tunefarm_seconds;
      else ++m.untimed_tasks;
      continue;
    }
    if (!tunefarm_timed || c->onednn_seconds <= 0) {
      ++m.untimed_tasks;
      continue;
    }
    ++m.compared_tasks;
    m.compared_calls += r.calls;
    if (c->stalled) {
      ++m.stalled_tasks;
      m.stalled_tunefarm_seconds += r.calls * c->tunefarm_seconds;
      m.stalled_onednn_seconds += r.calls * c->onednn_seconds;
    }
    m.tunefarm_seconds += r.calls * c->tunefarm_seconds;
    m.onednn_seconds += r.calls * c->onednn_seconds;
  }
  return m;
}

}  // namespace tunefarm::bench
