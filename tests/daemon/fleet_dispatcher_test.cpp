// FleetDispatcher without gRPC: workers are SendFn callbacks that record what
// they were sent, so the dispatch rules are tested exactly.
#include "tunefarm/daemon/fleet_dispatcher.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "dispatch_test_util.h"

namespace tunefarm::daemon {
namespace {

using testing::Eventually;
using testing::FakeWorker;

std::vector<MeasureInput> Inputs(int n, const std::string& prefix = "c") {
  std::vector<MeasureInput> v;
  for (int i = 0; i < n; ++i) v.push_back({prefix + std::to_string(i), "w", "t" + std::to_string(i), "llvm"});
  return v;
}

MeasureResult Ok(const std::string& id, double secs) {
  MeasureResult r;
  r.candidate_id = id;
  r.repeat_seconds = {secs};
  return r;
}

TEST(FleetDispatcher, RespectsInFlightLimitAndAnswersInOrder) {
  FleetDispatcher fleet;
  FakeWorker w;
  std::string id = fleet.AddWorker({"key", "test", "h", 3}, w.Fn());
  std::vector<MeasureResult> results;
  std::thread job([&] { results = fleet.Measure("key", Inputs(7), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return w.Ids().size() == 3; }));
  EXPECT_EQ(fleet.Snapshot().workers[0].in_flight, 3);
  // Answer out of order; each answer frees a slot for the next candidate.
  for (int round = 0; round < 7; ++round) {
    auto ids = w.Ids();
    ASSERT_TRUE(Eventually([&] { ids = w.Ids(); return int(ids.size()) >= std::min(7, round + 3); }));
    fleet.OnResults(id, {Ok(ids[round], 1.0 + round)});
  }
  job.join();
  ASSERT_EQ(results.size(), 7u);
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(results[i].candidate_id, "c" + std::to_string(i));
    EXPECT_EQ(results[i].worker, id);
    ASSERT_EQ(results[i].repeat_seconds.size(), 1u);
  }
  EXPECT_EQ(fleet.Snapshot().results_accepted, 7);
}

// A batch is spread over every idle worker of its key, one request each,
// rather than filling the first worker up to its max_in_flight.
TEST(FleetDispatcher, ABatchSpreadsOverEveryIdleWorker) {
  FleetDispatcher fleet;
  FakeWorker workers[4];
  std::string ids[4];
  for (int i = 0; i < 4; ++i) ids[i] = fleet.AddWorker({"key", "test", "h" + std::to_string(i), 16}, workers[i].Fn());
  std::vector<MeasureResult> results;
  std::thread job([&] { results = fleet.Measure("key", Inputs(16), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] {
    size_t sent = 0;
    for (auto& w : workers) sent += w.Ids().size();
    return sent == 16;
  }));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(workers[i].Ids().size(), 4u) << ids[i];
    std::lock_guard<std::mutex> lock(workers[i].mu);
    EXPECT_EQ(workers[i].received.size(), 1u) << ids[i] << ": one request with its share";
  }
  for (const WorkerSnapshot& w : fleet.Snapshot().workers) EXPECT_EQ(w.in_flight, 4) << w.worker_id;
  for (int i = 0; i < 4; ++i) {
    std::vector<MeasureResult> answers;
    for (const std::string& c : workers[i].Ids()) answers.push_back(Ok(c, 1));
    fleet.OnResults(ids[i], answers);
  }
  job.join();
  ASSERT_EQ(results.size(), 16u);
  std::set<std::string> measured_by;
  for (const MeasureResult& r : results) measured_by.insert(r.worker);
  EXPECT_EQ(measured_by.size(), 4u);
}

// Workers of one key with different max_in_flight are loaded in proportion,
// and a worker already busy gets less of a new batch.
TEST(FleetDispatcher, LoadIsRelativeToEachWorkersCapacity) {
  FleetDispatcher fleet;
  FakeWorker small, large;
  std::string ids = fleet.AddWorker({"key", "test", "small", 2}, small.Fn());
  std::string idl = fleet.AddWorker({"key", "test", "large", 6}, large.Fn());
  std::vector<MeasureResult> first;
  std::thread job([&] { first = fleet.Measure("key", Inputs(4, "a"), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return small.Ids().size() + large.Ids().size() == 4; }));
  EXPECT_EQ(small.Ids().size(), 1u);  // 1 of 2 and 3 of 6: half full each
  EXPECT_EQ(large.Ids().size(), 3u);
  std::vector<MeasureResult> second;
  std::thread job2([&] { second = fleet.Measure("key", Inputs(4, "b"), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return small.Ids().size() + large.Ids().size() == 8; }));
  EXPECT_EQ(small.Ids().size(), 2u);  // full, as is the large one
  EXPECT_EQ(large.Ids().size(), 6u);
  auto answer = [&](FakeWorker& w, const std::string& id) {
    std::vector<MeasureResult> answers;
    for (const std::string& c : w.Ids()) answers.push_back(Ok(c, 1));
    fleet.OnResults(id, answers);
  };
  answer(small, ids);
  answer(large, idl);
  job.join();
  job2.join();
  EXPECT_EQ(first.size(), 4u);
  EXPECT_EQ(second.size(), 4u);
}

