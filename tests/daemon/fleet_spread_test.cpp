// A fleet measures a batch in parallel across the workers of its key: the
// daemon's Fleet service on loopback, with in-process `--device test` workers
// (FleetWorker + TestDeviceMeasurer) that take a fixed time per candidate, one
// candidate after another as a real device does. The same 64 candidates in
// batches of 16 are timed with one worker and with four; four must take at
// most 0.35 of one's wall time (ideal: 0.25). bench/fleet/batch_spread.cpp is
// the same check through a whole tuning job, at 1.5 s a candidate.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"
#include "tunefarm/worker/fleet_worker.h"

namespace tunefarm::daemon {
namespace {

constexpr double kLatencyMs = 40;  // per candidate
constexpr int kBatches = 4, kBatchSize = 16;
const char* const kKey = "spread-test";

struct Timing {
  double seconds = 0;
  int workers_that_measured = 0;
  int answered = 0;
};

// Times kBatches batches of kBatchSize, one after another as a job sends
// them, over `workers` test-device workers (max_in_flight 16 each).
Timing TimeBatches(int workers) {
  Timing timing;
  FleetDispatcher dispatcher;
  rpc::ServerSecurity security;
  security.insecure = true;
  FleetServiceImpl service(&dispatcher, security, rpc::FleetLimits());
  auto server = rpc::StartServer("127.0.0.1:0", security, 16 << 20, {&service});
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  if (!server.ok()) return timing;
  std::vector<std::unique_ptr<FleetWorker>> fleet;
  std::vector<std::thread> threads;
  for (int i = 0; i < workers; ++i) {
    FleetWorkerOptions o;
    o.tuner_address = "127.0.0.1:" + std::to_string(server->port);
    o.security.insecure = true;
    o.device = "test";
    o.device_key = kKey;
    o.hostname = "w" + std::to_string(i);
    o.max_in_flight = 16;
    o.test_latency_ms = kLatencyMs;
    o.initial_backoff = std::chrono::milliseconds(50);
    o.log = [](std::string_view) {};
    auto created = FleetWorker::Create(std::move(o));
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) break;
    fleet.push_back(std::move(created).value());
    threads.emplace_back([w = fleet.back().get()] { (void)w->Run(); });
  }
  for (int i = 0; i < 500 && dispatcher.WorkerCount(kKey) < workers; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(dispatcher.WorkerCount(kKey), workers);
  if (dispatcher.WorkerCount(kKey) == workers) {
    const auto start = std::chrono::steady_clock::now();
    for (int b = 0; b < kBatches; ++b) {
      std::vector<MeasureInput> inputs;
      for (int i = 0; i < kBatchSize; ++i) {
        std::string id = "b" + std::to_string(b) + "c" + std::to_string(i);
        inputs.push_back({id, "workload w() {}", "tunefarm-trace 1\n# " + id + "\n", "llvm"});
      }
      for (const MeasureResult& r : dispatcher.Measure(kKey, inputs, MeasureOptions(), nullptr)) {
        timing.answered += r.error == MeasureErrorKind::kNone;
      }
    }
    timing.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const WorkerSnapshot& w : dispatcher.Snapshot().workers) timing.workers_that_measured += w.measured > 0;
  }
  for (auto& w : fleet) w->Stop();
  for (auto& t : threads) t.join();
  service.Shutdown();
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server->server->Wait();
  return timing;
}

TEST(FleetSpread, FourWorkersMeasureABatchInAtMostAThirdOfOnesTime) {
  const Timing one = TimeBatches(1);
  const Timing four = TimeBatches(4);
  ASSERT_EQ(one.answered, kBatches * kBatchSize);
  ASSERT_EQ(four.answered, kBatches * kBatchSize);
  EXPECT_EQ(four.workers_that_measured, 4);
  // One worker times the 64 candidates one after another.
  EXPECT_GE(one.seconds, kBatches * kBatchSize * kLatencyMs / 1000);
  EXPECT_LE(four.seconds, 0.35 * one.seconds) << "1 worker: " << one.seconds << " s, 4 workers: " << four.seconds
                                              << " s";
}

}  // namespace
}  // namespace tunefarm::daemon
