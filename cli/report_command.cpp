// `tunefarm report`: what tuning bought a whole ONNX model. Each task's best
// time is the record `tunefarm compile` would build (ChooseSchedule over the
// user log and the system log), its default time the tuning loop's baseline
// record (an empty trace) on the same target and hardware; the model's
// estimated latency is the sum of calls x time per call, before and after.
// Nothing is measured and the log is opened read-only.
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "model_report.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/frontend/model.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::cli {
namespace {

struct ReportOptionsCli {
  std::string model;
  std::string db;
  std::string target = "llvm";
  int threads = 0;
  std::string html;
  std::vector<std::string> dims;
};

// The tuning loop's baseline is the record of the empty trace: the trace
// header alone, or no instruction at all.
bool IsDefaultTrace(const std::string& text) {
  if (!TraceTextHasContent(text)) return true;
  auto trace = Trace::Parse(text);
  return trace.ok() && trace->size() == 0;
}

// The untuned default's time on exactly `target` (target string and
// fingerprint): the mean of its successful, measured records, as the log
// ranks a trace. 0 when the log holds none (a log pruned to its fastest
// traces, a baseline that failed or was never measured).
Result<double> DefaultSeconds(database::TuningLog& log, const std::string& hash, const database::Target& target) {
  double sum = 0;
  int count = 0;
  TF_RETURN_IF_ERROR(log.ForEachRecord({hash, target.target}, [&](const database::TuningRecord& r) {
    if (r.synthetic || !(r.target == target) || !IsDefaultTrace(r.trace)) return Status::OK();
    if (std::optional<double> t = r.TimeSec()) {
      sum += *t;
      ++count;
    }
    return Status::OK();
  }));
  return count > 0 ? sum / count : 0.0;
}

// One task's row: its best record through compile's lookup, and its default.
Result<TaskReport> ReportTask(database::TuningLog& log, const std::string& log_name, const frontend::ModelTask& t,
                              const Target& target, const database::Target& record_target) {
  TaskReport row;
  row.name = t.workload.name;
  row.op_class = t.op_class;
  row.summary = t.summary;
  row.calls = int(t.calls.size());
  const std::string hash = StructuralHashHex(t.workload);
  TF_ASSIGN_OR_RETURN(ir::PrimFunc default_func, LowerToPrimFunc(t.workload));
  auto chosen = tuner::ChooseSchedule(&log, log_name, hash, row.name, record_target, default_func);
  if (!chosen.ok()) {
    // Records none of which replays (NoRecordReplays): the task is as good
    // as untuned, and compile would say why; the report goes on.
    if (chosen.status().code() != StatusCode::kCorruption) return chosen.status();
    fmt::print(stderr, "warning: {}\n", chosen.status().message());
    row.note = "its records do not replay on this tunefarm's loop nest";
    return row;
  }
  if (!chosen->best.record) return row;
  const database::TuningRecord& best = *chosen->best.record;
  row.best_seconds = best.RankSec().value_or(0);
  row.record_id = best.id;
  row.best_is_default = IsDefaultTrace(best.trace);
  TF_ASSIGN_OR_RETURN(row.default_seconds, DefaultSeconds(log, hash, best.target));
  std::vector<std::string> notes;
  if (chosen->best.level == database::FallbackLevel::kSameArch) notes.push_back("same-arch record");
  // The same-arch rung matches any target string of the architecture, so a
  // kernel timed at another thread count can answer: its time is not one at
  // the asked count.
  if (auto timed = Target::Parse(best.target.target); timed.ok() && timed->num_threads != target.num_threads) {
    notes.push_back(timed->num_threads > 0 ? fmt::format("timed at {} threads", timed->num_threads)
                                           : std::string("timed at the default thread count"));
  }
  if (chosen->best.layer == database::Layer::kSystem) notes.push_back("system log");
  if (best.target.fingerprint.toolchain != record_target.fingerprint.toolchain) {
    notes.push_back("timed with toolchain '" + best.target.fingerprint.toolchain + "'");
  }
  for (const std::string& n : notes) row.note += (row.note.empty() ? "" : ", ") + n;
  return row;
}

void PrintTable(const ModelReport& r) {
  size_t width = 4;
  for (const TaskReport& t : r.tasks) width = std::max(width, t.name.size());
  fmt::print("{:>3}  {:<{}}  {:<16} {:>5} {:>12} {:>13} {:>9} {:>7}  {}\n", "#", "task", width, "op", "calls",
             "best/call", "default/call", "speed-up", "share", "record");
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const TaskReport& t = r.tasks[i];
    std::string best = t.tuned() ? FormatDuration(t.best_seconds) : std::string("not tuned");
    std::string base = t.has_default() ? FormatDuration(t.default_seconds)
                                       : std::string(t.tuned() ? "default n/a" : "-");
    std::string speedup = t.tuned() && t.has_default() ? fmt::format("{:.2f}x", t.default_seconds / t.best_seconds)
                                                       : std::string("-");
    std::string share = t.tuned() && r.totals.tuned_seconds > 0
                            ? fmt::format("{:.1f}%", 100 * t.BestTotal() / r.totals.tuned_seconds)
                            : std::string("-");
    std::string record = t.tuned() ? fmt::format("#{}{}", t.record_id, t.best_is_default ? " (the default)" : "")
                                   : std::string("-");
    if (!t.note.empty()) record += "  " + t.note;
    fmt::print("{:>3}  {:<{}}  {:<16} {:>5} {:>12} {:>13} {:>9} {:>7}  {}\n", i + 1, t.name, width, t.op_class,
               t.calls, best, base, speedup, share, record);
  }
}