TEST(FleetDispatcher, LostWorkerCandidatesGoElsewhereAndLateDuplicatesAreDropped) {
  FleetDispatcher fleet;
  FakeWorker a, b;
  std::string ida = fleet.AddWorker({"key", "test", "a", 4}, a.Fn());
  std::vector<MeasureResult> results;
  std::thread job([&] { results = fleet.Measure("key", Inputs(4), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return a.Ids().size() == 4; }));
  fleet.OnResults(ida, {Ok("c0", 0.5)});          // one answered before it is lost
  std::string idb = fleet.AddWorker({"key", "test", "b", 4}, b.Fn());
  EXPECT_TRUE(b.Ids().empty());                    // nothing queued: all in flight on a
  fleet.RemoveWorker(ida, "killed");
  ASSERT_TRUE(Eventually([&] { return b.Ids().size() == 3; }));
  EXPECT_EQ(b.Ids(), (std::vector<std::string>{"c1", "c2", "c3"}));
  EXPECT_EQ(fleet.Snapshot().redispatched, 3);
  fleet.OnResults(idb, {Ok("c1", 1), Ok("c2", 2), Ok("c3", 3)});
  job.join();
  // a comes back (a new session) and replays what it measured: all dropped.
  std::string ida2 = fleet.AddWorker({"key", "test", "a", 4}, a.Fn());
  fleet.OnResults(ida2, {Ok("c1", 9), Ok("c0", 9)});
  FleetSnapshot s = fleet.Snapshot();
  EXPECT_EQ(s.duplicates_dropped, 2);
  EXPECT_EQ(s.results_accepted, 4);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0].worker, ida);
  EXPECT_DOUBLE_EQ(results[1].repeat_seconds[0], 1.0);
  EXPECT_EQ(results[3].worker, idb);
}

// A result is recorded after its batch is done, when its worker may be gone:
// the fingerprint a worker registered with outlives its session.
TEST(FleetDispatcher, AWorkersFingerprintIsKnownAfterItLeaves) {
  FleetDispatcher fleet;
  FakeWorker a, b;
  WorkerInfo older{"key", "test", "a", 1};
  older.fingerprint.toolchain = "llvm-16";
  WorkerInfo upgraded{"key", "test", "b", 1};
  upgraded.fingerprint.toolchain = "llvm-16 lowering-r2";
  std::string ida = fleet.AddWorker(older, a.Fn());
  std::string idb = fleet.AddWorker(upgraded, b.Fn());
  fleet.RemoveWorker(ida, "upgraded");
  ASSERT_TRUE(fleet.WorkerFingerprint(ida).has_value());
  EXPECT_EQ(fleet.WorkerFingerprint(ida)->toolchain, "llvm-16");
  EXPECT_EQ(fleet.WorkerFingerprint(idb)->toolchain, "llvm-16 lowering-r2");
  EXPECT_FALSE(fleet.WorkerFingerprint("nobody/test#9").has_value());
  EXPECT_FALSE(fleet.WorkerFingerprint("tuner").has_value());
}

TEST(FleetDispatcher, CandidatesWaitForAWorkerOfTheirDeviceKey) {
  FleetDispatcher fleet;
  FakeWorker other, right;
  fleet.AddWorker({"arm", "cpu", "board", 8}, other.Fn());
  std::vector<MeasureResult> results;
  std::thread job([&] { results = fleet.Measure("x86", Inputs(2), {}, nullptr); });
  ASSERT_TRUE(Eventually([&] { return fleet.Snapshot().queued == 2; }));
  EXPECT_TRUE(other.Ids().empty());
  std::string id = fleet.AddWorker({"x86", "cpu", "server", 8}, right.Fn());
  ASSERT_TRUE(Eventually([&] { return right.Ids().size() == 2; }));
  fleet.OnResults(id, {Ok("c0", 1), Ok("c1", 1)});
  job.join();
  EXPECT_EQ(results.size(), 2u);
  EXPECT_TRUE(other.Ids().empty());
}

TEST(FleetDispatcher, AbortReturnsNothingAndLaterAnswersAreDropped) {
  FleetDispatcher fleet;
  FakeWorker w;
  std::string id = fleet.AddWorker({"key", "test", "h", 8}, w.Fn());
  std::atomic<bool> abort{false};
  std::vector<MeasureResult> results{MeasureResult()};
  std::thread job([&] { results = fleet.Measure("key", Inputs(3), {}, &abort); });
  ASSERT_TRUE(Eventually([&] { return w.Ids().size() == 3; }));
  fleet.OnResults(id, {Ok("c0", 1)});
  abort = true;
  job.join();
  EXPECT_TRUE(results.empty());
  fleet.OnResults(id, {Ok("c1", 1), Ok("c2", 1)});
  EXPECT_EQ(fleet.Snapshot().duplicates_dropped, 2);
  EXPECT_EQ(fleet.Snapshot().workers[0].in_flight, 0);
}

TEST(FleetDispatcher, SilentWorkersAreReported) {
  FleetDispatcher fleet;
  FakeWorker w;
  std::string id = fleet.AddWorker({"key", "test", "h", 1}, w.Fn());
  EXPECT_TRUE(fleet.SilentWorkers(std::chrono::milliseconds(200)).empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  EXPECT_EQ(fleet.SilentWorkers(std::chrono::milliseconds(200)), std::vector<std::string>{id});
  fleet.Touch(id);
  EXPECT_TRUE(fleet.SilentWorkers(std::chrono::milliseconds(200)).empty());
}

}  // namespace
}  // namespace tunefarm::daemon
