// A fleet of mixed tunefarm versions (workers are upgraded one at a time): a
// worker reports the schedule instructions its runner replays; a candidate
// goes only to a worker that replays its whole trace; one that no connected
// worker of its key replays is answered at once, naming the instruction; a
// worker that lists nothing (built before the list existed) is taken to know
// everything but pad_input; and a job whose workers lack pad_input searches
// without the padding rule.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "dispatch_test_util.h"
#include "../tuner/sketch_test_util.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::daemon {

// The search this file drives (tuner/).
using tuner::EvolutionarySearch;
using tuner::MakeSketchPolicy;
using tuner::SearchOptions;
namespace {

using testing::Eventually;
using RecordingWorker = testing::FakeWorker;
using testing::BatchThread;

std::set<std::string> AllInstructions() {
  return {ReplayedInstructionNames().begin(), ReplayedInstructionNames().end()};
}
std::set<std::string> WithoutPadInput() {
  std::set<std::string> s = AllInstructions();
  s.erase("pad_input");
  return s;
}

// What a worker from before Register listed its instructions replays: every
// instruction but those added since (pad_input, pad_axis, split_phases).
std::set<std::string> BeforeTheList() {
  std::set<std::string> s = WithoutPadInput();
  s.erase("pad_axis");
  s.erase("split_phases");
  return s;
}

WorkerInfo Info(const std::string& host, std::set<std::string> instructions) {
  WorkerInfo w;
  w.device_key = "cpu-x";
  w.device = "cpu";
  w.hostname = host;
  w.max_in_flight = 8;
  w.trace_instructions = std::move(instructions);
  return w;
}

const char* kPadTrace = "tunefarm-trace 1\nb0 = get_block(\"out\")\nb1 = pad_input(b0, 0)\n";
const char* kPlainTrace = "tunefarm-trace 1\nb0 = get_block(\"out\")\n";

MeasureInput Input(const std::string& id, const std::string& trace) { return {id, "w", trace, "llvm"}; }

MeasureResult Ok(const std::string& id) {
  MeasureResult r;
  r.candidate_id = id;
  r.repeat_seconds = {1e-3};
  return r;
}

// With `typed`, each input also carries its trace as an object, as the
// tuning loop's do: the dispatcher routes by it without parsing the text.
void CheckPaddedTracesGoOnlyToWorkersThatReplayPadInput(bool typed) {
  FleetDispatcher fleet;
  RecordingWorker old_worker, new_worker;
  // The new worker takes two at a time: the old one has free slots all along.
  std::string old_id = fleet.AddWorker(Info("old", WithoutPadInput()), old_worker.Fn());
  WorkerInfo slow = Info("new", AllInstructions());
  slow.max_in_flight = 2;
  std::string new_id = fleet.AddWorker(slow, new_worker.Fn());
  std::vector<MeasureInput> batch;
  for (int i = 0; i < 6; ++i) batch.push_back(Input("pad" + std::to_string(i), kPadTrace));
  for (int i = 0; i < 6; ++i) batch.push_back(Input("plain" + std::to_string(i), kPlainTrace));
  if (typed) {
    for (MeasureInput& in : batch) {
      auto trace = Trace::Parse(in.trace_text);
      ASSERT_TRUE(trace.ok()) << trace.status().ToString();
      in.trace = std::make_shared<const Trace>(std::move(*trace));
    }
  }
  BatchThread job(fleet, batch);
  // Answer whatever each worker was sent until the batch is done.
  size_t answered_old = 0, answered_new = 0;
  EXPECT_TRUE(Eventually([&] {
    auto o = old_worker.Ids(), n = new_worker.Ids();
    for (; answered_old < o.size(); ++answered_old) fleet.OnResults(old_id, {Ok(o[answered_old])});
    for (; answered_new < n.size(); ++answered_new) fleet.OnResults(new_id, {Ok(n[answered_new])});
    return job.done();
  }));
  std::vector<MeasureResult> results = job.Results();
  for (const std::string& id : old_worker.Ids()) EXPECT_EQ(id.rfind("plain", 0), 0u) << id << " went to the old worker";
  EXPECT_FALSE(old_worker.Ids().empty()) << "the old worker still measures what it can replay";
  ASSERT_EQ(results.size(), 12u);
  for (const MeasureResult& r : results) EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(results[i].worker, new_id);
}

TEST(FleetMixedVersions, PaddedTracesGoOnlyToWorkersThatReplayPadInput) {
  CheckPaddedTracesGoOnlyToWorkersThatReplayPadInput(/*typed=*/false);
}

TEST(FleetMixedVersions, TypedTracesAreRoutedByTheirInstructionsToo) {
  CheckPaddedTracesGoOnlyToWorkersThatReplayPadInput(/*typed=*/true);
}

TEST(FleetMixedVersions, ACandidateNoConnectedWorkerReplaysIsAnsweredNamingTheInstructionAfterTheGrace) {
  FleetDispatcher fleet(std::chrono::milliseconds(300));
  RecordingWorker old_worker;
  std::string old_id = fleet.AddWorker(Info("old", WithoutPadInput()), old_worker.Fn());
  auto start = std::chrono::steady_clock::now();
  BatchThread job(fleet, {Input("pad", kPadTrace), Input("plain", kPlainTrace)});
  ASSERT_TRUE(Eventually([&] { return old_worker.Ids().size() == 1; }));
  EXPECT_EQ(old_worker.Ids()[0], "plain");
  fleet.OnResults(old_id, {Ok("plain")});
  std::vector<MeasureResult> results = job.Results();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(300)) << "answered within the grace";
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[0].error_message.find("'pad_input'"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("cpu-x"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("upgrade"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[0].worker, "tuner");
  EXPECT_EQ(results[1].error, MeasureErrorKind::kNone);
  EXPECT_EQ(old_worker.Ids().size(), 1u) << "the padded candidate was never sent";
}

// An upgraded worker that comes back within the grace (a restart during a
// rolling upgrade) measures what waited for it: nothing is recorded as invalid.
TEST(FleetMixedVersions, AnUpgradedWorkerBackWithinTheGraceTakesWhatWaited) {
  FleetDispatcher fleet(std::chrono::seconds(30));
  RecordingWorker old_worker, new_worker;
  fleet.AddWorker(Info("old", WithoutPadInput()), old_worker.Fn());
  BatchThread job(fleet, {Input("pad", kPadTrace)});
  ASSERT_TRUE(Eventually([&] { return fleet.Snapshot().queued == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(job.done()) << "answered before the grace ran out";
  std::string new_id = fleet.AddWorker(Info("new", AllInstructions()), new_worker.Fn());
  ASSERT_TRUE(Eventually([&] { return new_worker.Ids().size() == 1; }));
  fleet.OnResults(new_id, {Ok("pad")});
  std::vector<MeasureResult> results = job.Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone);
  EXPECT_EQ(results[0].worker, new_id);
  EXPECT_TRUE(old_worker.Ids().empty());
}

TEST(FleetMixedVersions, WithNoWorkerYetCandidatesWaitForOne) {
  FleetDispatcher fleet(std::chrono::milliseconds(0));
  BatchThread job(fleet, {Input("pad", kPadTrace)});
  ASSERT_TRUE(Eventually([&] { return fleet.Snapshot().queued == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(job.done()) << "no worker of the key is no reason to answer, even without a grace";
  RecordingWorker w;
  std::string id = fleet.AddWorker(Info("new", AllInstructions()), w.Fn());
  ASSERT_TRUE(Eventually([&] { return w.Ids().size() == 1; }));
  fleet.OnResults(id, {Ok("pad")});
  std::vector<MeasureResult> results = job.Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone);
}

TEST(FleetMixedVersions, CommonInstructionsAreWhatEveryWorkerOfTheKeyReplays) {
  FleetDispatcher fleet;
  RecordingWorker a, b, c;
  EXPECT_FALSE(fleet.CommonInstructions("cpu-x").has_value());
  fleet.AddWorker(Info("new", AllInstructions()), a.Fn());
  ASSERT_TRUE(fleet.CommonInstructions("cpu-x").has_value());
  EXPECT_EQ(fleet.CommonInstructions("cpu-x")->count("pad_input"), 1u);
  std::string old_id = fleet.AddWorker(Info("old", WithoutPadInput()), b.Fn());
  EXPECT_EQ(*fleet.CommonInstructions("cpu-x"), WithoutPadInput());
  WorkerInfo other_key = Info("elsewhere", {"get_block"});
  other_key.device_key = "arm";
  fleet.AddWorker(other_key, c.Fn());
  EXPECT_EQ(*fleet.CommonInstructions("cpu-x"), WithoutPadInput()) << "another key's workers do not count";
  fleet.RemoveWorker(old_id, "upgraded");
  EXPECT_EQ(fleet.CommonInstructions("cpu-x")->count("pad_input"), 1u);
}

TEST(FleetMixedVersions, RegistrationsListTheirInstructionsOrAreTakenAsOlder) {
  v1::Register reg;
  reg.set_device_key("cpu-x");
  reg.set_device("cpu");
  reg.set_max_in_flight(4);
  // A worker from before the list: everything but the instructions added since.
  EXPECT_TRUE(ValidateRegister(reg).ok());
  EXPECT_EQ(TraceInstructionsOf(reg), BeforeTheList());
  for (const std::string& n : ReplayedInstructionNames()) reg.add_trace_instructions(n);
  EXPECT_TRUE(ValidateRegister(reg).ok());
  EXPECT_EQ(TraceInstructionsOf(reg), AllInstructions());
  // A malformed list is the registration's error, naming the entry.
  reg.add_trace_instructions("");
  grpc::Status bad = ValidateRegister(reg);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string entry = "register.trace_instructions[" + std::to_string(ReplayedInstructionNames().size()) + "]";
  EXPECT_NE(bad.error_message().find(entry), std::string::npos) << bad.error_message();
  reg.clear_trace_instructions();
  for (int i = 0; i < 257; ++i) reg.add_trace_instructions("i" + std::to_string(i));
  EXPECT_NE(ValidateRegister(reg).error_message().find("at most 256"), std::string::npos);
}

TEST(FleetMixedVersions, WithoutPadInputTheSketchNeverPads) {
  ir::PrimFunc f = tuner::testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/c2d_resnet_3x3.tf");
  auto pads = [&](const std::set<std::string>* replayable) {
    auto policy = MakeSketchPolicy(Target::Host(), std::string(TUNEFARM_SOURCE_DIR) + "/configs", replayable);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    EvolutionarySearch search(f, policy->get(), SearchOptions{}, 31);
    int padded = 0;
    for (int i = 0; i < 16; ++i) {
      auto c = search.Sample();
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (c.ok()) padded += c->trace.ToText().find("pad_input(") != std::string::npos;
    }
    return padded;
  };
  const std::set<std::string> all = AllInstructions(), older = WithoutPadInput();
  EXPECT_GE(pads(nullptr), 2);
  EXPECT_GE(pads(&all), 2);
  EXPECT_EQ(pads(&older), 0);
}

}  // namespace
}  // namespace tunefarm::daemon
