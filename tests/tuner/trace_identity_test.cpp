// The tuning loop tells traces apart as values (Trace's operator==), not by
// printing them: that holds only if printing a trace and parsing it back
// gives the same trace, and different traces print differently. A record
// whose text is not its trace's own (imported, written by hand) keeps its
// text in the log and is never measured again, neither as a confirmation nor
// by the final round: its new records would be another trace to the log.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sketch_test_util.h"
#include "tuning_loop_test_util.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::tuner {
namespace {

// Sampled and mutated traces of every suite workload, shrunk.
TEST(TraceIdentityTest, SketchTracesPrintAndParseBackEqual) {
  auto policy = MakeCpuSketchPolicy();
  for (const std::string& path : testing::SuiteFiles()) {
    ir::PrimFunc f = testing::ShrunkDefault(path);
    EvolutionarySearch search(f, policy.get(), SearchOptions{}, 3);
    std::vector<Trace> traces;
    for (int i = 0; i < 6; ++i) {
      auto c = search.Sample();
      if (!c.ok()) continue;
      traces.push_back(c->trace);
      auto child = search.Mutate(*c);
      if (child.ok()) traces.push_back(child->trace);
    }
    ASSERT_FALSE(traces.empty()) << path;
    std::map<std::string, size_t> by_text;
    for (size_t i = 0; i < traces.size(); ++i) {
      const std::string text = traces[i].ToText();
      auto parsed = Trace::Parse(text);
      ASSERT_TRUE(parsed.ok()) << path << ": " << parsed.status().ToString();
      EXPECT_EQ(*parsed, traces[i]) << path << "\n" << text;
      // Equal texts <=> equal traces.
      auto [it, added] = by_text.try_emplace(text, i);
      if (!added) {
        EXPECT_EQ(traces[it->second], traces[i]) << path;
      }
      for (const auto& [other_text, j] : by_text) {
        if (other_text != text) {
          EXPECT_NE(traces[j], traces[i]) << path;
        }
      }
    }
  }
}

class TraceIdentityLoopTest : public testing::TuningLogTest {
 protected:
  TraceIdentityLoopTest() : TuningLogTest("tunefarm_trace_identity_") {}
  Status Tune(int trials) {
    TuneOptions o = testing::LoopOptions(trials);
    o.final_candidates = 2;
    TuningLoop loop(o, db_.get(), &measurer_, nullptr);
    std::atomic<bool> stop{false};
    Status st = loop.Run({*MakeTuneTask(testing::SmallMatmul())}, stop, nullptr);
    if (st.ok()) best_ = loop.status().at(0).best_trace;
    return st;
  }
  // A trace of the small matmul the log does not hold, as the sketch writes it.
  Trace NewTrace() {
    std::set<std::string> logged;
    for (const auto& r : Records()) logged.insert(r.trace);
    auto f = LowerToPrimFunc(testing::SmallMatmul());
    EXPECT_TRUE(f.ok());
    auto policy = MakeCpuSketchPolicy();
    EvolutionarySearch search(*f, policy.get(), SearchOptions{}, 99);
    for (int i = 0; i < 100; ++i) {
      auto c = search.Sample();
      if (c.ok() && c->trace.size() > 0 && !logged.count(c->trace.ToText())) return c->trace;
    }
    ADD_FAILURE() << "no new trace";
    return Trace();
  }
  // Commits `text` as the fastest record of the task, like its other records.
  void CommitFastest(const std::string& text) {
    database::TuningRecord r = Records().back();
    r.uid.clear();
    r.trace = text;
    r.run_secs = {1e-6, 1e-6, 1e-6};
    r.error_kind = database::ErrorKind::kNone;
    r.error_msg.clear();
    ASSERT_TRUE(db_->CommitRecords({r}).ok());
  }
  int RecordsOf(const std::string& text) {
    int n = 0;
    for (const auto& r : Records()) n += r.trace == text;
    return n;
  }

  testing::LuckyOnceMeasurer measurer_;
  std::string best_;
};

TEST_F(TraceIdentityLoopTest, AHandWrittenBestKeepsItsOneRecord) {
  ASSERT_TRUE(Tune(24).ok());
  const Trace trace = NewTrace();
  const std::string by_hand = "# written by hand\n" + trace.ToText();
  CommitFastest(by_hand);
  ASSERT_TRUE(Tune(64).ok());
  EXPECT_EQ(best_, by_hand);  // it leads, as in the log
  EXPECT_EQ(RecordsOf(by_hand), 1);
  EXPECT_EQ(RecordsOf(trace.ToText()), 0);  // nor measured under its own text
}

TEST_F(TraceIdentityLoopTest, ABestInItsOwnTextIsMeasuredAgain) {
  ASSERT_TRUE(Tune(24).ok());
  const std::string text = NewTrace().ToText();
  CommitFastest(text);
  const size_t before = Records().size();
  ASSERT_TRUE(Tune(64).ok());
  // Confirmed first (the resumed run's first batch), then by the final round.
  ASSERT_GT(Records().size(), before);
  EXPECT_EQ(Records()[before].trace, text);
  EXPECT_GE(RecordsOf(text), 2);
}

}  // namespace
}  // namespace tunefarm::tuner