void PrintLatency(const ModelReport& r) {
  const LatencyTotals& s = r.totals;
  const int n = int(r.tasks.size());
  fmt::print("\nestimated latency (sum over tasks of calls x time per call):\n");
  if (s.default_tasks > 0) {
    fmt::print("  untuned defaults  {:>10}  over {}{}\n", FormatDuration(s.default_seconds),
               Coverage(s.default_tasks, n, s.default_calls, r.total_calls),
               s.default_tasks < n ? fmt::format("; {} without a default time in the log", n - s.default_tasks) : "");
  } else {
    fmt::print("  untuned defaults  n/a: the log holds no default time for any task\n");
  }
  if (s.tuned_tasks > 0) {
    fmt::print("  tuned (best)      {:>10}  over {}{}\n", FormatDuration(s.tuned_seconds),
               Coverage(s.tuned_tasks, n, s.tuned_calls, r.total_calls),
               s.tuned_tasks < n ? fmt::format("; {} not tuned", n - s.tuned_tasks) : "");
  } else {
    fmt::print("  tuned (best)      n/a: no task has a record in {} for {}\n", r.log_path, r.target);
  }
  if (s.both_tasks > 0) {
    fmt::print("  speed-up          {:>10}  {}\n", fmt::format("{:.2f}x", s.Speedup()),
               s.both_tasks == n ? std::string("over the whole model")
                                 : fmt::format("over the {} task{} with both times ({} before, {} after)",
                                               s.both_tasks, s.both_tasks == 1 ? "" : "s",
                                               FormatDuration(s.both_default_seconds),
                                               FormatDuration(s.both_tuned_seconds)));
  } else {
    fmt::print("  speed-up          n/a: no task has both a default and a tuned time\n");
  }
}

