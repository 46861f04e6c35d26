// tunefarm_batch_spread: does a fleet measure a job's batches in parallel?
//
// Runs the same tuning job (a small matmul, --trials 64, batches of 16) on a
// tuner daemon in this process (plaintext on loopback, a fresh tuning log
// each time) with 1 and then with N `tunefarm worker --device test` processes
// of one device key. The test device takes --latency-ms per candidate, one
// after another, as a real device times its kernels, so the job's wall time
// is what its batches cost on the fleet: with the batches spread over N
// workers it is about 1/N of one worker's, plus the search, which is the same
// for both. Prints each run's wall time (submit to done), how many candidates
// each worker measured, and the ratio. Goal: at most 0.35 with 4 workers.
//
//   build/bench/fleet/tunefarm_batch_spread [--workers 4] [--latency-ms 1500] [--trials 64]
//       [--batch 16] [--max-in-flight 16]
//
// Exit 0 when both jobs finished with every trial; 1 otherwise (the ratio is
// reported, not enforced: tests/daemon/fleet_spread_test.cpp asserts it).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/rpc/fleet_config.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/daemon/daemon.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

extern char** environ;

namespace {

using namespace tunefarm;
namespace fs = std::filesystem;

constexpr char kKey[] = "bench-spread";
constexpr char kMatmul[] =
    "workload mm(M = 64, N = 64, K = 64) {\n"
    "  A = input f32[M, K]\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

struct Run {
  bool ok = false;
  double seconds = 0;
  int64_t trials = 0;
  std::vector<int64_t> measured;  // per worker
  std::string error;
};

Run TimeJob(int workers, int latency_ms, int trials, int batch, int max_in_flight) {
  Run run;
  fs::path dir = fs::temp_directory_path() / ("tunefarm_batch_spread_" + std::to_string(::getpid()) + "_" +
                                              std::to_string(workers));
  fs::remove_all(dir);
  fs::create_directories(dir);
  rpc::FleetConfig config;
  config.listen = "127.0.0.1:0";
  config.db = (dir / "farm.db").string();
  config.config_dir = std::string(TUNEFARM_SOURCE_DIR) + "/configs";
  config.security.insecure = true;  // loopback only; the bench measures dispatch, not TLS
  config.limits.max_in_flight_per_worker = max_in_flight;
  daemon::Daemon daemon(config);
  if (Status st = daemon.Start(); !st.ok()) {
    run.error = "the daemon did not start: " + st.ToString();
    return run;
  }
  const std::string address = "127.0.0.1:" + std::to_string(daemon.port());
  const std::string binary = std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm";
  std::vector<pid_t> pids;
  for (int i = 0; i < workers; ++i) {
    std::vector<std::string> args = {binary, "worker", "--tuner", address, "--insecure", "--device", "test",
                                     "--device-key", kKey, "--max-in-flight", std::to_string(max_in_flight),
                                     "--test-latency-ms", std::to_string(latency_ms)};
    std::vector<char*> argvv;
    for (auto& a : args) argvv.push_back(a.data());
    argvv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    if (posix_spawn(&pid, binary.c_str(), &actions, nullptr, argvv.data(), environ) == 0) pids.push_back(pid);
    posix_spawn_file_actions_destroy(&actions);
  }
  rpc::ClientSecurity security;
  security.insecure = true;
  auto channel = rpc::MakeChannel(address, security);
  auto stub = v1::Tuner::NewStub(*channel);
  auto fleet = [&] {
    v1::FleetStatusResponse resp;
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, security, 5);
    (void)stub->FleetStatus(&ctx, v1::FleetStatusRequest(), &resp);
    return resp;
  };
  for (int i = 0; i < 300 && fleet().workers_size() < workers; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (fleet().workers_size() < workers) {
    run.error = "only " + std::to_string(fleet().workers_size()) + " of " + std::to_string(workers) +
                " workers connected";
  } else {
    v1::SubmitJobRequest req;
    req.add_workloads(kMatmul);
    req.set_device_key(kKey);
    req.set_trials(trials);
    req.set_batch_size(batch);
    req.set_job_id("spread");
    v1::Job job;
    const auto start = std::chrono::steady_clock::now();
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, security, 10);
    grpc::Status st = stub->SubmitJob(&ctx, req, &job);
    while (st.ok() && job.status() != "done" && job.status() != "failed" && job.status() != "cancelled") {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      grpc::ClientContext get_ctx;
      rpc::PrepareCall(&get_ctx, security, 10);
      v1::GetJobRequest get;
      get.set_job_id("spread");
      st = stub->GetJob(&get_ctx, get, &job);
    }
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    run.trials = job.trials_done();
    run.ok = st.ok() && job.status() == "done" && job.trials_done() == trials;
    if (!st.ok()) run.error = st.error_message();
    else if (!run.ok) run.error = "the job ended " + job.status() + " " + job.error();
    const v1::FleetStatusResponse status = fleet();
    for (const v1::WorkerStatus& w : status.workers()) run.measured.push_back(w.measured());
  }
  for (pid_t p : pids) kill(p, SIGTERM);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  daemon.Drain();
  fs::remove_all(dir);
  return run;
}

void Print(int workers, const Run& r) {
  std::string per_worker;
  for (int64_t m : r.measured) per_worker += (per_worker.empty() ? "" : " ") + std::to_string(m);
  std::printf("  %d worker(s): %7.1f s, %lld trials; candidates measured per worker: %s%s%s\n", workers, r.seconds,
              (long long)r.trials, per_worker.c_str(), r.error.empty() ? "" : "; ", r.error.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int workers = Flag(argc, argv, "--workers", 4);
  const int latency_ms = Flag(argc, argv, "--latency-ms", 1500);
  const int trials = Flag(argc, argv, "--trials", 64);
  const int batch = Flag(argc, argv, "--batch", 16);
  const int max_in_flight = Flag(argc, argv, "--max-in-flight", 16);
  if (workers < 2 || latency_ms < 0 || trials < 1 || batch < 1 || max_in_flight < 1) {
    std::fprintf(stderr, "usage: %s [--workers N>=2] [--latency-ms MS] [--trials T] [--batch B] [--max-in-flight M]\n",
                 argv[0]);
    return 1;
  }
  std::printf("tunefarm batch spread: one job, %d trials in batches of %d, test device at %d ms a candidate\n",
              trials, batch, latency_ms);
  std::fflush(stdout);
  const Run one = TimeJob(1, latency_ms, trials, batch, max_in_flight);
  Print(1, one);
  std::fflush(stdout);
  const Run many = TimeJob(workers, latency_ms, trials, batch, max_in_flight);
  Print(workers, many);
  if (one.ok && many.ok) {
    std::printf("  %d workers / 1 worker: %.3f (goal <= 0.35 with 4; ideal %.3f)\n", workers,
                many.seconds / one.seconds, 1.0 / workers);
  }
  return one.ok && many.ok ? 0 : 1;
}
