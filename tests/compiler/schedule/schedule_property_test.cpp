// Property test: random schedules of every (shrunk) suite workload compute
// the same results as the default schedule, through the interpreter and, for
// every 4th instance, the LLVM JIT; each trace round-trips through text and
// replays to the same program. Refused requests are skipped; any other error,
// a mismatch or a crash fails.
#include <set>

#include "../schedule_test_util.h"

namespace tunefarm::testing {
namespace {

constexpr double kPropertyFlopBudget = 2e4;
constexpr int kSeedsPerWorkload = 20;
constexpr int kJitEvery = 4;

// Primitives that transform the program (not handles or sampling).
const std::set<std::string> kTransforms = {
    "split",          "reorder",          "fuse",        "parallel",           "vectorize",
    "unroll",         "annotate",         "compute_at",  "reverse_compute_at", "compute_inline",
    "reverse_compute_inline", "cache_write", "cache_read", "pack_layout", "pad_axis", "split_phases"};

class SchedulePropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulePropertyTest, RandomSchedulesMatchTheDefault) {
  auto base = LowerShrunk(GetParam(), kPropertyFlopBudget);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto ref = MakeReference(*base);
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  std::map<std::string, int> applied;
  int transformed = 0;
  for (int seed = 0; seed < kSeedsPerWorkload; ++seed) {
    Schedule sch(*base, uint64_t(seed));
    std::mt19937_64 rng(uint64_t(seed) * 104729 + 17);
    Status s = RandomSchedule(sch, rng, 4 + seed % 8);
    ASSERT_TRUE(s.ok()) << "seed " << seed << ": " << s.ToString() << "\n" << sch.trace().ToText();
    bool any = false;
    for (const Instruction& inst : sch.trace().instructions()) {
      if (kTransforms.count(inst.name)) {
        ++applied[inst.name];
        any = true;
      }
    }
    transformed += any;
    bool jit = seed % kJitEvery == 0;
    ASSERT_TRUE(MatchesReference(*ref, sch.func(), jit)) << "seed " << seed << "\n" << sch.trace().ToText();
    ASSERT_TRUE(ReplaysIdentically(*base, sch)) << "seed " << seed;
  }
  std::string summary;
  for (const auto& [name, count] : applied) summary += " " + name + "=" + std::to_string(count);
  GTEST_LOG_(INFO) << std::filesystem::path(GetParam()).stem().string() << ":" << summary;
  // The generator must exercise the schedule, not only get refused.
  EXPECT_GE(transformed, kSeedsPerWorkload / 2);
  EXPECT_GT(applied["split"], 0);
}

INSTANTIATE_TEST_SUITE_P(ScheduleSuite, SchedulePropertyTest, ::testing::ValuesIn(SuiteWorkloadFiles()),
                         [](const auto& info) { return std::filesystem::path(info.param).stem().string(); });

// Deeper schedules on the workloads with the most stages and intermediates.
TEST(SchedulePropertyDeepTest, LongRandomSchedulesOnMultiStageWorkloads) {
  struct Case {
    std::string_view text;
    Overrides overrides;
  };
  std::vector<Case> cases = {{kSoftmax, {}}, {kDenseBiasRelu, {}}, {kPaddedConv, {{"H", 5}, {"W", 6}}},
                             {kMatmul, {{"M", 10}, {"N", 12}, {"K", 6}}}};
  int instances = 0;
  std::map<std::string, int> applied;
  for (const Case& c : cases) {
    auto base = LowerText(c.text, c.overrides);
    ASSERT_TRUE(base.ok());
    auto ref = MakeReference(*base);
    ASSERT_TRUE(ref.ok());
    for (int seed = 0; seed < 16; ++seed, ++instances) {
      Schedule sch(*base, uint64_t(seed));
      std::mt19937_64 rng(uint64_t(seed) + 5000);
      Status s = RandomSchedule(sch, rng, 16);
      ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << sch.trace().ToText();
      ASSERT_TRUE(MatchesReference(*ref, sch.func(), seed % kJitEvery == 1)) << "seed " << seed << "\n"
                                                                             << sch.trace().ToText();
      ASSERT_TRUE(ReplaysIdentically(*base, sch)) << "seed " << seed;
      for (const Instruction& inst : sch.trace().instructions()) ++applied[inst.name];
    }
  }
  EXPECT_EQ(instances, 64);
  // The layout primitives the generator reaches only through copies and
  // accumulators are exercised too, not only refused.
  EXPECT_GT(applied["pad_axis"], 0);
  EXPECT_GT(applied["split_phases"], 0);
}

}  // namespace
}  // namespace tunefarm::testing
