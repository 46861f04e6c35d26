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
#include "sketch_test_util.h"
#include "tunefarm/compiler/trace.h"
#include "tunefarm/tuner/fleet_dispatcher.h"
#include "tunefarm/tuner/fleet_service.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

using testing::Eventually;
using RecordingWorker = testing::FakeWorker;

std::set<std::string> AllInstructions() {
  return {ReplayedInstructionNames().begin(), ReplayedInstructionNames().end()};
}
std::set<std::string> WithoutPadInput() {
  std::set<std::string> s = AllInstructions();
  s.erase("pad_input");
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

TEST(FleetMixedVersions, PaddedTracesGoOnlyToWorkersThatReplayPadInput) {
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
  std::vector<MeasureResult> results;
  std::atomic<bool> done{false};
  std::thread job([&] {
    results = fleet.Measure("cpu-x", batch, {}, nullptr);
    done = true;
  });
  // Answer whatever each worker was sent until the batch is done.
  size_t answered_old = 0, answered_new = 0;
  ASSERT_TRUE(Eventually([&] {
    auto o = old_worker.Ids(), n = new_worker.Ids();
    for (; answered_old < o.size(); ++answered_old) fleet.OnResults(old_id, {Ok(o[answered_old])});
    for (; answered_new < n.size(); ++answered_new) fleet.OnResults(new_id, {Ok(n[answered_new])});
    return done.load();
  }));
  job.join();
  for (const std::string& id : old_worker.Ids()) EXPECT_EQ(id.rfind("plain", 0), 0u) << id << " went to the old worker";
  EXPECT_FALSE(old_worker.Ids().empty()) << "the old worker still measures what it can replay";
  ASSERT_EQ(results.size(), 12u);
  for (const MeasureResult& r : results) EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id;
  for (int i = 0; i < 6; ++i) EXPECT_EQ(results[i].worker, new_id);
}

TEST(FleetMixedVersions, ACandidateNoConnectedWorkerReplaysIsAnsweredNamingTheInstruction) {
  FleetDispatcher fleet;
  RecordingWorker old_worker;
  std::string old_id = fleet.AddWorker(Info("old", WithoutPadInput()), old_worker.Fn());
  std::vector<MeasureResult> results;
  std::thread job([&] {
    results = fleet.Measure("cpu-x", {Input("pad", kPadTrace), Input("plain", kPlainTrace)}, {}, nullptr);
  });
  ASSERT_TRUE(Eventually([&] { return old_worker.Ids().size() == 1; }));
  EXPECT_EQ(old_worker.Ids()[0], "plain");
  for (const std::string& id : old_worker.Ids()) fleet.OnResults(old_id, {Ok(id)});
  job.join();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[0].error_message.find("'pad_input'"), std::string::npos) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("cpu-x"), std::string::npos) << results[0].error_message;
  EXPECT_EQ(results[0].worker, "tuner");
  EXPECT_EQ(results[1].error, MeasureErrorKind::kNone);
  EXPECT_EQ(old_worker.Ids().size(), 1u) << "the padded candidate was never sent";
}

TEST(FleetMixedVersions, WithNoWorkerYetCandidatesWaitForOne) {
  FleetDispatcher fleet;
  std::vector<MeasureResult> results;
  std::thread job([&] { results = fleet.Measure("cpu-x", {Input("pad", kPadTrace)}, {}, nullptr); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RecordingWorker w;
  std::string id = fleet.AddWorker(Info("new", AllInstructions()), w.Fn());
  ASSERT_TRUE(Eventually([&] { return w.Ids().size() == 1; }));
  fleet.OnResults(id, {Ok("pad")});
  job.join();
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
  // A worker from before the list: everything but pad_input.
  EXPECT_TRUE(ValidateRegister(reg).ok());
  EXPECT_EQ(TraceInstructionsOf(reg), WithoutPadInput());
  for (const std::string& n : ReplayedInstructionNames()) reg.add_trace_instructions(n);
  EXPECT_TRUE(ValidateRegister(reg).ok());
  EXPECT_EQ(TraceInstructionsOf(reg), AllInstructions());
  // A malformed list is the registration's error, naming the entry.
  reg.add_trace_instructions("");
  grpc::Status bad = ValidateRegister(reg);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.error_message().find("register.trace_instructions[23]"), std::string::npos) << bad.error_message();
  reg.clear_trace_instructions();
  for (int i = 0; i < 257; ++i) reg.add_trace_instructions("i" + std::to_string(i));
  EXPECT_NE(ValidateRegister(reg).error_message().find("at most 256"), std::string::npos);
}

TEST(FleetMixedVersions, WithoutPadInputTheSketchNeverPads) {
  ir::PrimFunc f = testing::ShrunkDefault(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/c2d_resnet_3x3.tf");
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
}  // namespace tunefarm::tuner
