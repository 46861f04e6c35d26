// Reading tuning logs for the benchmarks: the best after N trials and the
// trials to reach a level follow tunefarm's ranking (a trace by the mean of
// its measurements), so a lucky first time that the tuner's second
// measurement takes back is never credited.
#include <gtest/gtest.h>

#include "tune/tune_log.h"

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

}  // namespace
}  // namespace tunefarm::bench
