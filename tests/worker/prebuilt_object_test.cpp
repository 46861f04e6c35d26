// Candidates that arrive as prebuilt objects (MeasureInput::object, built by
// the tuner for tuner-built device keys): the runner loads and measures the
// object instead of compiling, a bad object is that candidate's compile_error
// and the runner keeps serving, and the object survives the protocol.
#include "../../worker/protocol.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

// What the tuner does: the workload's PrimFunc, the trace replayed, an object.
std::string BuildObject(const std::string& workload_text, const std::string& trace_text,
                        const Target& target = Target::Host()) {
  auto w = ParseWorkload(workload_text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  Schedule sch(*f);
  if (!trace_text.empty()) {
    auto trace = Trace::Parse(trace_text);
    EXPECT_TRUE(trace.ok()) << trace.status().ToString();
    Status s = trace->ApplyTo(sch);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  auto object = EmitObject(sch.func(), target);
  EXPECT_TRUE(object.ok()) << object.status().ToString();
  return object.ok() ? *object : std::string();
}

MeasureInput WithObject(MeasureInput in, std::string object) {
  in.object = std::move(object);
  return in;
}

class PrebuiltObjectTest : public ::testing::Test {
 protected:
  LocalMeasurer measurer_{TestMeasurerOptions()};
  const std::string matmul_ = MatmulText(32, 64, 32);
};

TEST_F(PrebuiltObjectTest, ObjectIsMeasuredLikeACompiledCandidate) {
  std::string trace = VectorizedMatmulTrace(matmul_);
  std::string object = BuildObject(matmul_, trace);
  ASSERT_FALSE(object.empty());
  auto results = measurer_.Measure({WithObject(Candidate("prebuilt", matmul_, trace), object),
                                    WithObject(Candidate("prebuilt-default", matmul_), BuildObject(matmul_, ""))},
                                   FastOptions());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].candidate_id, "prebuilt");
  EXPECT_TRUE(Measured(results[0]));
  EXPECT_TRUE(Measured(results[1]));
}

// Proof that the object, not the workload text, is what runs: an object of a
// kernel with the same name and buffers that computes 2 * A @ B fails the
// check against the reference of A @ B.
TEST_F(PrebuiltObjectTest, TheObjectIsWhatRunsAndIsChecked) {
  std::string doubled = matmul_;
  size_t pos = doubled.find("A[i, k] * B[k, j]");
  ASSERT_NE(pos, std::string::npos);
  doubled.replace(pos, std::string("A[i, k] * B[k, j]").size(), "A[i, k] * B[k, j] * 2.0");
  auto results = measurer_.Measure({WithObject(Candidate("impostor", matmul_), BuildObject(doubled, ""))},
                                    FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kWrongResult) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("output 'C'"), std::string::npos) << results[0].error_message;
}

TEST_F(PrebuiltObjectTest, BadObjectsAreCompileErrorsAndTheRunnerKeepsServing) {
  std::string good = BuildObject(matmul_, "");
  ASSERT_FALSE(good.empty());
  auto arm = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  ASSERT_TRUE(arm.ok()) << arm.status().ToString();
  std::string renamed = MatmulText(32, 64, 32);
  renamed.replace(renamed.find("matmul"), 6, "other");
  std::vector<MeasureInput> batch = {
      WithObject(Candidate("garbage", matmul_), std::string(3000, '\x5a')),
      WithObject(Candidate("truncated", matmul_), good.substr(0, good.size() / 3)),
      WithObject(Candidate("foreign", matmul_), BuildObject(matmul_, "", *arm)),
      WithObject(Candidate("other-symbol", matmul_), BuildObject(renamed, "")),
      WithObject(Candidate("good", matmul_), good),
  };
  auto results = measurer_.Measure(batch, FastOptions());
  ASSERT_EQ(results.size(), batch.size());
  for (size_t i = 0; i + 1 < batch.size(); ++i) {
    EXPECT_EQ(results[i].error, MeasureErrorKind::kCompileError) << batch[i].candidate_id << ": "
                                                                 << results[i].error_message;
    EXPECT_NE(results[i].error_message.find("prebuilt object"), std::string::npos) << results[i].error_message;
  }
  // The loader names the object's machine.
  EXPECT_NE(results[2].error_message.find("it is for AArch64"), std::string::npos) << results[2].error_message;
  EXPECT_TRUE(Measured(results[4]));
  // Refused, not crashed: the same runner measures the next batch too.
  EXPECT_EQ(measurer_.runner_starts(), 1);
  EXPECT_TRUE(Measured(measurer_.Measure({WithObject(Candidate("after", matmul_), good)}, FastOptions())[0]));
  EXPECT_EQ(measurer_.runner_starts(), 1);
}

// If loading an object ever crashes the runner, LocalMeasurer's isolation
// covers it as for a compile: that candidate is a compile_error, the others
// measure on a new runner.
TEST_F(PrebuiltObjectTest, RunnerCrashBuildingAnObjectCandidateCostsOneCandidate) {
  std::string good = BuildObject(matmul_, "");
  auto results = measurer_.Measure({WithObject(Candidate("crash", matmul_, FaultTrace("crash_build")), good),
                                    WithObject(Candidate("next", matmul_), good)},
                                   FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kCompileError) << results[0].error_message;
  EXPECT_NE(results[0].error_message.find("SIGSEGV"), std::string::npos) << results[0].error_message;
  EXPECT_TRUE(Measured(results[1]));
  EXPECT_GE(measurer_.runner_starts(), 2);
}

TEST(PrebuiltObjectProtocolTest, Base64RoundTripsEveryByte) {
  std::string all;
  for (int c = 0; c < 256; ++c) all += char(c);
  for (size_t n : {0, 1, 2, 3, 4, 5, 255, 256}) {
    std::string bytes = all.substr(0, n);
    std::string text = worker_protocol::Base64Encode(bytes);
    EXPECT_EQ(text.size() % 4, 0u);
    auto back = worker_protocol::Base64Decode(text);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, bytes) << n;
  }
  EXPECT_EQ(worker_protocol::Base64Encode("Man"), "TWFu");
  EXPECT_EQ(worker_protocol::Base64Encode("Ma"), "TWE=");
  EXPECT_EQ(worker_protocol::Base64Encode("M"), "TQ==");
  for (const char* bad : {"TWF", "TW=u", "T*Fu", "TQ==TWFu", "===="}) {
    EXPECT_FALSE(worker_protocol::Base64Decode(bad).ok()) << bad;
  }
}

TEST(PrebuiltObjectProtocolTest, InputsCarryTheirObject) {
  MeasureInput in = Candidate("c", MatmulText(8, 8, 8));
  in.object = std::string("\x7f" "ELF\0\x01\xff", 7);
  nlohmann::json j = worker_protocol::ToJson(in);
  auto back = worker_protocol::InputFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->object, in.object);
  EXPECT_EQ(back->candidate_id, "c");
  // No object: no field, and none comes back.
  in.object.clear();
  j = worker_protocol::ToJson(in);
  EXPECT_FALSE(j.contains("object"));
  EXPECT_TRUE(worker_protocol::InputFromJson(j)->object.empty());
  j["object"] = "not base64!";
  EXPECT_EQ(worker_protocol::InputFromJson(j).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace tunefarm::testing
