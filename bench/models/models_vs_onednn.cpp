// A model's tuned kernels beside oneDNN, task by task, and the model-level ratio.
//
//   tunefarm_models_vs_onednn MODEL.onnx --db LOG [--threads 1,2] [--repeat 5] [--retries 2]
//                             [--only TASK,...] [--set NAME=VALUE] [--target T]
//
// Imports the model (frontend::ImportOnnx), then for every task compares the
// log's best kernel (or the default schedule, said so) with oneDNN's peer of
// the same fused computation (model_comparison.h) at each thread count. Prints
// one row per task (calls, which kernel, oneDNN's primitive, per thread count
// tunefarm's and oneDNN's milliseconds per call and the ratio), then per
// thread count the model's figures: the sum of calls x time for tunefarm and
// for oneDNN over the compared tasks and their ratio, and apart from them the
// tasks oneDNN cannot express (their tunefarm time), the tasks not timed and
// those where oneDNN stalled (model_comparison.h). Exit code 1 when a
// kernel's result differs from oneDNN's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "host_description.h"
#include "model_comparison.h"
#include "tune/tune_log.h"

namespace tunefarm::bench {
namespace {

struct Options {
  std::string model;
  std::string db;
  std::vector<std::string> only;
  std::map<std::string, int64_t> dims;
  ModelComparisonOptions compare;
};

std::string Short(const std::string& s, size_t n = 80) { return s.size() > n ? s.substr(0, n) + "..." : s; }

// Milliseconds with at least 4 significant digits and no exponent: 17.9546, 0.0009123, 0.00002130.
std::string Ms(double seconds) {
  double ms = seconds * 1e3;
  int decimals = ms > 0 ? std::clamp(3 - int(std::floor(std::log10(ms))), 4, 8) : 4;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, ms);
  return buf;
}

std::string Ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

void PrintTaskTable(const Options& o, const std::vector<TaskResult>& results) {
  std::printf("\n| # | task | calls | kernel | oneDNN peer |");
  for (int t : o.compare.threads) std::printf(" tunefarm ms, %dT | oneDNN ms, %dT | tunefarm / oneDNN, %dT |", t, t, t);
  std::printf("\n|---|---|---|---|---|");
  for (size_t i = 0; i < o.compare.threads.size(); ++i) std::printf("---|---|---|");
  std::printf("\n");
  for (size_t i = 0; i < results.size(); ++i) {
    const TaskResult& r = results[i];
    std::string kernel = !r.tuned       ? "default schedule (no record)"
                         : r.default_won ? "tuned (" + std::to_string(r.trials) + " trials): the default schedule won"
                                         : "tuned (" + std::to_string(r.trials) + " trials)";
    std::string peer = r.has_peer ? r.peer : "none: " + r.peer;
    std::printf("| %zu | %s | %d | %s | %s |", i + 1, r.task.c_str(), r.calls, kernel.c_str(), Short(peer).c_str());
    for (const TaskCell& c : r.cells) {
      std::string tf = c.tunefarm_seconds > 0 ? Ms(c.tunefarm_seconds) : Short(c.note, 40);
      std::string dnnl = c.onednn_seconds > 0 ? Ms(c.onednn_seconds) + (c.stalled ? " !" : "") : "—";
      std::string ratio = c.ratio > 0 ? Ratio(c.ratio) : "—";
      std::printf(" %s | %s | %s |", tf.c_str(), dnnl.c_str(), ratio.c_str());
    }
    std::printf("\n");
  }
}

void PrintModelTable(const Options& o, const frontend::Model& model, const std::vector<TaskResult>& results) {
  int calls = 0;
  for (const TaskResult& r : results) calls += r.calls;
  std::printf("\nModel %s: %zu of its %zu tasks, %d of its %d calls per inference; log %s\n\n", model.name.c_str(),
              results.size(), model.tasks.size(), calls, model.CallCount(), o.db.c_str());
  std::printf("| threads | tasks compared (calls) | tunefarm ms (sum of calls x time) | oneDNN ms | tunefarm / oneDNN |"
              " no oneDNN peer: tasks (calls), tunefarm ms | not timed | default schedule: no record, best record |"
              " oneDNN stalled (!) | tunefarm / oneDNN without the stalled |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t t = 0; t < o.compare.threads.size(); ++t) {
    ModelTotals m = Totals(results, t, o.compare.threads[t]);
    std::printf("| %d | %d (%d) | %s | %s | **%s** | %d (%d), %s | %d | %d, %d | %d | %s |\n", m.threads,
                m.compared_tasks, m.compared_calls, Ms(m.tunefarm_seconds).c_str(), Ms(m.onednn_seconds).c_str(),
                Ratio(m.Ratio()).c_str(), m.no_peer_tasks, m.no_peer_calls, Ms(m.no_peer_tunefarm_seconds).c_str(),
                m.untimed_tasks, m.untuned_tasks, m.default_won_tasks, m.stalled_tasks,
                Ratio(m.RatioWithoutStalls()).c_str());
  }
  std::printf("\ntunefarm / oneDNN is oneDNN's model time over tunefarm's (above 1: tunefarm faster), over the\n"
              "compared tasks; the tasks without a oneDNN peer are not in it. A stalled task (!: oneDNN below\n"
              "half its 1-thread speed after the retries) is in it with its slow oneDNN time; the last column\n"
              "leaves the stalled tasks out.\n");
  for (const TaskResult& r : results) {
    if (!r.has_peer) std::printf("no oneDNN peer: %s: %s\n", r.task.c_str(), r.peer.c_str());
  }
}

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s MODEL.onnx --db LOG [--threads 1,2] [--repeat R] [--retries N] [--only TASK,...]\n"
               "       [--set NAME=VALUE] [--target T]\n",
               argv0);
  std::exit(2);
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm::bench;
  Options o;
  std::string target;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--only") o.only = SplitList(value());
    else if (a == "--repeat") o.compare.repeat = std::max(3, std::atoi(value().c_str()));
    else if (a == "--retries") o.compare.retries = std::max(0, std::atoi(value().c_str()));
    else if (a == "--target") target = value();
    else if (a == "--set") {
      std::string kv = value();
      size_t eq = kv.find('=');
      if (eq == std::string::npos) Usage(argv[0]);
      o.dims[kv.substr(0, eq)] = std::atoll(kv.substr(eq + 1).c_str());
    } else if (a == "--threads") {
      o.compare.threads.clear();
      for (const auto& s : SplitList(value())) o.compare.threads.push_back(std::max(1, std::atoi(s.c_str())));
    } else if (!a.empty() && a[0] != '-' && o.model.empty()) {
      o.model = a;
    } else {
      Usage(argv[0]);
    }
  }
  if (o.model.empty() || o.db.empty() || o.compare.threads.empty()) Usage(argv[0]);
  if (target.empty()) {
    o.compare.record_target = DefaultRecordTargetString();
  } else {
    auto t = RecordTargetString(target);
    if (!t.ok()) {
      std::fprintf(stderr, "--target: %s\n", t.status().ToString().c_str());
      return 2;
    }
    o.compare.record_target = *t;
  }
  tunefarm::frontend::ImportOptions import;
  import.dim_values = o.dims;
  auto model = tunefarm::frontend::ImportOnnx(o.model, import);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
    return 2;
  }
  for (const std::string& name : o.only) {
    bool found = std::any_of(model->tasks.begin(), model->tasks.end(),
                             [&](const tunefarm::frontend::ModelTask& t) { return t.workload.name == name; });
    if (!found) {
      std::fprintf(stderr, "--only: model %s has no task %s (`tunefarm import %s` lists them)\n", model->name.c_str(),
                   name.c_str(), o.model.c_str());
      return 2;
    }
  }
  tunefarm::database::OpenOptions read_only;
  read_only.read_only = true;
  auto db = tunefarm::database::Database::Open(o.db, read_only);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  std::printf("host: %s\n", HostDescription().c_str());
  std::vector<TaskResult> results;
  int rc = 0;
  for (const tunefarm::frontend::ModelTask& task : model->tasks) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), task.workload.name) == o.only.end()) continue;
    results.push_back(CompareTask(*model, task, **db, o.compare));
    for (const TaskCell& c : results.back().cells) rc |= c.wrong ? 1 : 0;
  }
  PrintTaskTable(o, results);
  PrintModelTable(o, *model, results);
  return rc;
}
