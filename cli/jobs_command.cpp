// `tunefarm jobs submit|watch|cancel|list` and `tunefarm fleet status`:
// clients of a running daemon (`tunefarm serve`).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "client_options.h"
#include "commands.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/daemon/compile_service.h"
#include "tunefarm/daemon/job_spec.h"
#include "tunefarm/frontend/model.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::cli {

namespace {

struct JobsFlags {
  ClientFlags client;
  std::vector<std::string> workloads;  // workload files and ONNX models
  std::vector<std::string> overrides;  // --set: shape parameters, a model's symbolic dimensions
  std::string target, device_key, job_id, status;
  int trials = 200, batch_size = 0;
  uint64_t seed = 0;
  bool watch = false;
};

// The daemon's answer, plus what to do about the common ones.
int Fail(const std::string& what, const grpc::Status& st, const ClientFlags& f) {
  std::string hint;
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      hint = fmt::format("\n  is `tunefarm serve` running at {}? Over TLS, --ca must be the CA that signed its "
                         "certificate; plaintext needs --insecure on both sides", f.tuner);
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      hint = "\n  pass --token-file with a client token from the daemon's [auth] client_tokens, or --cert/--key";
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      hint = fmt::format("\n  no answer within --timeout {} s", f.timeout_s);
      break;
    default:
      break;
  }
  fmt::print(stderr, "error: {}: {}{}\n", what, st.error_message(), hint);
  return st.error_code() == grpc::StatusCode::INTERNAL ? kExitInternalError : kExitUserError;
}

// A task's weight; 0 is a daemon from before weights, whose tasks all weigh 1.
double Weight(const v1::TaskProgress& t) { return t.weight() > 0 ? t.weight() : 1; }

void PrintJob(const v1::Job& job) {
  fmt::print("{}  {:<9} {:>6}/{:<6} trials  device key {}  target {}\n", job.job_id(), job.status(), job.trials_done(),
             job.trial_budget(), job.device_key(), job.target());
  // A model's task names are long: one column as wide as the longest.
  size_t width = 20;
  for (const v1::TaskProgress& t : job.tasks()) width = std::max(width, t.name().size());
  for (const v1::TaskProgress& t : job.tasks()) {
    fmt::print("    {:<{}}  weight {:<4g} trials {:>5}  errors {:>3}  best {:9.2f} GFLOP/s  {:6.1f}x default  record #{}",
               t.name(), width, Weight(t), t.trials(), t.errors(), t.best_gflops(), t.speedup(), t.best_record_id());
    if (t.confirmations() > 0) {
      fmt::print("  ({} trial{} measured a new best again)", t.confirmations(), t.confirmations() == 1 ? "" : "s");
    }
    fmt::print("\n");
  }
  if (!job.warning().empty()) fmt::print("    warning: {}\n", job.warning());
  if (!job.error().empty()) fmt::print("    error: {}\n", job.error());
}

// Streams the job's progress until it ends; exit code from its final status.
int Watch(v1::Tuner::Stub& stub, const rpc::ClientSecurity& sec, const std::string& id, const ClientFlags& flags) {
  grpc::ClientContext ctx;
  rpc::PrepareCall(&ctx, sec, 7 * 24 * 3600.0);  // a watch lasts as long as the job
  auto reader = stub.WatchJob(&ctx, [&] { v1::GetJobRequest r; r.set_job_id(id); return r; }());
  v1::Job job;
  std::string warned;
  while (reader->Read(&job)) {
    if (!job.warning().empty() && job.warning() != warned) fmt::print(stderr, "warning: {}\n", job.warning());
    warned = job.warning();
    std::string best;
    for (const v1::TaskProgress& t : job.tasks()) {
      std::string weight = Weight(t) != 1 ? fmt::format(" (weight {:g})", Weight(t)) : "";
      best += fmt::format("  {}{} {:.2f} GFLOP/s", t.name(), weight, t.best_gflops());
    }
    fmt::print(stderr, "[{:>5}/{}] {}{}  ETA {:.0f} s\n", job.trials_done(), job.trial_budget(), job.status(), best,
               job.eta_s());
  }
  grpc::Status st = reader->Finish();
  if (!st.ok()) return Fail("watching job " + id, st, flags);
  PrintJob(job);
  return job.status() == "done" ? kExitOk : kExitUserError;
}

