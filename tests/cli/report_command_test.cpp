// `tunefarm report`: one task of small_cnn tuned, the others not; the best
// and default times the log holds, the model's latency and what it covers,
// the HTML page, records of another thread count, a log without the default's
// record, and the errors (a model that does not import, a missing log that
// stays missing, a target that is not one).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/database/database.h"
#include "cli_test_util.h"

namespace tunefarm::cli_test {
namespace {

constexpr char kTuned[] = "small_cnn_dense_m1_n10_k16";
constexpr char kUntuned[] = "small_cnn_conv3x3_c3_k8_h17_w19_s2_relu";

std::string Model(const std::string& name) { return std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name; }

// The line of `text` that holds `needle` (the table row of a task); "" if none.
std::string LineWith(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) != std::string::npos) return line;
  }
  return "";
}

bool IsDefault(const std::string& trace_text) {
  auto trace = Trace::Parse(trace_text);
  return !TraceTextHasContent(trace_text) || (trace.ok() && trace->size() == 0);
}

// One log for the suite: small_cnn's dense task, tuned alone from the file
// `tunefarm import -o` wrote for it, for 8 trials.
class ReportCommandTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("tf_report_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    Output import = RunTunefarm("import " + Model("small_cnn.onnx") + " -o " + P("tasks"));
    ASSERT_EQ(import.code, 0) << import.text;
    Output tune = RunTunefarm("tune " + P(std::string("tasks/") + kTuned + ".tf") +
                              " --trials 8 --batch-size 8 --repeat 1 --min-repeat-ms 1 --curve '' --db " + P("log.db") +
                              " --configs " + std::string(TUNEFARM_SOURCE_DIR) + "/configs");
    ASSERT_EQ(tune.code, 0) << tune.text;
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void SetUp() override {
    if (!fs::exists(dir_ / "log.db")) GTEST_SKIP() << "the suite's tuning run failed (see SetUpTestSuite)";
  }
  static std::string P(const std::string& name) { return (dir_ / name).string(); }
  static fs::path dir_;
};
fs::path ReportCommandTest::dir_;

TEST_F(ReportCommandTest, NamesTheTunedTaskWithItsTimesAndTheOthersAsNotTuned) {
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db"));
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("model small_cnn"), std::string::npos) << out.text;
  const std::string tuned = LineWith(out.text, kTuned);
  ASSERT_FALSE(tuned.empty()) << out.text;
  EXPECT_EQ(tuned.find("not tuned"), std::string::npos) << tuned;
  EXPECT_EQ(tuned.find("n/a"), std::string::npos) << "the log keeps the default's time\n" << tuned;
  EXPECT_NE(tuned.find("100.0%"), std::string::npos) << "the only tuned task is all of the tuned time\n" << tuned;

  // The speed-up is the log's: the default trace's mean over the best
  // trace's mean, on the target and hardware of the best record.
  auto db = database::Database::Open(P("log.db"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  database::TuningRecord any;
  double default_sum = 0;
  int default_count = 0;
  ASSERT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                  any = r;
                  if (r.ok() && IsDefault(r.trace)) {
                    default_sum += *r.TimeSec();
                    ++default_count;
                  }
                  return Status::OK();
                }).ok());
  ASSERT_GT(default_count, 0) << "tune measures the untuned default and keeps it in the log";
  auto best = (*db)->GetBest(any.workload_hash, any.target);
  ASSERT_TRUE(best.ok() && best->record) << best.status().ToString();
  char speedup[32];
  std::snprintf(speedup, sizeof(speedup), "%.2fx", default_sum / default_count / *best->record->RankSec());
  EXPECT_NE(tuned.find(speedup), std::string::npos) << "want " << speedup << "\n" << tuned;
  EXPECT_NE(tuned.find("#" + std::to_string(best->record->id)), std::string::npos) << tuned;

  for (const char* other : {kUntuned, "small_cnn_maxpool3x3_c8_h9_w10_s2", "small_cnn_global_avgpool_c16_h5"}) {
    EXPECT_NE(LineWith(out.text, other).find("not tuned"), std::string::npos) << other << "\n" << out.text;
  }
  EXPECT_NE(out.text.find("estimated latency"), std::string::npos) << out.text;
  EXPECT_NE(LineWith(out.text, "untuned defaults").find("over 1 of 7 tasks (1 of 7 calls)"), std::string::npos)
      << out.text;
  EXPECT_NE(LineWith(out.text, "tuned (best)").find("6 not tuned"), std::string::npos) << out.text;
  EXPECT_NE(LineWith(out.text, "speed-up          ").find(std::string(speedup) + "  over the 1 task with both"),
            std::string::npos)
      << out.text;
}

