// TunerSideBuildMeasurer: the tuner builds each candidate, sends the object
// through the inner measurer, and answers build failures itself. First with a
// recording inner measurer (what is dispatched, exactly), then with a real
// LocalMeasurer and runner (the objects load, run and check).
#include "tunefarm/daemon/tuner_side_build.h"

#include <elf.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>

#include "service_test_util.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm::daemon::testing {
namespace {

// Records what it is asked to measure; answers from `answer`, or with one
// successful result per input.
class RecordingMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    std::lock_guard<std::mutex> lock(mu_);
    calls.push_back(inputs);
    if (answer) return answer(inputs);
    std::vector<MeasureResult> out;
    for (const MeasureInput& in : inputs) {
      MeasureResult r;
      r.candidate_id = in.candidate_id;
      r.repeat_seconds = {1e-3};
      r.build_seconds = 0.5;  // the worker's load
      r.worker = "board/cpu#1";
      out.push_back(r);
    }
    return out;
  }
  std::function<std::vector<MeasureResult>(const std::vector<MeasureInput>&)> answer;
  std::vector<std::vector<MeasureInput>> calls;

 private:
  std::mutex mu_;
};

uint16_t ElfMachine(const std::string& object) {
  if (object.size() < sizeof(Elf64_Ehdr) || object.compare(0, 4, "\x7f" "ELF") != 0) return 0;
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  return header.e_machine;
}

MeasureInput Input(std::string id, std::string workload, std::string trace = "", std::string target = "llvm") {
  return {std::move(id), std::move(workload), std::move(trace), std::move(target)};
}

std::string GpuBoundTrace() {
  auto w = ParseWorkload(kMatmulText);
  auto f = LowerToPrimFunc(*w);
  Schedule sch(*f);
  auto loops = sch.GetLoops(*sch.GetBlock("C"));
  EXPECT_TRUE(sch.Bind((*loops)[0], "threadIdx.x").ok());
  return sch.trace().ToText();
}

TEST(TunerSideBuildTest, BuiltCandidatesCarryObjectsAndFailuresAreAnsweredWithoutDispatch) {
  auto w = ParseWorkload(kMatmulText);
  ASSERT_TRUE(w.ok());
  auto parallel = ParallelMatmulTrace(*w);
  ASSERT_TRUE(parallel.ok()) << parallel.status().ToString();
  RecordingMeasurer inner;
  TunerSideBuildMeasurer measurer(&inner, {.build_threads = 2});
  std::vector<MeasureInput> batch = {
      Input("default", kMatmulText),
      Input("garbage-trace", kMatmulText, "this is not a trace\n"),
      Input("parallel", kMatmulText, *parallel),
      Input("bad-workload", "workload w(N = 4) {\n  A = input f32[N]\n  B[i] = A[i] +\n  output B\n}\n"),
      Input("gpu-on-cpu", kMatmulText, GpuBoundTrace()),
      Input("unknown-target", kMatmulText, "", "fpga"),
      Input("comment-only", kMatmulText, "# just a comment\n"),
  };
  auto results = measurer.Measure(batch, MeasureOptions{});
  ASSERT_EQ(results.size(), batch.size());
  for (size_t i = 0; i < batch.size(); ++i) EXPECT_EQ(results[i].candidate_id, batch[i].candidate_id);

  // One dispatch, of the three that built, in input order, each with an object.
  ASSERT_EQ(inner.calls.size(), 1u);
  const auto& sent = inner.calls[0];
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].candidate_id, "default");
  EXPECT_EQ(sent[1].candidate_id, "parallel");
  EXPECT_EQ(sent[2].candidate_id, "comment-only");
  for (const MeasureInput& in : sent) {
    EXPECT_EQ(ElfMachine(in.object), EM_X86_64) << in.candidate_id;
    EXPECT_EQ(in.workload_text, kMatmulText);  // the worker still needs it for shapes and the reference
  }
  EXPECT_EQ(sent[1].trace_text, *parallel);
  EXPECT_NE(sent[1].object.find("tunefarm_parallel_for"), std::string::npos);
  EXPECT_EQ(sent[0].object.find("tunefarm_parallel_for"), std::string::npos);

  for (size_t i : {0, 2, 6}) {
    EXPECT_EQ(results[i].error, MeasureErrorKind::kNone) << results[i].error_message;
    EXPECT_EQ(results[i].worker, "board/cpu#1");
    EXPECT_GT(results[i].build_seconds, 0.5) << "the tuner's build time is added to the worker's load";
  }
  EXPECT_EQ(results[1].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[1].error_message.find("trace"), std::string::npos) << results[1].error_message;
  EXPECT_EQ(results[3].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[3].error_message.find("workload:"), std::string::npos) << results[3].error_message;
  EXPECT_EQ(results[4].error, MeasureErrorKind::kCompileError);
  EXPECT_NE(results[4].error_message.find("threadIdx.x"), std::string::npos) << results[4].error_message;
  EXPECT_EQ(results[5].error, MeasureErrorKind::kInvalidCandidate) << results[5].error_message;
  for (size_t i : {1, 3, 4, 5}) EXPECT_EQ(results[i].worker, "tuner");
}

