// The layer suite's tuned kernels beside oneDNN, in one process, 1 and 2 threads.
//
//   tunefarm_layers_vs_onednn --db LOG [--model resnet50|mobilenet_v2|bert] [--only L,...]
//                             [--at N] [--threads 1,2] [--repeat 5] [--retries 2] [--with-default]
//                             [--layers DIR] [--target 'llvm -num-threads=1']
//
// For each layer of configs/layers/layers.tsv (or those of one model, or the
// named ones) the kernel is the log's best record of the layer (with --at N:
// among its first N records), checked against oneDNN's output and timed
// beside it (kernel_comparison.h; oneDNN's op from the layer's op class and
// parameters, onednn_spec.h). A layer without records is listed as not
// tuned. Prints one row per layer (GFLOP/s and tunefarm / oneDNN at each
// thread count), then per thread count the geometric mean of the ratios over
// the timed layers and the worst layer, the same per kind of layer and per
// model (with the model's time ratio: its layers' oneDNN time over
// tunefarm's, each layer counted as often as the model uses it). Exit code 1
// when a kernel's result differs from oneDNN's.
//
// A row where oneDNN at several threads runs below half its 1-thread speed
// is a stall, not oneDNN's speed: a co-tenant held a core, and oneDNN's
// OpenMP barriers wait for the descheduled thread (a small layer then takes
// milliseconds per call). Such a row is timed again (--retries, default 2,
// keeping the attempt where oneDNN was fastest); one still stalled is marked
// `!` and left out of the summary.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "host_description.h"
#include "layers/layer_manifest.h"
#include "tune/kernel_comparison.h"
#include "tune/onednn_spec.h"
#include "tune/tune_log.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::bench {
namespace {

struct Options {
  std::string db;
  std::string layer_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs/layers";
  std::string model;
  std::vector<std::string> only;
  int budget = 0;  // 0: every record in the log
  std::vector<int> threads = {1, 2};
  int repeat = 5;
  int retries = 2;  // of a stalled row
  bool with_default = false;
  std::string record_target;
};

struct LayerResult {
  LayerEntry entry;
  std::string kind;  // "conv 3x3 s2", "depthwise s1", "dense", ...
  int trials = 0;    // records of the layer in the log
  double flops = 0;
  std::string problem;           // set when the layer could not be compared at all
  std::vector<ThreadsRow> rows;  // one per thread count; cells[0] is the tuned kernel
};

int64_t ParamOr(const Workload& w, const std::string& name, int64_t fallback) {
  for (const auto& [n, v] : w.params) {
    if (n == name) return v;
  }
  return fallback;
}

// The kind of layer the summary groups by: the op, and a convolution's kernel and stride.
std::string KindOf(const LayerEntry& e, const Workload& w) {
  std::string stride = " s" + std::to_string(ParamOr(w, "SH", 1));
  if (e.op == "conv2d") {
    std::string r = std::to_string(ParamOr(w, "R", 0)), s = std::to_string(ParamOr(w, "S", 0));
    return "conv " + r + "x" + s + stride;
  }
  if (e.op == "depthwise_conv2d") return "depthwise" + stride;
  if (e.op == "dense") return e.act == "none" ? "dense" : "dense+" + e.act;
  return "batch matmul";
}

// oneDNN at this row's thread count ran below half its 1-thread speed.
bool Stalled(const LayerResult& r, size_t t) {
  if (t >= r.rows.size() || r.rows[t].threads <= 1) return false;
  for (const ThreadsRow& one : r.rows) {
    if (one.threads == 1) return r.rows[t].onednn_gflops < 0.5 * one.onednn_gflops;
  }
  return false;
}

LayerResult RunLayer(const Options& o, const LayerEntry& e, database::Database& db) {
  LayerResult r;
  r.entry = e;
  auto w = ParseWorkloadFile(o.layer_dir + "/" + e.name + ".tf");
  if (!w.ok()) {
    r.problem = w.status().ToString();
    return r;
  }
  r.kind = KindOf(e, *w);
  r.flops = w->Flops();
  auto spec = LayerOneDnnSpec(e.op, e.act, w->params);
  if (!spec.ok()) {
    r.problem = spec.status().ToString();
    return r;
  }
  auto trials = LoadTrials(db, StructuralHashHex(*w), o.record_target);
  if (trials.ok()) r.trials = int(trials->size());
  std::vector<Kernel> kernels;
  kernels.push_back(TunedKernel(*w, trials, o.budget));
  if (o.with_default) kernels.push_back(DefaultKernel(*w));
  if (!kernels[0].provenance.empty()) std::printf("kernel: %s\n", kernels[0].provenance.c_str());
  ComparisonOptions options;
  options.threads = o.threads;
  options.repeat = o.repeat;
  auto rows = CompareWithOneDnn(*w, kernels, *spec, options);
  if (!rows.ok()) {
    r.problem = rows.status().ToString();
    return r;
  }
  r.rows = std::move(rows).value();
  for (size_t t = 0; t < r.rows.size(); ++t) {
    for (int attempt = 0; attempt < o.retries && Stalled(r, t); ++attempt) {
      std::printf("oneDNN stalled at %d threads (%.1f GFLOP/s): timing again\n", r.rows[t].threads,
                  r.rows[t].onednn_gflops);
      std::this_thread::sleep_for(std::chrono::seconds(1));
      options.threads = {r.rows[t].threads};
      auto again = CompareWithOneDnn(*w, kernels, *spec, options);
      if (again.ok() && again->size() == 1 && (*again)[0].onednn_gflops > r.rows[t].onednn_gflops) {
        r.rows[t] = std::move((*again)[0]);
      }
    }
  }
  return r;
}

const Cell* TunedCell(const LayerResult& r, size_t t) {
  if (!r.problem.empty() || t >= r.rows.size()) return nullptr;
  return &r.rows[t].cells[0];
}

std::string Short(const std::string& note) { return note.size() > 48 ? note.substr(0, 48) + "..." : note; }

void PrintLayerTable(const Options& o, const std::vector<LayerResult>& results) {
  std::printf("\n| layer | op | uses | trials | load |");
  for (int t : o.threads) std::printf(" oneDNN GFLOP/s, %dT | tunefarm GFLOP/s, %dT | tunefarm / oneDNN, %dT |", t, t, t);
  std::printf("\n|---|---|---|---|---|");
  for (size_t i = 0; i < o.threads.size(); ++i) std::printf("---|---|---|");
  std::printf("\n");
  for (const LayerResult& r : results) {
    std::printf("| %s | %s | %d | %d | %.2f |", r.entry.name.c_str(), r.kind.c_str(), r.entry.uses, r.trials,
                r.rows.empty() ? 0.0 : r.rows[0].load);
    if (!r.problem.empty()) {
      std::printf(" %s |\n", Short(r.problem).c_str());
      continue;
    }
    for (size_t t = 0; t < r.rows.size(); ++t) {
      const Cell& c = *TunedCell(r, t);
      const char* stalled = Stalled(r, t) ? " !" : "";
      if (c.note.empty()) {
        std::printf(" %.1f%s | %.1f | %.2fx%s |", r.rows[t].onednn_gflops, stalled, c.gflops, c.ratio, stalled);
      } else {
        std::printf(" %.1f | %s | — |", r.rows[t].onednn_gflops, Short(c.note).c_str());
      }
    }
    std::printf("\n");
  }
}

// Geometric mean and worst ratio of one group of layers at one thread count.
struct Aggregate {
  int timed = 0;
  int stalled = 0;  // rows left out: oneDNN stalled
  double log_sum = 0;
  double worst = 0;
  std::string worst_layer;
  double onednn_seconds = 0, tunefarm_seconds = 0;  // weighted by uses

