// The Fleet service holds thousands of worker streams with a bounded number
// of threads (gRPC's callback API: no thread per stream). 5,000 test-device
// streams from this process, on 50 loopback connections of 100 streams each,
// register at once; one batch of two candidates per stream is dispatched
// across all of them and answered; then every stream goes away and the
// service and the dispatcher forget them all. The process's threads (server
// and clients together) stay under 200 throughout, and every stage has a
// deadline, so the test fails rather than hangs.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "test_device_streams.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"

namespace tunefarm::daemon {
namespace {

using testing::TestDeviceStreams;

constexpr int kStreams = 5000;
constexpr int kChannels = 50;
constexpr int kInFlight = 2;  // per stream: the batch fills every stream at once
constexpr int kMaxThreads = 200;
constexpr auto kStageDeadline = std::chrono::seconds(40);
const char* const kKey = "many-streams";

int ThreadCount() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(FleetManyStreams, FiveThousandStreamsRegisterAndMeasureABatchWithBoundedThreads) {
  // Connections, not streams, take descriptors: two per connection (client
  // and server side) and a margin for gRPC and the test binary.
  constexpr rlim_t kNeededFiles = 2 * kChannels + 256;
  rlimit files{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &files), 0);
  if (files.rlim_max != RLIM_INFINITY && files.rlim_max < kNeededFiles) {
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit " << files.rlim_max << " is below the " << kNeededFiles
                 << " descriptors this test needs (ulimit -Hn)";
  }
  if (files.rlim_cur != RLIM_INFINITY && files.rlim_cur < kNeededFiles) {
    files.rlim_cur = std::min<rlim_t>(files.rlim_max, kNeededFiles);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &files), 0);
  }
  const auto start = std::chrono::steady_clock::now();
  const int threads_before = ThreadCount();

  FleetDispatcher dispatcher;
  rpc::ServerSecurity security;
  security.insecure = true;
  rpc::FleetLimits limits;
  limits.lease_ms = 10 * 60 * 1000;  // the streams send no heartbeats
  limits.max_in_flight_per_worker = kInFlight;
  FleetServiceImpl service(&dispatcher, security, limits);
  auto server = rpc::StartServer("127.0.0.1:0", security, limits.max_message_bytes, {&service});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  int peak_threads = ThreadCount();
  auto sample = [&] {
    peak_threads = std::max(peak_threads, ThreadCount());
    return true;
  };

  {
    TestDeviceStreams streams("127.0.0.1:" + std::to_string(server->port), kStreams, kChannels, kKey, kInFlight);
    // All registered at once: every stream open, none ended.
    ASSERT_TRUE(TestDeviceStreams::WaitFor(
        [&] { return sample() && streams.counters().registered.load() == kStreams; }, kStageDeadline))
        << streams.counters().registered.load() << " of " << kStreams << " streams registered, "
        << streams.counters().done.load() << " ended";
    EXPECT_EQ(dispatcher.WorkerCount(kKey), kStreams);
    EXPECT_EQ(service.OpenStreams(), kStreams);
    const double registered_s = SecondsSince(start);
    sample();

    // One batch across all of them.
    std::vector<MeasureInput> batch;
    for (int i = 0; i < kStreams * kInFlight; ++i) {
      std::string id = "c" + std::to_string(i);
      batch.push_back({id, "workload w() {}", "tunefarm-trace 1\n# " + id + "\n", "llvm"});
    }
    std::atomic<bool> abort{false};
    std::vector<MeasureResult> results;
    std::thread job([&] { results = dispatcher.Measure(kKey, batch, MeasureOptions(), &abort); });
    const bool measured = TestDeviceStreams::WaitFor(
        [&] { return sample() && streams.counters().answered.load() >= int64_t(batch.size()); }, kStageDeadline);
    if (!measured) abort = true;
    job.join();
    ASSERT_TRUE(measured) << streams.counters().answered.load() << " of " << batch.size() << " candidates answered";
    ASSERT_EQ(results.size(), batch.size());
    for (const MeasureResult& r : results) {
      ASSERT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id << ": " << r.error_message;
      ASSERT_TRUE(r.synthetic) << r.candidate_id;
    }
    EXPECT_EQ(streams.counters().with_work.load(), kStreams) << "the batch was not spread over every stream";
    const double measured_s = SecondsSince(start);
    sample();

    // Every stream goes away: the service and the dispatcher forget them all.
    streams.Close();
    EXPECT_EQ(streams.counters().failed.load(), 0);
    EXPECT_TRUE(TestDeviceStreams::WaitFor([&] { return sample() && service.OpenStreams() == 0; }, kStageDeadline))
        << service.OpenStreams() << " sessions still open";
    EXPECT_EQ(dispatcher.WorkerCount(), 0);
    std::printf("%d streams: registered after %.2f s, batch of %zu measured after %.2f s, closed after %.2f s; "
                "threads %d before, at most %d\n",
                kStreams, registered_s, batch.size(), measured_s, SecondsSince(start), threads_before, peak_threads);
  }
  EXPECT_LT(peak_threads, kMaxThreads) << "threads before the server started: " << threads_before;
  service.Shutdown();
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server->server->Wait();
}

}  // namespace
}  // namespace tunefarm::daemon