TEST_F(ReportCommandTest, WritesOneSelfContainedHtmlPageWithABarChart) {
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db") + " --html " + P("r.html"));
  ASSERT_EQ(out.code, 0) << out.text;
  std::ifstream in(P("r.html"));
  std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u) << html.substr(0, 200);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("</svg>"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_NE(html.find(kTuned), std::string::npos);
  EXPECT_NE(html.find(kUntuned), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "nothing runs";
  // Nothing is fetched: the one URL is the SVG namespace, a name.
  for (size_t at = html.find("http"); at != std::string::npos; at = html.find("http", at + 1)) {
    EXPECT_EQ(html.compare(at, 27, "http://www.w3.org/2000/svg\""), 0) << html.substr(at, 80);
  }
  EXPECT_EQ(html.find(" src="), std::string::npos);
  // The chart: the tuned task's two bars (default and tuned share) come first.
  const size_t svg = html.find("<svg");
  EXPECT_LT(html.find(kTuned, svg), html.find(kUntuned, svg)) << "biggest first";
}

// Records are kept per thread count, as `tunefarm tune --threads` keys them.
// Asked for one thread, the log tuned at the default count has no record of
// that target; `tunefarm compile` would fall back to the same architecture's
// record, and the report shows that one, saying so and at which count it was
// timed.
TEST_F(ReportCommandTest, ThreadsSelectsTheRecordsOfThatThreadCount) {
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db") + " --threads 1");
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("-num-threads=1"), std::string::npos) << out.text;
  const std::string tuned = LineWith(out.text, kTuned);
  EXPECT_NE(tuned.find("same-arch record"), std::string::npos) << out.text;
  EXPECT_NE(tuned.find("timed at the default thread count"), std::string::npos) << out.text;
  Output all = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db"));
  ASSERT_EQ(all.code, 0) << all.text;
  EXPECT_EQ(LineWith(all.text, kTuned).find("same-arch"), std::string::npos) << all.text;
  EXPECT_EQ(LineWith(all.text, kTuned).find("timed at"), std::string::npos) << all.text;
  Output both = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db") +
                            " --threads 2 --target 'llvm -num-threads=1'");
  EXPECT_EQ(both.code, 1) << both.text;
  EXPECT_NE(both.text.find("contradicts"), std::string::npos) << both.text;
}

// A log whose default record is gone (copied without it, as a pruned log
// can be) says so instead of inventing a baseline.
TEST_F(ReportCommandTest, ALogWithoutTheDefaultsRecordSaysDefaultNotAvailable) {
  {
    auto from = database::Database::Open(P("log.db"));
    ASSERT_TRUE(from.ok()) << from.status().ToString();
    auto to = database::Database::Open(P("no_default.db"));
    ASSERT_TRUE(to.ok()) << to.status().ToString();
    auto workloads = (*from)->ListWorkloads();
    ASSERT_TRUE(workloads.ok());
    for (const database::Workload& w : *workloads) ASSERT_TRUE((*to)->CommitWorkload(w).ok());
    std::vector<database::TuningRecord> kept;
    ASSERT_TRUE((*from)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                    if (!IsDefault(r.trace)) kept.push_back(r);
                    return Status::OK();
                  }).ok());
    ASSERT_FALSE(kept.empty());
    ASSERT_TRUE((*to)->CommitRecords(kept).ok());
  }
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("no_default.db"));
  ASSERT_EQ(out.code, 0) << out.text;
  const std::string tuned = LineWith(out.text, kTuned);
  EXPECT_NE(tuned.find("default n/a"), std::string::npos) << out.text;
  EXPECT_EQ(tuned.find("not tuned"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("the log holds no default time for any task"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("no task has both a default and a tuned time"), std::string::npos) << out.text;
}

TEST_F(ReportCommandTest, AModelThatDoesNotImportIsAnErrorNamingTheNode) {
  Output out = RunTunefarm("report " + Model("malformed/unknown_op.onnx") + " --db " + P("log.db"));
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("error: "), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("mystery_0"), std::string::npos) << out.text;
  // A symbolic dimension takes its value from --set, as in import and tune.
  Output unset = RunTunefarm("report " + Model("malformed/symbolic_dim.onnx") + " --db " + P("log.db"));
  EXPECT_EQ(unset.code, 1) << unset.text;
  Output set = RunTunefarm("report " + Model("malformed/symbolic_dim.onnx") + " --db " + P("log.db") +
                           " --set batch=1");
  EXPECT_EQ(set.code, 0) << set.text;
  EXPECT_NE(set.text.find("not tuned"), std::string::npos) << set.text;
}

TEST_F(ReportCommandTest, AMissingLogIsAnErrorAndStaysMissing) {
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("nothing.db"));
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find(P("nothing.db") + " does not exist"), std::string::npos) << out.text;
  EXPECT_FALSE(fs::exists(dir_ / "nothing.db"));
  EXPECT_FALSE(fs::exists(dir_ / "nothing.db-wal"));
}

TEST_F(ReportCommandTest, ATargetThatIsNotOneIsAnError) {
  Output out = RunTunefarm("report " + Model("small_cnn.onnx") + " --db " + P("log.db") +
                           " --target 'llvm -mtriple=banana'");
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("error: --target"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("banana"), std::string::npos) << out.text;
}

TEST_F(ReportCommandTest, HelpHasExamples) {
  Output out = RunTunefarm("report --help");
  EXPECT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("Examples:"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("--html"), std::string::npos) << out.text;
}

}  // namespace
}  // namespace tunefarm::cli_test
