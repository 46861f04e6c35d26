// Stream capacity of the tuner daemon's Fleet service: how many threads and
// how much memory the daemon side holds with thousands of worker streams
// open, and the dispatch rate across all of them.
//
// This process is the daemon side only (FleetDispatcher, FleetServiceImpl,
// the gRPC server on loopback); it starts a copy of itself (--client) that
// opens the streams, as TEST DEVICES that register and answer every candidate
// at once (tests/daemon/test_device_streams.h: callback reactors spread over
// --channels connections). Reported, for this process: threads and resident
// memory before the streams, with all registered (the most seen while they
// registered, too), and after --batches batches of --in-flight candidates per
// stream; then the copy is killed and the time until the service and the
// dispatcher have forgotten every stream.
//
//   build/bench/fleet/tunefarm_fleet_streams [--streams 5000] [--channels 50]
//       [--in-flight 2] [--batches 3]
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "test_device_streams.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"

extern char** environ;

namespace {

const char* const kKey = "bench-streams";

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

int Threads() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// A line of /proc/self/status ("VmRSS", "VmHWM") in MiB.
double StatusMiB(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atof(line.c_str() + field.size() + 1) / 1024.0;
  }
  return 0;
}

double Since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Polls `pred` every 10 ms for up to `seconds`, calling `sample` each time.
template <class Pred, class Sample>
bool WaitFor(Pred pred, double seconds, Sample sample) {
  const auto start = std::chrono::steady_clock::now();
  while (!pred()) {
    sample();
    if (Since(start) > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The client copy: opens the streams, then holds them until it is killed.
int RunClient(const std::string& address, int streams, int channels, int in_flight) {
  tunefarm::daemon::testing::TestDeviceStreams fleet(address, streams, channels, kKey, in_flight);
  while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tunefarm;
  const int streams = Flag(argc, argv, "--streams", 5000);
  const int channels = std::max(1, Flag(argc, argv, "--channels", 50));
  const int in_flight = Flag(argc, argv, "--in-flight", 2);
  const int batches = Flag(argc, argv, "--batches", 3);
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--client") == 0) return RunClient(argv[i + 1], streams, channels, in_flight);
  }
  spdlog::set_level(spdlog::level::warn);  // not two lines per stream
  // Connections, not streams, take descriptors.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }

  daemon::FleetDispatcher dispatcher;
  rpc::ServerSecurity security;
  security.insecure = true;  // loopback only; the bench measures streams, not TLS
  rpc::FleetLimits limits;
  limits.lease_ms = 10 * 60 * 1000;  // the test-device streams send no heartbeats
  limits.max_in_flight_per_worker = in_flight;
  daemon::FleetServiceImpl fleet(&dispatcher, security, limits);
  auto server = rpc::StartServer("127.0.0.1:0", security, limits.max_message_bytes, {&fleet});
  if (!server.ok()) {
    std::fprintf(stderr, "error: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const int threads_idle = Threads();
  const double rss_idle = StatusMiB("VmRSS");
  int peak_threads = threads_idle;
  auto sample = [&] { peak_threads = std::max(peak_threads, Threads()); };

  std::vector<std::string> args = {"/proc/self/exe",  "--client",   "127.0.0.1:" + std::to_string(server->port),
                                   "--streams",       std::to_string(streams), "--channels", std::to_string(channels),
                                   "--in-flight",     std::to_string(in_flight)};
  std::vector<char*> argvv;
  for (auto& a : args) argvv.push_back(a.data());
  argvv.push_back(nullptr);
  pid_t client = -1;
  if (posix_spawn(&client, "/proc/self/exe", nullptr, nullptr, argvv.data(), environ) != 0) {
    std::fprintf(stderr, "error: cannot start the client copy\n");
    return 1;
  }
  auto fail = [&](const std::string& what) {
    std::fprintf(stderr, "error: %s\n", what.c_str());
    kill(client, SIGKILL);
    waitpid(client, nullptr, 0);
    return 1;
  };
  const auto t0 = std::chrono::steady_clock::now();
  if (!WaitFor([&] { return dispatcher.WorkerCount(kKey) == streams; }, 120, sample)) {
    return fail("only " + std::to_string(dispatcher.WorkerCount(kKey)) + " of " + std::to_string(streams) +
                " streams registered in 120 s");
  }
  const double register_s = Since(t0);
  const int threads_open = Threads();
  const double rss_open = StatusMiB("VmRSS");
  peak_threads = std::max(peak_threads, threads_open);

  // Batches that fill every stream at once, one after another.
  const int per_batch = streams * in_flight;
  const std::string trace(1200, 't');
  int64_t answered = 0, failed = 0;
  const auto t1 = std::chrono::steady_clock::now();
  for (int b = 0; b < batches; ++b) {
    std::vector<MeasureInput> inputs;
    inputs.reserve(per_batch);
    for (int i = 0; i < per_batch; ++i) {
      std::string id = "b" + std::to_string(b) + "c" + std::to_string(i);
      inputs.push_back({id, "workload w() {}", trace + id, "llvm"});
    }
    for (const MeasureResult& r : dispatcher.Measure(kKey, inputs, MeasureOptions(), nullptr)) {
      ++answered;
      failed += r.error != MeasureErrorKind::kNone;
    }
    sample();
  }
  const double measure_s = Since(t1);
  const int threads_measured = Threads();
  const double rss_measured = StatusMiB("VmRSS");
  peak_threads = std::max(peak_threads, threads_measured);

  // The client goes away at once (SIGKILL): every stream breaks.
  const auto t2 = std::chrono::steady_clock::now();
  kill(client, SIGKILL);
  waitpid(client, nullptr, 0);
  const bool forgotten =
      WaitFor([&] { return fleet.OpenStreams() == 0 && dispatcher.WorkerCount() == 0; }, 120, sample);
  const double close_s = Since(t2);

  std::printf("tunefarm fleet streams (test devices in another process: answer instantly, no kernels run)\n");
  std::printf("  %d streams over %d connections, %d in flight each; daemon side only, %u cores\n", streams, channels,
              in_flight, std::thread::hardware_concurrency());
  std::printf("  threads: %d idle, %d with every stream registered, %d after the batches; at most %d\n", threads_idle,
              threads_open, threads_measured, peak_threads);
  std::printf("  resident memory: %.1f MiB idle, %.1f MiB registered (%.1f KiB a stream), %.1f MiB after the "
              "batches; peak %.1f MiB\n",
              rss_idle, rss_open, (rss_open - rss_idle) * 1024 / std::max(1, streams), rss_measured,
              StatusMiB("VmHWM"));
  std::printf("  registered in %.2f s; %d batches of %d: %lld answered (%lld failed) in %.2f s, %.0f candidates/s\n",
              register_s, batches, per_batch, (long long)answered, (long long)failed, measure_s,
              double(answered) / std::max(1e-9, measure_s));
  std::printf("  client killed: every stream forgotten %s %.2f s\n", forgotten ? "after" : "NOT within", close_s);
  fleet.Shutdown();
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  return forgotten && failed == 0 && answered == int64_t(batches) * per_batch ? 0 : 1;
}
