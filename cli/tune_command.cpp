// `tunefarm tune`: tune workloads on this machine, recording every
// measurement in the tuning log; rerunning resumes.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/frontend/model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_curve.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tunefarm/worker/cuda_device.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::cli {

std::string DefaultConfigDir() {
  // Source tree or installed layout: configs/ next to the working directory,
  // else <prefix>/share/tunefarm/configs beside bin/.
  if (std::filesystem::exists("configs/sketch")) return "configs";
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto installed = exe.parent_path().parent_path() / "share" / "tunefarm" / "configs";
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return "";
}

namespace {

std::atomic<bool> g_stop{false};

void OnInterrupt(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second Ctrl-C: leave now
  const char msg[] = "\ntunefarm: stopping after the batch in flight (Ctrl-C again to quit at once)\n";
  (void)!write(2, msg, sizeof(msg) - 1);
}

struct TuneOptionsCli {
  std::vector<std::string> workloads;
  std::string target = "llvm";
  int trials = 200;
  std::string db = "tunefarm.db";
  int batch_size = 16;
  std::string curve = "tunefarm-curve.svg";
  bool random_search = false;
  bool no_confirm_best = false;
  int final_candidates = tuner::TuneOptions().final_candidates;
  int final_measurements = tuner::TuneOptions().final_measurements;
  int threads = 0;
  int gpu = 0;
  uint64_t seed = 1;
  int repeat = 3;
  double min_repeat_ms = 20;
  std::string config_dir;
  std::vector<std::string> overrides;
  int warm_start = 1000;
  int transfer_check = int(costmodel::XGBoostCostModelOptions().transfer_check_min_pairs);
  double epsilon = tuner::SearchOptions().epsilon;
  int population = tuner::SearchOptions().population;
  int generations = tuner::SearchOptions().generations;
  int choice_seeds = tuner::SearchOptions().choice_seeds;
  int seeds_per_choice = tuner::SearchOptions().seeds_per_choice;
  int choice_picks = tuner::SearchOptions().choice_picks;
};

std::string Clock(double s) {
  int t = int(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60) : fmt::format("{}:{:02}", t / 60, t % 60);
}

// The run's machine speed (tuner/machine_speed.h), after the results: one
// line when it held, and what it means for the ranking when it did not.
void PrintMachineSpeed(const tuner::MachineSpeed::Summary& s) {
  if (s.batches == 0) return;  // nothing was probed (every candidate failed)
  if (s.slow_batches == 0) {
    fmt::print("machine speed steady: every batch within {:.0f}% of the fastest this run measured (speed probe)\n",
               (1 - tuner::MachineSpeed::kSlowSpeed) * 100);
    return;
  }
  fmt::print("machine speed: {} of {} batches ({} kernels) ran below {:.0f}% of the fastest speed this run measured, "
             "the slowest at {:.0f}% (speed probe): something else was using the machine. Kernels timed then look "
             "slower than they are, so the ranking favours those timed in the fast stretches; keep the machine quiet "
             "while tuning\n",
             s.slow_batches, s.batches, s.slow_results, tuner::MachineSpeed::kSlowSpeed * 100, s.slowest * 100);
}

// The model's estimated latency, sum of calls x time over its tasks: the best
// time where a task has one, else its default's; "(k of n tasks timed)" while
// some have neither.
std::string ModelLatency(const std::vector<tuner::TaskStatus>& tasks, const std::vector<double>& weights) {
  double best = 0, before = 0;
  size_t timed = 0;
  for (size_t i = 0; i < tasks.size() && i < weights.size(); ++i) {
    double t = tasks[i].best_seconds > 0 ? tasks[i].best_seconds : tasks[i].default_seconds;
    if (t <= 0) continue;
    ++timed;
    best += weights[i] * t;
    before += weights[i] * (tasks[i].default_seconds > 0 ? tasks[i].default_seconds : t);
  }
  std::string s = fmt::format("model {:.3f} ms (default {:.3f} ms)", best * 1e3, before * 1e3);
  if (timed < tasks.size()) s += fmt::format(" ({} of {} tasks timed)", timed, tasks.size());
  return s;
}

int Tune(const TuneOptionsCli& o) {
  auto overrides = ParseOverrides(o.overrides);
  if (!overrides.ok()) {
    fmt::print(stderr, "error: {}\n", overrides.status().message());
    return kExitUserError;
  }
  std::vector<tuner::TuneTask> tasks;
  std::vector<double> weights;  // per task: how often its model runs it (1 for a workload file)
  bool has_model = false;
  for (const std::string& path : o.workloads) {
    if (frontend::IsModelPath(path)) {
      // A model's tasks, each weighted by its calls: the task scheduler
      // spends trials where the model spends its time.
      auto model = frontend::ImportOnnx(path, {*overrides});
      if (!model.ok()) {
        fmt::print(stderr, "error: {}\n", model.status().message());
        return model.status().code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
      }
      fmt::print(stderr, "model {}: {} tasks for its {} calls (`tunefarm import {}` lists them)\n", path,
                 model->tasks.size(), model->CallCount(), path);
      for (frontend::ModelTask& t : model->tasks) {
        auto task = tuner::MakeTuneTask(t.workload, double(t.calls.size()));
        if (!task.ok()) {
          fmt::print(stderr, "error: {}: task {}: {}\n", path, t.workload.name, task.status().message());
          return kExitInternalError;
        }
        tasks.push_back(std::move(task).value());
        weights.push_back(double(t.calls.size()));
      }
      has_model = true;
      continue;
    }
    ParseOptions po;
    po.param_overrides = *overrides;
    auto w = ParseWorkloadFile(path, po);
    if (!w.ok()) {
      fmt::print(stderr, "error: {}\n", w.status().message());
      return kExitUserError;
    }
    auto task = tuner::MakeTuneTask(*w);
    if (!task.ok()) {
      fmt::print(stderr, "error: {}\n", task.status().message());
      return kExitUserError;
    }
    tasks.push_back(std::move(task).value());
    weights.push_back(1);
  }
  auto target = ParseTargetField("--target", o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  // --threads is the target's -num-threads: the records are keyed by the
  // thread count they were timed at (TuneOptions::measure).
  if (o.threads > 0 && target->num_threads > 0 && target->num_threads != o.threads) {
    fmt::print(stderr, "error: --threads {} contradicts the target's -num-threads={} ('{}'); give one of them\n",
               o.threads, target->num_threads, o.target);
    return kExitUserError;
  }
  if (o.threads > 0) target->num_threads = o.threads;
  LocalMeasurerOptions mo;
  std::optional<database::HardwareFingerprint> gpu_fingerprint;  // records' device: the GPU, not this CPU
  std::string device_key = tuner::TuneOptions().device;
  if (target->kind == "cuda") {
    // Tuned on this machine's GPU, which must be the target's architecture.
    auto gpu = QueryCudaDevice(o.gpu);
    if (!gpu.ok()) {
      fmt::print(stderr, "error: target '{}' is tuned on this machine's GPU {}, and there is none: {}\n", o.target,
                 o.gpu, gpu.status().message());
      return kExitUserError;
    }
    if (gpu->Arch() != target->arch) {
      fmt::print(stderr, "error: target '{}' is for {}, but GPU {} here is a {} ({}); tune for '{}'\n", o.target,
                 target->arch, o.gpu, gpu->name, gpu->Arch(), gpu->TargetText());
      return kExitUserError;
    }
    mo.device = "cuda:" + std::to_string(o.gpu);
    gpu_fingerprint = CudaFingerprint(*gpu, CudaToolchain());
    device_key = "cuda-" + gpu->Arch();  // as a fleet worker on this GPU registers
  } else if (!target->is_host()) {
    fmt::print(stderr, "error: target '{}' cannot run on this machine; tuning for it needs a worker on such a device\n",
               o.target);
    return kExitUserError;
  }
  auto db = database::Database::Open(o.db);
  if (!db.ok()) {
    fmt::print(stderr, "error: {}\n", db.status().message());
    return kExitUserError;
  }
  LocalMeasurer measurer(mo);
  std::unique_ptr<costmodel::XGBoostCostModel> model;
  if (!o.random_search) {
    costmodel::XGBoostCostModelOptions model_options;
    model_options.transfer_check_min_pairs = static_cast<size_t>(o.transfer_check);
    model = std::make_unique<costmodel::XGBoostCostModel>(model_options);
  }

  tuner::TuneOptions options;
  options.target = *target;
  options.device_fingerprint = gpu_fingerprint;
  options.device = device_key;
  options.trials = o.trials;
  options.batch_size = o.batch_size;
  options.seed = o.seed;
  options.config_dir = o.config_dir.empty() ? DefaultConfigDir() : o.config_dir;
  options.measure.repeat = o.repeat;
  options.measure.min_repeat_ms = o.min_repeat_ms;
  options.measure.num_threads = o.threads;
  options.warm_start_records = o.warm_start;
  options.search.epsilon = o.epsilon;
  options.search.population = o.population;
  options.search.generations = o.generations;
  options.search.choice_seeds = o.choice_seeds;
  options.search.seeds_per_choice = o.seeds_per_choice;
  options.search.choice_picks = o.choice_picks;
  options.confirm_best = !o.no_confirm_best;
  options.final_candidates = o.final_candidates;
  options.final_measurements = o.final_measurements;
  tuner::TuningLoop loop(options, db->get(), &measurer, model.get());

  fmt::print(stderr, "tuning {} workload(s) for {}\n  log {}  budget {} trials  search {} (pool {} x {} generations, epsilon {}, up to {} choice seeds, seed {})\n",
             tasks.size(), target->ToString(), o.db, o.trials,
             o.random_search ? "random" : "evolutionary + XGBoost cost model", o.population, o.generations, o.epsilon,
             o.choice_seeds, o.seed);
  g_stop = false;
  auto previous = std::signal(SIGINT, OnInterrupt);
  bool tty = isatty(2);
  auto on_progress = [&](const tuner::Progress& p) {
    const tuner::TaskStatus& t = (*p.tasks)[p.last_task];
    double best = t.best_seconds > 0 ? t.flops / t.best_seconds / 1e9 : 0;
    double speedup = (t.best_seconds > 0 && t.default_seconds > 0) ? t.default_seconds / t.best_seconds : 0;
    std::string vs_default = speedup > 0 ? fmt::format("{:5.1f}x default", speedup) : std::string("default n/a");
    std::string line = fmt::format("[{:>4}/{}] {:<18} best {:8.2f} GFLOP/s ({})  errors {:<3} elapsed {}  ETA {}",
                                   p.trials_done, p.trials_total, t.name, best, vs_default, t.errors, Clock(p.elapsed_s),
                                   Clock(p.eta_s));
    if (has_model) line += "  " + ModelLatency(*p.tasks, weights);
    if (p.resumed_trials > 0) line += fmt::format("  ({} resumed)", p.resumed_trials);
    if (p.final_round) line += "  final round";
    // A slow stretch shows while it lasts: the kernels of this batch look
    // slower than they are (tuner/machine_speed.h).
    if (p.machine_speed > 0 && p.machine_speed < tuner::MachineSpeed::kSlowSpeed) {
      line += fmt::format("  machine at {:.0f}% speed", p.machine_speed * 100);
    }
    if (tty) {
      fmt::print(stderr, "\r{}\x1b[K", line);
    } else {
      fmt::print(stderr, "{}\n", line);
    }
  };
  Status st = loop.Run(std::move(tasks), g_stop, on_progress);
  std::signal(SIGINT, previous);
  if (tty) fmt::print(stderr, "\n");

  std::vector<tuner::CurveSeries> series;
  size_t name_width = 20;
  for (const tuner::TaskStatus& t : loop.status()) name_width = std::max(name_width, t.name.size());
  fmt::print("\n{:<{}} {:>7} {:>7} {:>14} {:>14} {:>9}  {}\n", "workload", name_width, "trials", "errors",
             "default GFLOP/s", "best GFLOP/s", "speed-up", "best record");
  for (const tuner::TaskStatus& t : loop.status()) {
    double best = t.best_seconds > 0 ? t.flops / t.best_seconds / 1e9 : 0;
    double base = t.default_seconds > 0 ? t.flops / t.default_seconds / 1e9 : 0;
    fmt::print("{:<{}} {:>7} {:>7} {:>14.2f} {:>14.2f} {:>8.1f}x  #{}\n", t.name, name_width, t.trials, t.errors, base,
               best, base > 0 ? best / base : 0.0, t.best_record_id);
    series.push_back({t.name, t.curve, base, loop.machine_speed().SlowTrials(int(series.size()))});
  }
  for (const tuner::TaskStatus& t : loop.status()) {
    // A log tuned by an older tunefarm: its records' decisions were lined up
    // with this sketch's before their mutations (search.h, Realign).
    if (t.realigned_seeds > 0) {
      fmt::print("{}: {} of the log's best records were written by an older design space and realigned with this one\n",
                 t.name, t.realigned_seeds);
    }
    // A log tuned by an older tunefarm (or LLVM, or on other hardware): its
    // fastest records were timed again before the search (RefreshStaleRecords).
    if (t.stale_records > 0 && t.refreshed > 0) {
      fmt::print("{}: {} of the log's records were timed with {}; their {} fastest were measured again with this "
                 "build's code, and only this build's times set the best\n",
                 t.name, t.stale_records, t.stale_from, t.refreshed);
    } else if (t.stale_records > 0) {
      fmt::print("{}: {} of the log's records were timed with {}; none beat this build's own best, so none was "
                 "measured again\n",
                 t.name, t.stale_records, t.stale_from);
    }
    if (t.confirmations > 0) {
      fmt::print("{}: {} of the trials measured a kernel again; the best is ranked by the mean of its "
                 "measurements, as `tunefarm compile` ranks it\n",
                 t.name, t.confirmations);
    }
    if (t.final_trials > 0) {
      fmt::print("{}: the final round measured the {} fastest kernel{} again ({} trial{}), up to {} measurements "
                 "each\n",
                 t.name, t.finalists, t.finalists == 1 ? "" : "s", t.final_trials, t.final_trials == 1 ? "" : "s",
                 o.final_measurements);
    }
    if (t.unaligned_seeds > 0) {
      fmt::print("{}: {} of the log's best records fit this design space by no single added or dropped decision "
                 "(another rule set, or written by hand) and were mutated as written\n",
                 t.name, t.unaligned_seeds);
    }
  }
  if (has_model) fmt::print("estimated {}\n", ModelLatency(loop.status(), weights));
  PrintMachineSpeed(loop.machine_speed().Summarize());
  if (loop.transfer_records() > 0) {
    fmt::print("cost model warm-started from {} records of {} other workload(s) in the log\n", loop.transfer_records(),
               loop.transfer_workloads());
    const costmodel::TransferReport& r = model->transfer_report();
    if (r.dropped) {
      fmt::print("  dropped after {} own records: on {} measured pairs the model of this job's records alone ranked "
                 "{:.2f}, with the other workloads' {:.2f}\n",
                 r.own_records_at_drop, r.pairs, r.own_only, r.with_transfer);
    } else if (r.pairs > 0) {
      fmt::print("  kept: on {} measured pairs it ranked {:.2f}, the model of this job's records alone {:.2f}\n", r.pairs,
                 r.with_transfer, r.own_only);
    }
  }
  if (!o.curve.empty()) {
    std::ofstream(o.curve) << tuner::TuningCurveSvg(series, "tunefarm tune: best GFLOP/s vs trials");
    fmt::print("tuning curve: {}\n", o.curve);
  }
  if (!st.ok()) {
    fmt::print(stderr, "error: {}\n", st.ToString());
    return st.code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
  }
  if (g_stop) fmt::print(stderr, "stopped early; every measurement so far is in {} (rerun to resume)\n", o.db);
  return kExitOk;
}

}  // namespace

void AddTuneCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<TuneOptionsCli>();
  CLI::App* cmd = app.add_subcommand("tune", "Tune workloads on this machine, recording every measurement");
  cmd->footer(
      "Searches each workload's schedule space (sketch rules + evolutionary search guided by an\n"
      "XGBoost cost model), measures candidates isolated in a runner process, checks each against\n"
      "the reference, and appends every measurement to the tuning log (--db). Rerunning with the\n"
      "same log resumes: earlier trials count toward --trials and are never measured again.\n"
      "Ctrl-C stops after the batch in flight, keeping everything measured.\n\n"
      "An ONNX model (.onnx) is tuned as its tasks (`tunefarm import` lists them), each weighted by\n"
      "how often the model calls it, so trials go where the model spends its time; progress shows\n"
      "the model's estimated latency (sum of calls x best time). --set gives symbolic dimensions values.\n\n"
      "Example:\n"
      "  tunefarm tune configs/workloads/gmm_512.tf --trials 200 --db tunefarm.db\n"
      "  tunefarm compile configs/workloads/gmm_512.tf --db tunefarm.db -o gmm.o\n"
      "  tunefarm tune resnet50.onnx --trials 2000 --db resnet50.db");
  cmd->add_option("workloads", o->workloads, "Workload files (.tf) or ONNX models (.onnx); several form one job")->required()->check(CLI::ExistingFile);
  cmd->add_option("--target", o->target, "Target (must run here)")->capture_default_str();
  cmd->add_option("--trials", o->trials, "Total measurement budget of the job")->capture_default_str()->check(CLI::Range(1, 1000000));
  cmd->add_option("--db", o->db, "Tuning log (SQLite), created if missing")->capture_default_str();
  cmd->add_option("--batch-size", o->batch_size, "Candidates measured per round")->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--curve", o->curve, "Where to write the tuning curve (SVG); empty: none")->capture_default_str();
  cmd->add_flag("--random", o->random_search, "Random search (no cost model): the baseline");
  cmd->add_flag("--no-confirm-best", o->no_confirm_best,
                "Do not measure a new best again (with the next batch): each new kernel then ranks by its "
                "one measurement, which timing noise favours");
  cmd->add_option("--final-candidates", o->final_candidates,
                  "After the search, measure each workload's K fastest kernels again (the final round), then the "
                  "next ones while its trials last, so that the one handed out ranks first by the mean of several "
                  "measurements, not by its luckiest one. Its trials come out of --trials (16 per workload for K=4, "
                  "at most an eighth). For machines whose speed holds steady: where it drifts, the new times "
                  "come from another stretch than the ones they are ranked against. 0: no final round")
      ->capture_default_str()->check(CLI::Range(0, 64));
  cmd->add_option("--final-measurements", o->final_measurements,
                  "Measurements each kernel of the final round ends with, counting earlier ones")
      ->capture_default_str()->check(CLI::Range(2, 16));
  cmd->add_option("--threads", o->threads,
                  "Threads for parallel loops when measuring (default: all cores). Records are kept per thread "
                  "count: --threads N tunes for the target 'llvm -num-threads=N', the target to compile with")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("--gpu", o->gpu,
                  "For a cuda target ('cuda -arch=sm_90'): the GPU of this machine that measures (the driver's "
                  "ordinal, as in CUDA_VISIBLE_DEVICES order); its architecture must be the target's")
      ->capture_default_str()->check(CLI::Range(0, 63));
  cmd->add_option("--seed", o->seed, "Seed of the search")->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "Timed repeat groups per candidate")->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--min-repeat-ms", o->min_repeat_ms, "Minimum duration of one repeat group")->capture_default_str();
  cmd->add_option("--configs", o->config_dir, "Folder with sketch/cpu.toml (default: ./configs or the installed one)");
  cmd->add_option("--set", o->overrides, "Override a workload's shape parameter (--set M=256) or give a model's symbolic dimension a value (--set batch=1)");
  cmd->add_option("--warm-start", o->warm_start,
                  "Records of other workloads in the log (same target) the cost model learns from first; "
                  "dropped once a model of the job's own records ranks its measured batches at least as well; 0: off")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  cmd->add_option("--transfer-check", o->transfer_check,
                  "Measured pairs of this job both cost models must rank before the other workloads' records can be "
                  "dropped; 0: keep them for the whole job, unchecked")
      ->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd->add_option("--epsilon", o->epsilon,
                  "Share of each batch picked at random among the round's fresh random samples, not by the cost model (epsilon-greedy)")
      ->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--population", o->population,
                  "Programs per generation of the evolutionary search (the first: up to 16 of the log's best, the "
                  "best of each sketch choice (--choice-seeds) and random samples; later ones: the best-scored "
                  "quarter plus mutations of it)")
      // Below 32 the first generation could hold only the log's seeds, all
      // measured already, and the search would end the run early.
      ->capture_default_str()->check(CLI::Range(32, 100000));
  cmd->add_option("--generations", o->generations,
                  "Generations of mutation per search round (0: random samples ranked by the cost model)")
      ->capture_default_str()->check(CLI::Range(0, 100));
  cmd->add_option("--choice-seeds", o->choice_seeds,
                  "Parents of each search round besides the log's 16 fastest records: the fastest record of each "
                  "value a sketch choice (padding, vector axis, unroll depth) has taken that those lack, at most this "
                  "many (0: the fastest only)")
      ->capture_default_str()->check(CLI::Range(0, 64));
  cmd->add_option("--seeds-per-choice", o->seeds_per_choice,
                  "Of those, how many one value may have (its fastest records): more keeps a choice the fastest "
                  "records lack, such as DEP's unpadded kernels, explored longer")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--choice-picks", o->choice_picks,
                  "Places of each batch kept for those values: the best-scored new program of each value the "
                  "fastest records lack, however the cost model ranks it, at most half of the places the model "
                  "fills (0: none)")
      ->capture_default_str()->check(CLI::Range(0, 16));
  cmd->callback([o, exit_code] { *exit_code = Tune(*o); });
}

}  // namespace tunefarm::cli
