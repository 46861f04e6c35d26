// `tunefarm db ...`: the subcommand functions, with their output and exit codes.
#include "tunefarm/database/db_commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::TempDir;

class DbCommandsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.db_path = dir_.File("tune.db");
    auto db = OpenOrDie(options_.db_path);
    ASSERT_TRUE(db->CommitWorkload(MakeWorkload("w1")).ok());
    std::vector<TuningRecord> batch;
    for (int i = 1; i <= 12; ++i) batch.push_back(MakeRecord("w1", CpuTarget(), {i * 1e-3}, "t" + std::to_string(i)));
    ASSERT_TRUE(db->CommitRecords(batch).ok());
    options_.workload = "w1";
    options_.target = CpuTarget().target;
  }
  TempDir dir_;
  DbCommandOptions options_;
  std::ostringstream out_, err_;
};

TEST_F(DbCommandsTest, StatsPrintsCounts) {
  options_.json = true;
  ASSERT_EQ(RunDbStats(options_, out_, err_), 0) << err_.str();
  auto json = nlohmann::json::parse(out_.str());
  EXPECT_EQ(json["records"], 12);
  EXPECT_EQ(json["workloads"], 1);
}

TEST_F(DbCommandsTest, BestSaysTheFallbackLevel) {
  options_.fingerprint = CpuTarget().fingerprint;
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("fallback level: same_device"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("trace    t1"), std::string::npos) << out_.str();

  out_.str("");
  options_.fingerprint.cores = 64;  // another box with the same CPU model
  options_.json = true;
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0);
  auto json = nlohmann::json::parse(out_.str());
  EXPECT_EQ(json["level"], "same_arch");
  EXPECT_EQ(json["record"]["trace"], "t1");

  out_.str("");
  options_.fingerprint.arch = "cortex-a72";
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0);
  EXPECT_EQ(nlohmann::json::parse(out_.str())["level"], "none");
}

// t1 measured again at 5 ms: its mean, 3 ms, ranks behind t2; best and top
// say which mean a trace ranks by and over how many measurements.
TEST_F(DbCommandsTest, BestAndTopShowTheMeanOfATraceMeasuredAgain) {
  {
    auto db = OpenOrDie(options_.db_path);
    ASSERT_TRUE(db->CommitRecord(MakeRecord("w1", CpuTarget(), {5e-3}, "t1")).ok());
  }
  options_.fingerprint = CpuTarget().fingerprint;
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("trace    t2"), std::string::npos) << out_.str();

  out_.str("");
  options_.k = 2;
  ASSERT_EQ(RunDbTop(options_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("ranked   3 ms, the mean of the 2 measurements of this trace"), std::string::npos)
      << out_.str();

  out_.str("");
  options_.json = true;
  ASSERT_EQ(RunDbTop(options_, out_, err_), 0) << err_.str();
  std::istringstream lines(out_.str());
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  auto t1 = nlohmann::json::parse(second);
  EXPECT_EQ(t1["trace"], "t1");
  EXPECT_EQ(t1["trace_records"], 2);
  EXPECT_DOUBLE_EQ(t1["trace_mean_sec"].get<double>(), 3e-3);
}

TEST_F(DbCommandsTest, TopListsKFastest) {
  options_.k = 3;
  options_.json = true;
  ASSERT_EQ(RunDbTop(options_, out_, err_), 0) << err_.str();
  std::istringstream lines(out_.str());
  std::vector<std::string> traces;
  std::string line;
  while (std::getline(lines, line)) traces.push_back(nlohmann::json::parse(line)["trace"]);
  EXPECT_EQ(traces, (std::vector<std::string>{"t1", "t2", "t3"}));
  options_.k = 0;
  EXPECT_EQ(RunDbTop(options_, out_, err_), 1);
}

