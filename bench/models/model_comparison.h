// A whole model's tasks timed beside oneDNN, and the model-level figures.
//
// Per task: the tuning log's best kernel for the task's workload (or, when
// the log holds no correct record of it, the default schedule, and the
// result says which), oneDNN's peer of the same fused computation
// (task_peer.h, onednn_task_op.h), the kernel checked against the peer's
// output on the same random inputs, then both timed in interleaved rounds
// at each thread count (bench/tune/kernel_comparison.h). A task without a
// oneDNN peer is timed alone, so that the model's tunefarm time still
// counts it, and it is counted apart from the compared tasks.
//
// As in the layer benchmark, a thread count where oneDNN runs below half its
// 1-thread speed is a stall (a co-tenant holds a core and oneDNN's OpenMP
// barriers wait for the descheduled thread): it is timed again, keeping the
// attempt where oneDNN was fastest, and marked when it stays stalled. A
// stalled task stays in the model's sums, which count it and give the
// ratio without it too.
//
// The model-level figures weigh each task by its calls: the sum over tasks
// of calls x seconds per call, for tunefarm and for oneDNN over the tasks
// both timed, and the ratio of the two sums.
#pragma once

#include <string>
#include <vector>

#include "tunefarm/database/database.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::bench {

// One task at one thread count.
struct TaskCell {
  double tunefarm_seconds = 0;  // per call; 0 when not timed
  double onednn_seconds = 0;    // per call; 0 without a peer or when not compared
  double ratio = 0;             // oneDNN's time / tunefarm's, median over rounds (above 1: tunefarm faster)
  std::string note;             // why a figure is missing
  bool wrong = false;           // the kernel's result differed from oneDNN's
  bool stalled = false;         // oneDNN ran below half its 1-thread speed even after the retries
};

struct TaskResult {
  std::string task;      // the workload's name
  std::string op_class;
  int calls = 0;
  bool tuned = false;    // false: the default schedule, the log held no correct record
  bool default_won = false;  // tuned, and the log's best record is the default schedule
  int trials = 0;        // the task's records in the log
  std::string kernel;    // which record, or "default schedule (no record in the log)"
  bool has_peer = false;
  std::string peer;      // oneDNN's primitive and post-ops, or why there is none
  std::vector<TaskCell> cells;  // one per thread count, in the options' order
};

struct ModelComparisonOptions {
  std::vector<int> threads = {1, 2};
  int repeat = 5;             // interleaved rounds
  int retries = 2;            // of a thread count where oneDNN stalled
  std::string record_target;  // the log's target string (tune_log.h)
};

// Compares one task of `model` (its kernel from `db`).
TaskResult CompareTask(const frontend::Model& model, const frontend::ModelTask& task, database::Database& db,
                       const ModelComparisonOptions& options);

// The model at one thread count (index `t` into each result's cells).
struct ModelTotals {
  int threads = 0;
  int compared_tasks = 0, compared_calls = 0;
  double tunefarm_seconds = 0, onednn_seconds = 0;  // sum of calls x time, compared tasks only
  int no_peer_tasks = 0, no_peer_calls = 0;
  double no_peer_tunefarm_seconds = 0;  // sum of calls x time of the tasks oneDNN cannot express
  int untimed_tasks = 0;                // wrong, failed, or not timed at all
  int untuned_tasks = 0;                // no record in the log: timed with the default schedule
  int default_won_tasks = 0;            // the log's best record is the default schedule
  int stalled_tasks = 0;                // compared, with oneDNN stalled (TaskCell::stalled)
  double stalled_tunefarm_seconds = 0, stalled_onednn_seconds = 0;  // their part of the sums

  double Ratio() const { return tunefarm_seconds > 0 ? onednn_seconds / tunefarm_seconds : 0; }
  // The ratio over the compared tasks where oneDNN did not stall.
  double RatioWithoutStalls() const {
    double t = tunefarm_seconds - stalled_tunefarm_seconds;
    return t > 0 ? (onednn_seconds - stalled_onednn_seconds) / t : 0;
  }
};
ModelTotals Totals(const std::vector<TaskResult>& results, size_t t, int threads);

}  // namespace tunefarm::bench
