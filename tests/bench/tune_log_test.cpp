// Reading tuning logs for the benchmarks: the best after N trials and the
// trials to reach a level follow tunefarm's ranking (a trace by the mean of
// its measurements), so a lucky first time that the tuner's second
// measurement takes back is never credited.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "tune/tune_log.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::bench {
namespace {

LoggedTrial Trial(int index, const std::string& trace, double ms, bool ok = true) {
  LoggedTrial t;
  t.id = index;
  t.index = index;
  t.ok = ok;
  t.seconds = ok ? ms * 1e-3 : 0;
  t.trace = trace;
  return t;
}

// "a" is lucky at trial 2 (1.0 ms) and measured again at trial 3 (1.6 ms);
// "b" (1.2 ms) then leads.
const std::vector<LoggedTrial> kLog = {Trial(1, "", 5.0), Trial(2, "a", 1.0), Trial(3, "a", 1.6),
                                       Trial(4, "b", 1.2), Trial(5, "c", 0, /*ok=*/false)};

TEST(TraceRankingTest, TheBestIsTheTraceWithTheLowestMean) {
  TraceRanking ranking;
  ranking.Add(kLog[0]);
  ranking.Add(kLog[1]);
  ASSERT_TRUE(ranking.best());
  EXPECT_EQ(ranking.best()->trace, "a");
  ranking.Add(kLog[2]);
  EXPECT_EQ(ranking.best()->trace, "a");
  EXPECT_DOUBLE_EQ(ranking.best()->seconds, 1.3e-3);
  EXPECT_EQ(ranking.best()->id, 2);  // the trace's fastest trial answers for it
  EXPECT_EQ(ranking.best()->measurements, 2);
  ranking.Add(kLog[3]);
  ranking.Add(kLog[4]);
  EXPECT_EQ(ranking.best()->trace, "b");
}

TEST(TraceRankingTest, BestWithinABudget) {
  EXPECT_EQ(BestWithin(kLog, 2)->trace, "a");
  EXPECT_DOUBLE_EQ(BestWithin(kLog, 2)->seconds, 1.0e-3);
  EXPECT_DOUBLE_EQ(BestWithin(kLog, 3)->seconds, 1.3e-3);
  EXPECT_EQ(BestWithin(kLog, 0)->trace, "b");
  EXPECT_FALSE(BestWithin({Trial(1, "x", 0, false)}, 0));
}

// Against a 1.1 ms reference: "a" looks like 110 % after trial 2 and falls
// back to 84.6 % at trial 3; "b" (91.7 %) leads from trial 4. A level is
// reached from the trial after which the best stays at it.
TEST(TraceRankingTest, TrialsToReachIgnoresALeadTakenBack) {
  EXPECT_FALSE(TrialsToReach(kLog, 1.1e-3, 0.95));
  EXPECT_EQ(TrialsToReach(kLog, 1.1e-3, 0.9), 4);
  std::vector<LoggedTrial> log = kLog;
  log.push_back(Trial(6, "d", 1.15));  // 95.7 %
  log.push_back(Trial(7, "d", 1.2));   // mean 1.175: 93.6 %
  EXPECT_EQ(TrialsToReach(log, 1.1e-3, 0.93), 6);
  EXPECT_FALSE(TrialsToReach(log, 1.1e-3, 0.95));
  // Without the second measurement of "a", its lucky time counts.
  std::vector<LoggedTrial> once = {kLog[0], kLog[1], kLog[3]};
  EXPECT_EQ(TrialsToReach(once, 1.1e-3, 0.95), 2);
}


// --all of tunefarm_log_ranking: the workloads of several logs from their own
// texts, each hash once, sorted by name; a text that no longer parses is
// counted, not returned; a log that does not exist is an error naming it.
TEST(WorkloadsOfLogsTest, EveryWorkloadOnceFromTheLogsOwnTexts) {
  const std::string dir = (std::filesystem::temp_directory_path() / ("tf_wol_" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  const std::string text_b = "workload b_add(N = 7) {\n  X = input f32[N]\n  out[i: N] = X[i] + 1.0\n  output out\n}\n";
  const std::string text_a = "workload a_mul(N = 5) {\n  X = input f32[N]\n  out[i: N] = X[i] * 2.0\n  output out\n}\n";
  auto hash_of = [](const std::string& text) {
    auto w = ParseWorkload(text);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? StructuralHashHex(*w) : std::string("x");
  };
  {
    auto db = database::Database::Open(dir + "/one.db");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->CommitWorkload({hash_of(text_b), "b_add", text_b}).ok());
    ASSERT_TRUE((*db)->CommitWorkload({"0123abcd", "broken", "workload broken( {"}).ok());
    auto other = database::Database::Open(dir + "/two.db");
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    ASSERT_TRUE((*other)->CommitWorkload({hash_of(text_a), "a_mul", text_a}).ok());
    ASSERT_TRUE((*other)->CommitWorkload({hash_of(text_b), "b_add", text_b}).ok());
  }
  auto logged = WorkloadsOfLogs({dir + "/one.db", dir + "/two.db"});
  ASSERT_TRUE(logged.ok()) << logged.status().ToString();
  ASSERT_EQ(logged->workloads.size(), 2u);
  EXPECT_EQ(logged->workloads[0].first, "a_mul");
  EXPECT_EQ(logged->workloads[1].first, "b_add");
  EXPECT_EQ(StructuralHashHex(logged->workloads[1].second), hash_of(text_b));
  EXPECT_EQ(logged->unparsed, 1);

  auto missing = WorkloadsOfLogs({dir + "/none.db"});
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.db"), std::string::npos) << missing.status().ToString();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tunefarm::bench