TEST(TunerSideBuildTest, CrossTargetsAreBuiltHereForTheBoard) {
  RecordingMeasurer inner;
  TunerSideBuildMeasurer measurer(&inner);
  auto results = measurer.Measure({Input("arm", kMatmulText, "", "llvm -mtriple=aarch64-linux-gnu -mattr=+neon")},
                                   MeasureOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone) << results[0].error_message;
  ASSERT_EQ(inner.calls.size(), 1u);
  EXPECT_EQ(ElfMachine(inner.calls[0][0].object), EM_AARCH64);
}

TEST(TunerSideBuildTest, NothingBuiltNothingDispatchedAndAbandonedBatchesAnswerNothing) {
  RecordingMeasurer inner;
  TunerSideBuildMeasurer measurer(&inner);
  auto results = measurer.Measure({Input("bad", kMatmulText, "garbage\n")}, MeasureOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_TRUE(inner.calls.empty());
  EXPECT_TRUE(measurer.Measure({}, MeasureOptions{}).empty());

  // The fleet measurer answers nothing when the job is cancelled mid-batch:
  // so does the decorator, even for the candidates it answered itself.
  inner.answer = [](const std::vector<MeasureInput>&) { return std::vector<MeasureResult>{}; };
  results = measurer.Measure({Input("bad", kMatmulText, "garbage\n"), Input("good", kMatmulText)}, MeasureOptions{});
  EXPECT_TRUE(results.empty());

  // A measurer that drops results breaks its contract: worker_lost, not a crash.
  inner.answer = [](const std::vector<MeasureInput>& in) {
    MeasureResult r;
    r.candidate_id = in[0].candidate_id;
    return std::vector<MeasureResult>{r};
  };
  results = measurer.Measure({Input("a", kMatmulText), Input("b", kScaleText)}, MeasureOptions{});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone);
  EXPECT_EQ(results[1].error, MeasureErrorKind::kWorkerLost);
  EXPECT_EQ(results[1].candidate_id, "b");
}

TEST(TunerSideBuildTest, ObjectsTooLargeForARequestAreCompileErrors) {
  RecordingMeasurer inner;
  TunerSideBuildMeasurer measurer(&inner, {.build_threads = 1, .max_object_bytes = 100});
  auto results = measurer.Measure({Input("big", kMatmulText)}, MeasureOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error, MeasureErrorKind::kCompileError);
  EXPECT_NE(results[0].error_message.find("max_message_mib"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(inner.calls.empty());
}

// The real thing: objects built here, loaded by a real runner, checked
// against its reference and timed.
TEST(TunerSideBuildTest, RealRunnerMeasuresTheObjects) {
  auto w = ParseWorkload(kMatmulText);
  ASSERT_TRUE(w.ok());
  auto parallel = ParallelMatmulTrace(*w);
  ASSERT_TRUE(parallel.ok());
  LocalMeasurerOptions lo;
  lo.runner_path = std::string(TUNEFARM_BINARY_DIR) + "/worker/tunefarm-runner";
  lo.build_threads = 2;
  LocalMeasurer local(lo);
  RecordingMeasurer inner;
  inner.answer = [&](const std::vector<MeasureInput>& in) {
    MeasureOptions o;
    o.repeat = 2;
    o.min_repeat_ms = 1;
    return local.Measure(in, o);
  };
  TunerSideBuildMeasurer measurer(&inner);
  auto results = measurer.Measure({Input("default", kMatmulText), Input("parallel", kMatmulText, *parallel),
                                   Input("scale", kScaleText)},
                                  MeasureOptions{});
  ASSERT_EQ(results.size(), 3u);
  for (const MeasureResult& r : results) {
    EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id << ": " << r.error_message;
    EXPECT_EQ(r.repeat_seconds.size(), 2u) << r.candidate_id;
  }
  ASSERT_EQ(inner.calls.size(), 1u);
  for (const MeasureInput& in : inner.calls[0]) {
    EXPECT_FALSE(in.object.empty()) << in.candidate_id;
    std::printf("[          ] object of %s: %zu bytes\n", in.candidate_id.c_str(), in.object.size());
  }
}

}  // namespace
}  // namespace tunefarm::daemon::testing
