// A job's spec (job_spec.h): submission checks it and parses its workloads
// once into what the tuning loop takes -- typed workload, canonical text,
// structural hash -- and a resumed job parses only its workloads.
#include "tunefarm/daemon/job_spec.h"

#include <gtest/gtest.h>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::daemon {
namespace {

constexpr char kMatmul[] =
    "workload mm(M = 32, N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
// The same computation, spelled with other spacing: its canonical text is the first's.
constexpr char kMatmulSpaced[] =
    "workload   mm(M = 32, N = 32, K = 16) {\n  A = input f32[M, K]\n\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k]   *   B[k, j]\n  output C\n}\n";
constexpr char kBroken[] = "workload broken(M = 4) {\n  A = input f32[M]\n  B[i] = A[i] +\n  output B\n}\n";

JobSpec Spec(std::vector<std::string> workloads) {
  JobSpec spec;
  spec.workloads = std::move(workloads);
  spec.device_key = "k";
  return spec;
}

TEST(JobSpecTest, SubmissionParsesEachWorkloadOnceIntoItsCanonicalTextAndHash) {
  auto tasks = ParseJobSpec(Spec({kMatmul, kMatmulSpaced}));
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  auto parsed = ParseWorkload(kMatmul);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  for (const tuner::TuneTask& task : *tasks) {
    EXPECT_EQ(task.workload.name, "mm");
    EXPECT_EQ(task.text, PrintWorkload(*parsed));
    EXPECT_EQ(task.hash, StructuralHashHex(*parsed));
    EXPECT_EQ(task.weight, 1);
  }
  EXPECT_TRUE(ValidateJobSpec(Spec({kMatmul})).ok());
}

TEST(JobSpecTest, ASpecThatDoesNotParseIsInvalidArgumentNamingTheWorkload) {
  auto tasks = ParseJobSpec(Spec({kMatmul, kBroken}));
  ASSERT_FALSE(tasks.ok());
  EXPECT_EQ(tasks.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(tasks.status().message().rfind("workloads[1]:", 0), 0u) << tasks.status().message();
  Status verdict = ValidateJobSpec(Spec({kMatmul, kBroken}));
  EXPECT_EQ(verdict.code(), tasks.status().code());
  EXPECT_EQ(verdict.message(), tasks.status().message());
  JobSpec no_trials = Spec({kMatmul});
  no_trials.trials = 0;
  EXPECT_NE(ParseJobSpec(no_trials).status().message().find("trials"), std::string::npos);
}

TEST(JobSpecTest, AResumedSpecParsesItsWorkloadsOnlyWithTheParsersOwnError) {
  JobSpec stored = Spec({kMatmul});
  stored.trials = 0;  // not checked again: the job was accepted in an earlier life
  auto tasks = ParseJobWorkloads(stored);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ(tasks->front().hash, ParseJobSpec(Spec({kMatmul}))->front().hash);

  ParseOptions as_stored;
  as_stored.source_name = "workloads[1]";
  auto direct = ParseWorkload(kBroken, as_stored);
  ASSERT_FALSE(direct.ok());
  auto broken = ParseJobWorkloads(Spec({kMatmul, kBroken}));
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), direct.status().code());
  EXPECT_EQ(broken.status().message(), direct.status().message());
}

}  // namespace
}  // namespace tunefarm::daemon
