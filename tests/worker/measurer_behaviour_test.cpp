// LocalMeasurer's contract beyond single candidates: ordering, concurrency,
// bad options, a missing runner, a runner killed between calls.
#include <signal.h>

#include <thread>

#include "../../worker/protocol.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

TEST(MeasurerBehaviourTest, ResultsComeInInputOrderWithTheirIds) {
  LocalMeasurer measurer(TestMeasurerOptions());
  std::vector<MeasureInput> inputs;
  for (int i = 0; i < 6; ++i) {
    std::string trace = i % 3 == 1 ? "garbage" : (i == 4 ? FaultTrace("wrong") : "");
    inputs.push_back(Candidate("cand-" + std::to_string(i), MatmulText(8 + 8 * i, 16, 8), trace));
  }
  auto results = measurer.Measure(inputs, FastOptions());
  ASSERT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(results[i].candidate_id, inputs[i].candidate_id);
    if (i % 3 == 1) {
      EXPECT_EQ(results[i].error, MeasureErrorKind::kInvalidCandidate);
    } else if (i == 4) {
      EXPECT_EQ(results[i].error, MeasureErrorKind::kWrongResult);
    } else {
      EXPECT_TRUE(Measured(results[i]));
    }
  }
  EXPECT_TRUE(measurer.Measure({}, FastOptions()).empty());
}

TEST(MeasurerBehaviourTest, ConcurrentCallersAreServedOneAfterAnother) {
  LocalMeasurer measurer(TestMeasurerOptions());
  std::vector<MeasureResult> a, b;
  std::thread ta([&] { a = measurer.Measure({Candidate("a1", MatmulText(16, 16, 16)), Candidate("a2", MatmulText(16, 32, 16))}, FastOptions()); });
  std::thread tb([&] { b = measurer.Measure({Candidate("b1", MatmulText(32, 16, 16))}, FastOptions()); });
  ta.join();
  tb.join();
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_TRUE(Measured(a[0]));
  EXPECT_TRUE(Measured(a[1]));
  EXPECT_TRUE(Measured(b[0]));
  EXPECT_EQ(a[1].candidate_id, "a2");
}

TEST(MeasurerBehaviourTest, RunnerOutlivesTheThreadThatStartedIt) {
  LocalMeasurer measurer(TestMeasurerOptions());
  std::thread([&] { EXPECT_TRUE(Measured(measurer.Measure({Candidate("t", MatmulText(8, 8, 8))}, FastOptions())[0])); })
      .join();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(Measured(measurer.Measure({Candidate("main", MatmulText(8, 8, 8))}, FastOptions())[0]));
  EXPECT_EQ(measurer.runner_starts(), 1);  // the same runner, its reference cache intact
}

TEST(MeasurerBehaviourTest, InvalidOptionsFailEveryCandidate) {
  LocalMeasurer measurer(TestMeasurerOptions());
  MeasureOptions o = FastOptions();
  o.repeat = 0;
  auto results = measurer.Measure({Candidate("x", MatmulText(8, 8, 8)), Candidate("y", MatmulText(8, 8, 8))}, o);
  for (const auto& r : results) {
    EXPECT_EQ(r.error, MeasureErrorKind::kInvalidCandidate);
    EXPECT_NE(r.error_message.find("repeat"), std::string::npos);
  }
  EXPECT_EQ(measurer.runner_starts(), 0);
}

TEST(MeasurerBehaviourTest, MissingRunnerIsWorkerLost) {
  LocalMeasurerOptions options = TestMeasurerOptions();
  options.runner_path = "/nonexistent/tunefarm-runner";
  LocalMeasurer measurer(options);
  auto results = measurer.Measure({Candidate("x", MatmulText(8, 8, 8))}, FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kWorkerLost);
  EXPECT_NE(results[0].error_message.find("/nonexistent/tunefarm-runner"), std::string::npos) << results[0].error_message;
}

TEST(MeasurerBehaviourTest, RunnerKilledBetweenCallsIsReplacedSilently) {
  LocalMeasurer measurer(TestMeasurerOptions());
  EXPECT_TRUE(Measured(measurer.Measure({Candidate("first", MatmulText(8, 8, 8))}, FastOptions())[0]));
  int pid = measurer.runner_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(Measured(measurer.Measure({Candidate("second", MatmulText(8, 8, 8))}, FastOptions())[0]));
  EXPECT_EQ(measurer.runner_starts(), 2);
  EXPECT_NE(measurer.runner_pid(), pid);
}