// The request's workloads from the files and models on the command line: a
// workload file's text (with --set, the workload as overridden), or each task
// of a model as PrintWorkload writes it, weighted by its calls. Weights are
// sent only when a model is among them; otherwise every workload weighs 1.
// A user error says what to do; a model import's internal error is Internal.
Status AddJobInputs(const JobsFlags& f, v1::SubmitJobRequest* req) {
  TF_ASSIGN_OR_RETURN(auto dims, ParseOverrides(f.overrides));
  std::vector<double> weights;
  bool any_model = false;
  for (const std::string& path : f.workloads) {
    if (frontend::IsModelPath(path)) {
      TF_ASSIGN_OR_RETURN(frontend::Model model, frontend::ImportOnnx(path, {dims}));
      fmt::print(stderr, "model {}: {} tasks for its {} calls (`tunefarm import {}` lists them)\n", path,
                 model.tasks.size(), model.CallCount(), path);
      for (const frontend::ModelTask& t : model.tasks) {
        req->add_workloads(PrintWorkload(t.workload));
        weights.push_back(double(t.calls.size()));
      }
      any_model = true;
    } else if (!f.overrides.empty()) {
      TF_ASSIGN_OR_RETURN(Workload w, LoadWorkload(path, f.overrides));
      req->add_workloads(PrintWorkload(w));
      weights.push_back(1);
    } else {
      std::ifstream in(path);
      if (!in) return Status::InvalidArgument("cannot read workload file '" + path + "'");
      std::stringstream ss;
      ss << in.rdbuf();
      req->add_workloads(ss.str());
      weights.push_back(1);
    }
  }
  // Said here, before anything is sent: the daemon's refusal would not say
  // that a model's tasks are what count.
  if (size_t(req->workloads_size()) > daemon::kMaxJobWorkloads) {
    return Status::InvalidArgument(fmt::format(
        "{} workloads{}: a fleet job tunes at most {}; tune a larger model on one machine with `tunefarm tune`, or "
        "write its tasks with `tunefarm import -o DIR` and submit them as several jobs",
        req->workloads_size(), any_model ? " (each task of a model is one)" : "", daemon::kMaxJobWorkloads));
  }
  if (any_model) {
    for (double w : weights) req->add_workload_weights(w);
  }
  return Status::OK();
}

int Run(const std::string& action, const JobsFlags& f) {
  rpc::ClientSecurity sec;
  auto channel = ChannelFromFlags(f.client, &sec);
  if (!channel.ok()) {
    fmt::print(stderr, "error: {}\n", channel.status().message());
    return kExitUserError;
  }
  auto stub = v1::Tuner::NewStub(*channel);
  grpc::ClientContext ctx;
  if (action == "submit") {
    // Before the call's deadline starts: importing a large model takes a while.
    v1::SubmitJobRequest req;
    if (Status inputs = AddJobInputs(f, &req); !inputs.ok()) {
      fmt::print(stderr, "error: {}\n", inputs.message());
      return inputs.code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
    }
    rpc::PrepareCall(&ctx, sec, f.client.timeout_s);
    req.set_target(f.target);
    req.set_device_key(f.device_key);
    req.set_trials(f.trials);
    req.set_batch_size(f.batch_size);
    req.set_seed(f.seed);
    req.set_job_id(f.job_id);
    v1::Job job;
    grpc::Status st = stub->SubmitJob(&ctx, req, &job);
    if (!st.ok()) return Fail("submitting the job", st, f.client);
    fmt::print("{}\n", job.job_id());
    // Accepted (it may be a worker still starting), but said at once: a
    // mistyped key would otherwise only show as a job that never starts.
    if (!job.warning().empty() && !f.watch) fmt::print(stderr, "warning: {}\n", job.warning());
    return f.watch ? Watch(*stub, sec, job.job_id(), f.client) : kExitOk;
  }
  rpc::PrepareCall(&ctx, sec, f.client.timeout_s);
  if (action == "watch") return Watch(*stub, sec, f.job_id, f.client);
  if (action == "cancel" || action == "get") {
    v1::GetJobRequest req;
    req.set_job_id(f.job_id);
    v1::Job job;
    grpc::Status st = action == "cancel" ? stub->CancelJob(&ctx, req, &job) : stub->GetJob(&ctx, req, &job);
    if (!st.ok()) return Fail(action + " " + f.job_id, st, f.client);
    PrintJob(job);
    return kExitOk;
  }
  if (action == "list") {
    v1::ListJobsRequest req;
    req.set_status(f.status);
    v1::ListJobsResponse resp;
    grpc::Status st = stub->ListJobs(&ctx, req, &resp);
    if (!st.ok()) return Fail("listing jobs", st, f.client);
    if (resp.jobs().empty()) fmt::print("no jobs\n");
    for (const v1::Job& job : resp.jobs()) PrintJob(job);
    return kExitOk;
  }
  // fleet status
  v1::FleetStatusResponse resp;
  grpc::Status st = stub->FleetStatus(&ctx, v1::FleetStatusRequest(), &resp);
  if (!st.ok()) return Fail("reading the fleet status", st, f.client);
  fmt::print("{:<28} {:<16} {:<6} {:>9} {:>9} {:>7} {:>9} {:>10}\n", "worker", "device key", "device", "in flight",
             "measured", "errors", "per s", "last seen");
  for (const v1::WorkerStatus& w : resp.workers()) {
    fmt::print("{:<28} {:<16} {:<6} {:>4}/{:<4} {:>9} {:>7} {:>9.1f} {:>7.0f} ms\n", w.worker_id(), w.device_key(),
               w.device(), w.in_flight(), w.max_in_flight(), w.measured(), w.errors(), w.results_per_s(),
               w.last_seen_ms());
  }
  fmt::print("{} worker(s); {} candidate(s) queued; {} re-dispatched after a lost worker; {} late duplicate(s) dropped\n",
             resp.workers_size(), resp.queued(), resp.redispatched(), resp.duplicates_dropped());
  auto joined = [](const auto& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  };
  for (const v1::WorkerStatus& w : resp.workers()) {
    const std::string version = w.tunefarm_version().empty() ? "of unknown version" : w.tunefarm_version();
    if (!w.missing_instructions().empty()) {
      fmt::print("worker {} (tunefarm {}) cannot replay {}: it is sent no candidate that uses them, and jobs on "
                 "device key {} search without them; upgrade it\n",
                 w.worker_id(), version, joined(w.missing_instructions()), w.device_key());
    }
    if (!w.missing_annotations().empty()) {
      fmt::print("worker {} (tunefarm {}) lacks the loop annotations {}: it is sent no candidate that annotates "
                 "with them, and jobs on device key {} search without them; upgrade it\n",
                 w.worker_id(), version, joined(w.missing_annotations()), w.device_key());
    }
  }
  return kExitOk;
}

}  // namespace

void AddJobsCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<JobsFlags>();
  CLI::App* jobs = app.add_subcommand("jobs", "Submit, watch, cancel and list tuning jobs on a daemon");
  jobs->require_subcommand(1);
  jobs->footer(
      "\nExamples (a loopback daemon started with --insecure):\n"
      "  tunefarm jobs submit configs/workloads/gmm_512.tf --device-key cpu-znver4 --trials 500 --insecure --watch\n"
      "  tunefarm jobs submit resnet50.onnx --device-key cpu-znver4 --trials 2000 --insecure   (its tasks, weighted by "
      "their calls)\n"
      "  tunefarm jobs list --insecure\n"
      "  tunefarm jobs cancel job-1a2b3c --insecure\n"
      "Over TLS: --tuner farm.example:7878 --ca ca.pem --token-file ~/.tunefarm-token");
  CLI::App* submit = jobs->add_subcommand("submit", "Submit a tuning job (prints its id)");
  submit->add_option("workloads", f->workloads,
                     "Workload files (.tf) or ONNX models (.onnx: each of its tasks, weighted by its calls; at most " +
                         std::to_string(daemon::kMaxJobWorkloads) + " workloads in all)")
      ->required()
      ->check(CLI::ExistingFile);
  submit->add_option("--set", f->overrides,
                     "Override a workload's shape parameter (--set M=256) or give a model's symbolic dimension a "
                     "value (--set batch=1)");
  submit->add_option("--device-key", f->device_key, "Workers that measure it (see `tunefarm fleet status`)")->required();
  submit->add_option("--target", f->target, "Target string (default: llvm, the workers' host CPU)");
  submit->add_option("--trials", f->trials, "Trial budget over all workloads (the daemon takes 1.." +
                                                std::to_string(daemon::kMaxTuneTrials) + ")")
      ->check(CLI::Range(1, daemon::kMaxTuneTrials))
      ->capture_default_str();
  submit->add_option("--batch-size", f->batch_size, "Candidates per measured batch (default 16)");
  submit->add_option("--seed", f->seed, "Search seed");
  submit->add_option("--job-id", f->job_id, "Choose the job id (default: generated)");
  submit->add_flag("--watch", f->watch, "Stay and print progress until the job ends");
  CLI::App* watch = jobs->add_subcommand("watch", "Print a job's progress until it ends");
  watch->add_option("job_id", f->job_id, "Job id")->required();
  CLI::App* get = jobs->add_subcommand("get", "Print a job's state once");
  get->add_option("job_id", f->job_id, "Job id")->required();
  CLI::App* cancel = jobs->add_subcommand("cancel", "Cancel a job (everything measured stays in the log)");
  cancel->add_option("job_id", f->job_id, "Job id")->required();
  CLI::App* list = jobs->add_subcommand("list", "List jobs");
  list->add_option("--status", f->status, "Only jobs in this state (pending, running, done, failed, cancelled)");
  for (CLI::App* c : {submit, watch, get, cancel, list}) {
    AddClientFlags(c, &f->client);
    std::string name = c->get_name();
    c->callback([f, exit_code, name] { *exit_code = Run(name, *f); });
  }
}

void AddFleetCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<JobsFlags>();
  CLI::App* fleet = app.add_subcommand("fleet", "Inspect a daemon's worker fleet");
  fleet->require_subcommand(1);
  fleet->footer(
      "\nExamples:\n"
      "  tunefarm fleet status --insecure                         a loopback daemon started with --insecure\n"
      "  tunefarm fleet status --tuner farm.example:7878 --ca ca.pem --token-file ~/.tunefarm-token");
  CLI::App* status = fleet->add_subcommand("status", "Workers, device keys, in-flight candidates, throughput, errors");
  AddClientFlags(status, &f->client);
  status->callback([f, exit_code] { *exit_code = Run("fleet-status", *f); });
}

}  // namespace tunefarm::cli