  void Add(const LayerResult& r, size_t t) {
    const Cell* c = TunedCell(r, t);
    if (c == nullptr || !c->note.empty() || c->ratio <= 0) return;
    if (Stalled(r, t)) {
      ++stalled;
      return;
    }
    ++timed;
    log_sum += std::log(c->ratio);
    if (worst_layer.empty() || c->ratio < worst) {
      worst = c->ratio;
      worst_layer = r.entry.name;
    }
    onednn_seconds += r.entry.uses * r.flops / (r.rows[t].onednn_gflops * 1e9);
    tunefarm_seconds += r.entry.uses * r.flops / (c->gflops * 1e9);
  }
  double Geomean() const { return timed > 0 ? std::exp(log_sum / timed) : 0; }
};

void PrintSummary(const Options& o, const std::vector<LayerResult>& results) {
  int untimed = 0;
  for (const LayerResult& r : results) {
    const Cell* c = TunedCell(r, 0);
    if (c == nullptr || !c->note.empty()) ++untimed;
  }
  std::printf("\nSummary: %zu layers, %d not timed at 1 thread (not tuned, wrong or failed: see the table)\n\n",
              results.size(), untimed);
  std::printf("| group | threads | layers timed | geomean tunefarm / oneDNN | worst layer | time ratio, uses-weighted |"
              " left out (oneDNN stalled, !) |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  auto print_group = [&](const std::string& group, auto&& member) {
    for (size_t t = 0; t < o.threads.size(); ++t) {
      Aggregate a;
      for (const LayerResult& r : results) {
        if (member(r)) a.Add(r, t);
      }
      if (a.timed == 0 && a.stalled == 0) continue;
      if (a.timed == 0) {
        std::printf("| %s | %d | 0 | — | — | — | %d |\n", group.c_str(), o.threads[t], a.stalled);
        continue;
      }
      std::printf("| %s | %d | %d | **%.2fx** | %s (%.2fx) | %.2fx | %d |\n", group.c_str(), o.threads[t], a.timed,
                  a.Geomean(), a.worst_layer.c_str(), a.worst, a.onednn_seconds / a.tunefarm_seconds, a.stalled);
    }
  };
  print_group("all layers", [](const LayerResult&) { return true; });
  for (const std::string& model : LayerSuiteModels()) {
    print_group("model " + model, [&](const LayerResult& r) { return r.entry.InModel(model); });
  }
  std::vector<std::string> kinds;
  for (const LayerResult& r : results) {
    if (!r.kind.empty() && std::find(kinds.begin(), kinds.end(), r.kind) == kinds.end()) kinds.push_back(r.kind);
  }
  std::sort(kinds.begin(), kinds.end());
  for (const std::string& kind : kinds) {
    print_group(kind, [&](const LayerResult& r) { return r.kind == kind; });
  }
}

[[noreturn]] void Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s --db LOG [--model resnet50|mobilenet_v2|bert] [--only L,...] [--at N] [--threads 1,2]\n"
               "       [--repeat R] [--retries N] [--with-default] [--layers DIR] [--target T]\n",
               argv0);
  std::exit(2);
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  using namespace tunefarm::bench;
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(argv[0]);
      return argv[++i];
    };
    if (a == "--db") o.db = value();
    else if (a == "--layers") o.layer_dir = value();
    else if (a == "--model") o.model = value();
    else if (a == "--only") o.only = SplitList(value());
    else if (a == "--at") o.budget = std::max(0, std::atoi(value().c_str()));
    else if (a == "--repeat") o.repeat = std::max(3, std::atoi(value().c_str()));
    else if (a == "--retries") o.retries = std::max(0, std::atoi(value().c_str()));
    else if (a == "--with-default") o.with_default = true;
    else if (a == "--target") {
      auto target = RecordTargetString(value());
      if (!target.ok()) {
        std::fprintf(stderr, "--target: %s\n", target.status().ToString().c_str());
        return 2;
      }
      o.record_target = *target;
    } else if (a == "--threads") {
      o.threads.clear();
      for (const auto& s : SplitList(value())) o.threads.push_back(std::max(1, std::atoi(s.c_str())));
    } else {
      Usage(argv[0]);
    }
  }
  if (o.db.empty() || o.threads.empty()) Usage(argv[0]);
  if (o.record_target.empty()) o.record_target = DefaultRecordTargetString();
  auto manifest = ReadLayerManifest(o.layer_dir + "/layers.tsv");
  if (!manifest.ok()) {
    std::fprintf(stderr, "%s\n", manifest.status().ToString().c_str());
    return 1;
  }
  auto layers = SelectLayers(*manifest, o.model, o.only);
  if (!layers.ok()) {
    std::fprintf(stderr, "%s\n", layers.status().ToString().c_str());
    return 2;
  }
  tunefarm::database::OpenOptions read_only;
  read_only.read_only = true;
  auto db = tunefarm::database::Database::Open(o.db, read_only);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 1;
  }
  std::printf("host: %s\n", HostDescription().c_str());
  std::vector<LayerResult> results;
  int rc = 0;
  for (const LayerEntry& e : *layers) {
    results.push_back(RunLayer(o, e, **db));
    const LayerResult& r = results.back();
    if (!r.problem.empty()) std::printf("%s: %s\n", e.name.c_str(), r.problem.c_str());
    for (const ThreadsRow& row : r.rows) {
      for (const Cell& c : row.cells) rc |= c.wrong ? 1 : 0;
    }
  }
  PrintLayerTable(o, results);
  PrintSummary(o, results);
  return rc;
}
