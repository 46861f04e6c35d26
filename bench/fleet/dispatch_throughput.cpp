// Dispatch throughput through the tuner daemon's fleet layer.
//
// Starts the Fleet gRPC service (the daemon's FleetDispatcher and
// FleetServiceImpl) on loopback, connects N `tunefarm worker --device test`
// processes — a TEST DEVICE that answers instantly with a synthetic time, so
// what is measured is dispatch (queueing, gRPC streams, result matching), not
// kernels — and pushes candidates through FleetDispatcher::Measure from
// several job threads at once. Prints candidates per second and the load
// average. Goal: at least 2,000 candidates/s with 16 workers.
//
//   build/bench/fleet/tunefarm_dispatch_throughput [--workers 16] [--candidates 40000]
//       [--jobs 4] [--batch 256] [--max-in-flight 64]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"

extern char** environ;

namespace {

double LoadAverage() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunefarm;
  const int workers = Flag(argc, argv, "--workers", 16);
  const int candidates = Flag(argc, argv, "--candidates", 40000);
  const int jobs = Flag(argc, argv, "--jobs", 4);
  const int batch = Flag(argc, argv, "--batch", 256);
  const int max_in_flight = Flag(argc, argv, "--max-in-flight", 64);

  daemon::FleetDispatcher dispatcher;
  rpc::ServerSecurity security;
  security.insecure = true;  // loopback only; the bench measures dispatch, not TLS
  rpc::FleetLimits limits;
  limits.max_in_flight_per_worker = max_in_flight;
  daemon::FleetServiceImpl fleet(&dispatcher, security, limits);
  auto server = rpc::StartServer("127.0.0.1:0", security, limits.max_message_bytes, {&fleet});
  if (!server.ok()) {
    std::fprintf(stderr, "error: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::string binary = std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm";
  std::string address = "127.0.0.1:" + std::to_string(server->port);
  std::string in_flight = std::to_string(max_in_flight);
  std::vector<pid_t> pids;
  for (int i = 0; i < workers; ++i) {
    std::vector<std::string> args = {binary, "worker", "--tuner", address, "--insecure", "--device", "test",
                                     "--device-key", "bench-test-device", "--max-in-flight", in_flight};
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
  for (int i = 0; i < 300 && dispatcher.WorkerCount() < workers; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (dispatcher.WorkerCount() < workers) {
    std::fprintf(stderr, "error: only %d of %d workers connected\n", dispatcher.WorkerCount(), workers);
    for (pid_t p : pids) kill(p, SIGKILL);
    return 1;
  }
  // Realistic candidates: a workload text and a trace of typical size.
  const std::string workload =
      "workload mm(M = 512, N = 512, K = 512) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
      "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
  const std::string trace(1200, 't');
  std::atomic<int> next{0};
  std::atomic<int64_t> answered{0}, failed{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) {
    threads.emplace_back([&, j] {
      while (true) {
        int start = next.fetch_add(batch);
        if (start >= candidates) return;
        std::vector<MeasureInput> inputs;
        for (int i = start; i < std::min(candidates, start + batch); ++i) {
          inputs.push_back({"c" + std::to_string(i), workload, trace + std::to_string(i), "llvm"});
        }
        auto results = dispatcher.Measure("bench-test-device", inputs, MeasureOptions(), nullptr);
        answered += int64_t(results.size());
        for (const auto& r : results) failed += r.error != MeasureErrorKind::kNone;
      }
    });
  }
  for (auto& t : threads) t.join();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  daemon::FleetSnapshot snap = dispatcher.Snapshot();
  std::printf("tunefarm fleet dispatch (test device: answers instantly, no kernels run)\n");
  std::printf("  workers %d, max in flight %d each, %d job threads, batches of %d\n", workers, max_in_flight, jobs, batch);
  std::printf("  %lld candidates answered in %.2f s: %.0f candidates/s (the daemon is to keep >= 100000 with 16 workers)\n", (long long)answered.load(),
              secs, double(answered.load()) / secs);
  std::printf("  failed %lld, duplicates dropped %lld; load average %.2f on %u cores\n", (long long)failed.load(),
              (long long)snap.duplicates_dropped, LoadAverage(), std::thread::hardware_concurrency());
  for (pid_t p : pids) kill(p, SIGTERM);
  for (pid_t p : pids) waitpid(p, nullptr, 0);
  fleet.Shutdown();
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return answered.load() == candidates ? 0 : 1;
}