// Ctrl-C reaches the runner too (one process group): the tuner stops after
// the batch in flight, which the runner must live to finish.
TEST(MeasurerBehaviourTest, RunnerOutlivesAnInterrupt) {
  LocalMeasurer measurer(TestMeasurerOptions());
  EXPECT_TRUE(Measured(measurer.Measure({Candidate("first", MatmulText(8, 8, 8))}, FastOptions())[0]));
  int pid = measurer.runner_pid();
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(Measured(measurer.Measure({Candidate("second", MatmulText(8, 8, 8))}, FastOptions())[0]));
  EXPECT_EQ(measurer.runner_starts(), 1) << "the interrupt killed the runner";
  EXPECT_EQ(measurer.runner_pid(), pid);
}

TEST(MeasurerBehaviourTest, FindRunnerPathHonoursTheEnvironment) {
  ::setenv("TUNEFARM_RUNNER", RunnerPath().c_str(), 1);
  auto path = FindRunnerPath();
  ::unsetenv("TUNEFARM_RUNNER");
  ASSERT_TRUE(path.ok()) << path.status().ToString();
  EXPECT_EQ(*path, RunnerPath());
  // Without it, the build tree's runner is found.
  auto fallback = FindRunnerPath();
  EXPECT_TRUE(fallback.ok()) << fallback.status().ToString();
}

TEST(ProtocolTest, FramesSurviveArbitrarySplits) {
  std::string bytes;
  worker_protocol::AppendFrame({{"type", "a"}, {"n", 1}}, bytes);
  worker_protocol::AppendFrame({{"type", "b"}, {"text", std::string(100000, 'x')}}, bytes);
  worker_protocol::FrameDecoder decoder;
  std::vector<std::string> types;
  for (size_t i = 0; i < bytes.size(); i += 777) {
    decoder.Append(bytes.data() + i, std::min<size_t>(777, bytes.size() - i));
    while (auto m = decoder.Next()) {
      ASSERT_TRUE(m->ok());
      types.push_back(m->value()["type"]);
    }
  }
  EXPECT_EQ(types, (std::vector<std::string>{"a", "b"}));
}

TEST(ProtocolTest, CorruptFramesAreErrors) {
  worker_protocol::FrameDecoder huge;
  huge.Append("\xff\xff\xff\x7f", 4);
  auto m = huge.Next();
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->ok());
  worker_protocol::FrameDecoder bad;
  bad.Append("\x03\x00\x00\x00{x}", 7);
  m = bad.Next();
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->ok());
}

TEST(ProtocolTest, ResultsRoundTrip) {
  MeasureResult r;
  r.candidate_id = "c";
  r.error = MeasureErrorKind::kWrongResult;
  r.error_message = "output 'C' differs";
  r.repeat_seconds = {1e-3, 2e-3};
  r.build_seconds = 0.25;
  r.speed_probe_seconds = 8e-4;
  MeasureResult back = worker_protocol::ResultFromJson(worker_protocol::ToJson(r));
  EXPECT_EQ(back.candidate_id, r.candidate_id);
  EXPECT_EQ(back.error, r.error);
  EXPECT_EQ(back.error_message, r.error_message);
  EXPECT_EQ(back.repeat_seconds, r.repeat_seconds);
  EXPECT_EQ(back.build_seconds, r.build_seconds);
  EXPECT_EQ(back.speed_probe_seconds, r.speed_probe_seconds);
  EXPECT_STREQ(MeasureErrorKindName(MeasureErrorKind::kCompileError), "compile_error");
}

TEST(ProtocolTest, TestFaultsAreParsed) {
  EXPECT_EQ(*worker_protocol::FindTestFault("tunefarm-trace 1\n"), worker_protocol::TestFault::kNone);
  EXPECT_EQ(*worker_protocol::FindTestFault("# tunefarm-test-fault: hang \n"), worker_protocol::TestFault::kHang);
  EXPECT_FALSE(worker_protocol::FindTestFault("# tunefarm-test-fault: explode\n").ok());
}

}  // namespace
}  // namespace tunefarm::testing