int Report(const ReportOptionsCli& o) {
  auto dims = ParseOverrides(o.dims);
  if (!dims.ok()) {
    fmt::print(stderr, "error: {}\n", dims.status().message());
    return kExitUserError;
  }
  auto target = ParseTargetField("--target", o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  // As `tunefarm tune` keys its records: --threads is the target's -num-threads.
  if (o.threads > 0 && target->num_threads > 0 && target->num_threads != o.threads) {
    fmt::print(stderr, "error: --threads {} contradicts the target's -num-threads={} ('{}'); give one of them\n",
               o.threads, target->num_threads, o.target);
    return kExitUserError;
  }
  if (o.threads > 0) target->num_threads = o.threads;
  auto model = frontend::ImportOnnx(o.model, {*dims});
  if (!model.ok()) {
    fmt::print(stderr, "error: {}\n", model.status().message());
    return model.status().code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
  }
  // Read-only, and never created: a mistyped path must not leave an empty log.
  std::error_code ec;
  if (!std::filesystem::exists(o.db, ec)) {
    fmt::print(stderr, "error: the tuning log {} does not exist (tune the model into it first: tunefarm tune {} "
               "--db {})\n", o.db, o.model, o.db);
    return kExitUserError;
  }
  database::OpenOptions read_only;
  read_only.read_only = true;
  auto log = database::LayeredDatabase::Open(o.db, database::DefaultSystemDatabasePath(), read_only);
  if (!log.ok()) {
    fmt::print(stderr, "error: {}\n", log.status().message());
    return kExitUserError;
  }
  ModelReport report;
  report.model_name = model->name;
  report.model_path = o.model;
  report.log_path = o.db;
  report.target = target->ToString();
  report.total_calls = model->CallCount();
  const database::Target record_target = tuner::KernelRecordTarget(*target, std::nullopt);
  for (const frontend::ModelTask& t : model->tasks) {
    auto row = ReportTask(**log, o.db, t, *target, record_target);
    if (!row.ok()) {
      fmt::print(stderr, "error: task {}: {}\n", t.workload.name, row.status().message());
      return row.status().code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
    }
    report.tasks.push_back(std::move(row).value());
  }
  report.totals = SumLatency(report.tasks);

  fmt::print("model {} ({}): {} tasks, {} calls\nlog {}, target {}\n\n", report.model_name, o.model,
             report.tasks.size(), report.total_calls, o.db, report.target);
  PrintTable(report);
  PrintLatency(report);
  if (!o.html.empty()) {
    std::ofstream out(o.html, std::ios::trunc);
    out << ModelReportHtml(report);
    out.close();
    if (!out) {
      fmt::print(stderr, "error: cannot write --html {}\n", o.html);
      return kExitUserError;
    }
    fmt::print("report page: {}\n", o.html);
  }
  return kExitOk;
}

}  // namespace

LatencyTotals SumLatency(const std::vector<TaskReport>& tasks) {
  LatencyTotals s;
  for (const TaskReport& t : tasks) {
    if (t.tuned()) {
      s.tuned_seconds += t.BestTotal();
      ++s.tuned_tasks;
      s.tuned_calls += t.calls;
    }
    if (t.has_default()) {
      s.default_seconds += t.DefaultTotal();
      ++s.default_tasks;
      s.default_calls += t.calls;
    }
    if (t.tuned() && t.has_default()) {
      s.both_tuned_seconds += t.BestTotal();
      s.both_default_seconds += t.DefaultTotal();
      ++s.both_tasks;
    }
  }
  return s;
}

void AddReportCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ReportOptionsCli>();
  CLI::App* cmd = app.add_subcommand(
      "report", "What tuning bought an ONNX model: each task's best and default time from the log, and the "
                "model's estimated latency before and after");
  cmd->footer(
      "\nEach task's best time is the record `tunefarm compile` would build for it (same device, else same\n"
      "architecture); its default time is the untuned program's measurement `tunefarm tune` keeps in the\n"
      "log (default n/a when the log has none). The estimated latency sums calls x time per call over the\n"
      "tasks; each sum says which tasks it covers. Nothing is measured, the log is only read.\n\n"
      "Examples:\n"
      "  tunefarm tune resnet50.onnx --trials 2000 --db resnet50.db\n"
      "  tunefarm report resnet50.onnx --db resnet50.db                   the table and the latency\n"
      "  tunefarm report resnet50.onnx --db resnet50.db --html rn50.html  also a page with a bar chart\n"
      "  tunefarm report resnet50.onnx --db resnet50.db --threads 1       records tuned with --threads 1\n"
      "  tunefarm report bert.onnx --db bert.db --set batch=1             a symbolic dimension's value");
  cmd->add_option("model", o->model, "ONNX model file (.onnx)")->required();
  cmd->add_option("--db", o->db, "Tuning log to read (never created nor written)")->required();
  cmd->add_option("--target", o->target, "Target the records were tuned for")->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Thread count the records were tuned at (`tunefarm tune --threads`; default: tune's default)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--html", o->html, "Also write the report as one self-contained HTML page with a bar chart");
  cmd->add_option("--set", o->dims, "Value of a symbolic input dimension, e.g. --set batch=1");
  cmd->callback([o, exit_code] { *exit_code = Report(*o); });
}

}  // namespace tunefarm::cli