TEST_F(DbCommandsTest, ExportImportMergePrune) {
  options_.file = dir_.File("log.jsonl");
  options_.workload.clear();
  options_.target.clear();
  ASSERT_EQ(RunDbExport(options_, out_, err_), 0) << err_.str();

  DbCommandOptions other;
  other.db_path = dir_.File("copy.db");
  other.file = options_.file;
  std::istringstream no_stdin;
  ASSERT_EQ(RunDbImport(other, no_stdin, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("imported 12 record(s)"), std::string::npos) << out_.str();

  other.sources = {options_.db_path};
  ASSERT_EQ(RunDbMerge(other, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("12 already present"), std::string::npos) << out_.str();

  other.k = 5;
  ASSERT_EQ(RunDbPrune(other, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("pruned 7 record(s)"), std::string::npos) << out_.str();
  EXPECT_EQ(OpenOrDie(other.db_path)->Stats()->records, 5);
}

TEST_F(DbCommandsTest, WorkloadByNameOrHash) {
  auto db = OpenOrDie(options_.db_path);
  ASSERT_TRUE(db->CommitWorkload(MakeWorkload("w2")).ok());
  ASSERT_TRUE(db->CommitRecords({MakeRecord("w2", CpuTarget(), {5e-3})}).ok());
  db.reset();
  options_.file = "-";
  for (const std::string& name : {std::string("w2"), std::string("matmul_w2")}) {
    options_.workload = name;
    out_.str("");
    ASSERT_EQ(RunDbExport(options_, out_, err_), 0) << err_.str();
    // The header, w2's workload line and its one record.
    std::string text = out_.str();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3) << name << ":\n" << text;
    EXPECT_NE(text.find("\"workload\":\"w2\""), std::string::npos) << text;
    EXPECT_EQ(text.find("\"workload\":\"w1\""), std::string::npos) << text;
    out_.str("");
    ASSERT_EQ(RunDbTop(options_, out_, err_), 0) << err_.str();
    EXPECT_NE(out_.str().find("1 record(s)"), std::string::npos) << out_.str();
  }
}

// With a system log, `db best` finds a workload by name in either log, and
// a name in neither is still an error, not "no record".
TEST_F(DbCommandsTest, BestResolvesNamesInTheSystemLogToo) {
  std::string system_path = dir_.File("system.db");
  {
    auto system = OpenOrDie(system_path);
    ASSERT_TRUE(system->CommitWorkload(MakeWorkload("s1")).ok());
    ASSERT_TRUE(system->CommitRecords({MakeRecord("s1", CpuTarget(), {4e-3}, "from-system")}).ok());
  }
  options_.system_db_path = system_path;
  options_.fingerprint = CpuTarget().fingerprint;
  options_.workload = "matmul_s1";
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("trace    from-system"), std::string::npos) << out_.str();
  options_.workload = "matmul_w1";
  out_.str("");
  ASSERT_EQ(RunDbBest(options_, out_, err_), 0) << err_.str();
  EXPECT_NE(out_.str().find("trace    t1"), std::string::npos) << out_.str();
  options_.workload = "matmul_typo";
  err_.str("");
  EXPECT_EQ(RunDbBest(options_, out_, err_), 1);
  EXPECT_NE(err_.str().find("no workload 'matmul_typo'"), std::string::npos) << err_.str();
}

TEST_F(DbCommandsTest, UserErrorsExitWithOneAndSayWhy) {
  DbCommandOptions missing;
  missing.db_path = dir_.File("absent.db");
  EXPECT_EQ(RunDbStats(missing, out_, err_), 1);
  EXPECT_NE(err_.str().find("absent.db"), std::string::npos);

  testing::WriteFileBytes(dir_.File("foreign.db"), "hello");
  DbCommandOptions foreign = options_;
  foreign.db_path = dir_.File("foreign.db");
  err_.str("");
  EXPECT_EQ(RunDbBest(foreign, out_, err_), 1);
  EXPECT_NE(err_.str().find("not a tunefarm database"), std::string::npos) << err_.str();

  DbCommandOptions bad_import;
  bad_import.db_path = dir_.File("x.db");
  bad_import.file = "-";
  std::istringstream garbage("not json\n");
  err_.str("");
  EXPECT_EQ(RunDbImport(bad_import, garbage, out_, err_), 1);
  EXPECT_NE(err_.str().find("<stdin>:1:"), std::string::npos) << err_.str();

  // A workload the log does not hold is an error naming what it does hold,
  // not an empty export.
  DbCommandOptions unknown = options_;
  unknown.workload = "gmm_512";
  unknown.file = "-";
  err_.str("");
  out_.str("");
  EXPECT_EQ(RunDbExport(unknown, out_, err_), 1);
  EXPECT_EQ(out_.str(), "");
  EXPECT_NE(err_.str().find("no workload 'gmm_512'"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("matmul_w1 (w1)"), std::string::npos) << err_.str();
  err_.str("");
  EXPECT_EQ(RunDbTop(unknown, out_, err_), 1);
  EXPECT_NE(err_.str().find("no workload 'gmm_512'"), std::string::npos) << err_.str();
  err_.str("");
  EXPECT_EQ(RunDbBest(unknown, out_, err_), 1);
  EXPECT_NE(err_.str().find("no workload 'gmm_512'"), std::string::npos) << err_.str();

  options_.workload.clear();
  EXPECT_EQ(RunDbBest(options_, out_, err_), 1);
  DbCommandOptions no_sources = options_;
  EXPECT_EQ(RunDbMerge(no_sources, out_, err_), 1);
}

}  // namespace
}  // namespace tunefarm::database
