// A job's spec (job_spec.h): submission checks it and parses its workloads
// once into what the tuning loop takes -- typed workload, canonical text,
// structural hash -- and a resumed job parses only its workloads.
#include "tunefarm/daemon/job_spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

// A model's tasks are weighted by their calls: each workload's weight reaches
// the task the tuning loop schedules, survives the job table's JSON, and a
// bad one is InvalidArgument naming its index.
TEST(JobSpecTest, EachWorkloadsWeightReachesItsTaskAndTheStoredSpec) {
  JobSpec spec = Spec({kMatmul, kMatmulSpaced});
  spec.workload_weights = {3, 0.5};
  auto tasks = ParseJobSpec(spec);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  ASSERT_EQ(tasks->size(), 2u);
  EXPECT_EQ((*tasks)[0].weight, 3);
  EXPECT_EQ((*tasks)[1].weight, 0.5);

  auto stored = JobSpecFromJson(JobSpecToJson(spec));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->workload_weights, spec.workload_weights);
  auto resumed = ParseJobWorkloads(*stored);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  EXPECT_EQ((*resumed)[0].weight, 3);
  EXPECT_EQ((*resumed)[1].weight, 0.5);
}

TEST(JobSpecTest, ASpecStoredWithoutWeightsWeighsEveryWorkloadOne) {
  // As a daemon from before weights stored it: no "workload_weights" key.
  std::string json = JobSpecToJson(Spec({kMatmul}));
  ASSERT_EQ(json.find("workload_weights"), std::string::npos) << json;
  auto stored = JobSpecFromJson(json);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_TRUE(stored->workload_weights.empty());
  auto tasks = ParseJobWorkloads(*stored);
  ASSERT_TRUE(tasks.ok()) << tasks.status().ToString();
  EXPECT_EQ(tasks->front().weight, 1);
  // Progress stored before weights reads as weight 1; stored progress keeps a weight.
  EXPECT_EQ(JobProgressFromJson(R"({"tasks": [{"name": "mm", "trials": 4}]})").front().weight, 1);
  tuner::TaskStatus heavy;
  heavy.name = "mm";
  heavy.weight = 7;
  EXPECT_EQ(JobProgressFromJson(JobProgressToJson({heavy})).front().weight, 7);

  // Stored weights whose count is not the workloads' are a damaged row.
  JobSpec one = Spec({kMatmul});
  one.workload_weights = {1.5};
  std::string row = JobSpecToJson(one);
  const size_t at = row.find("[1.5]");
  ASSERT_NE(at, std::string::npos) << row;
  row.replace(at, 5, "[1.5,2.5]");
  auto mismatched = JobSpecFromJson(row);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().code(), StatusCode::kCorruption);
  EXPECT_NE(mismatched.status().message().find("2 workload weights for 1 workloads"), std::string::npos)
      << mismatched.status().message();
}

TEST(JobSpecTest, ABadWeightIsInvalidArgumentNamingItsIndex) {
  struct Case {
    std::vector<double> weights;
    std::string message_start;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {{1, 0}, "workload_weights[1]: must be a finite number > 0, got 0"},
      {{-2, 1}, "workload_weights[0]: must be a finite number > 0, got -2"},
      {{1, std::nan("")}, "workload_weights[1]: must be a finite number > 0, got nan"},
      {{inf, 1}, "workload_weights[0]: must be a finite number > 0, got inf"},
      {{1}, "workload_weights: 1 given for 2 workload(s)"},
      {{1, 1, 1}, "workload_weights: 3 given for 2 workload(s)"},
  };
  for (const Case& c : cases) {
    JobSpec spec = Spec({kMatmul, kMatmulSpaced});
    spec.workload_weights = c.weights;
    Status st = ValidateJobSpec(spec);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.message_start;
    EXPECT_EQ(st.message().rfind(c.message_start, 0), 0u) << st.message();
  }
}

}  // namespace
}  // namespace tunefarm::daemon
