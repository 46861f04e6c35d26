// `tunefarm report`: what tuning bought a whole ONNX model, as values the
// command fills in from the tuning log (report_command.cpp) and prints as a
// table, or renders as one HTML page with an SVG bar chart (report_html.cpp).
//
// A task's times are per call, in seconds; 0 means the log has no such time.
// A model's estimated latency is the sum over its tasks of calls x time per
// call; each sum covers only the tasks that have the time it adds up, and
// LatencyTotals says which.
//
// Plain values: a ModelReport owns everything it holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tunefarm::cli {

struct TaskReport {
  std::string name;      // the task's workload name
  std::string op_class;  // conv2d, dense, pool, ... (frontend::ModelTask::op_class)
  std::string summary;   // one line for a person
  int calls = 0;         // how often the model runs the task: its weight
  // The log's best record for the task's workload on the target, as
  // `tunefarm compile` chooses it (ranked by the mean of its measurements).
  double best_seconds = 0;  // 0: not tuned
  int64_t record_id = 0;    // the best record's row id in its layer; 0: not tuned
  bool best_is_default = false;  // the fastest record is the untuned default itself
  // The untuned default program's time: the mean of the log's records with
  // an empty trace on the best record's target and hardware (the tuning
  // loop's baseline measurement). 0: the log holds none (default n/a).
  double default_seconds = 0;
  // Where the best record came from, when that needs saying: "same-arch
  // record", "system log", "timed with toolchain '...'"; or why a task that
  // has records has no best ("3 records, none replays"). Empty otherwise.
  std::string note;

  bool tuned() const { return best_seconds > 0; }
  bool has_default() const { return default_seconds > 0; }
  double BestTotal() const { return calls * best_seconds; }
  double DefaultTotal() const { return calls * default_seconds; }
};

// The sums over a model's tasks of calls x time per call, and what each covers.
struct LatencyTotals {
  double tuned_seconds = 0;    // over the tuned tasks, their best
  double default_seconds = 0;  // over the tasks with a default time, that time
  int tuned_tasks = 0;
  int default_tasks = 0;
  int tuned_calls = 0;
  int default_calls = 0;
  // Over the tasks that have both times: the ratio is taken there only.
  double both_tuned_seconds = 0;
  double both_default_seconds = 0;
  int both_tasks = 0;

  // default / tuned over the tasks with both times; 0 when there are none.
  double Speedup() const { return both_tuned_seconds > 0 ? both_default_seconds / both_tuned_seconds : 0; }
};

LatencyTotals SumLatency(const std::vector<TaskReport>& tasks);

struct ModelReport {
  std::string model_name;  // the file's stem
  std::string model_path;
  std::string log_path;
  std::string target;      // the canonical target text the records were looked up for
  int total_calls = 0;
  std::vector<TaskReport> tasks;  // in the model's order (`tunefarm import` numbers them so)
  LatencyTotals totals;
};

// Which tasks a sum covers: "all 7 tasks", "2 of 7 tasks (5 of 12 calls)".
std::string Coverage(int tasks, int of_tasks, int calls, int of_calls);

// A time for a person: "812 ns", "12.3 us", "1.234 ms", "2.50 s".
std::string FormatDuration(double seconds);

// One self-contained HTML page (no scripts, no links to fetch): the totals,
// an inline SVG bar chart of each task's share of the model's time before
// and after tuning, biggest first, and the task table.
std::string ModelReportHtml(const ModelReport& report);

}  // namespace tunefarm::cli
