// Records timed with code of another toolchain (an older tunefarm or LLVM):
// a resumed tuning loop counts them and seeds from them, but only this
// build's times set the best, and it measures the fastest of them again; the
// kernel build serves this build's records first and says when it serves an
// older toolchain's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/kernel_build.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tuning_loop_test_util.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOlderToolchain = "llvm-16";  // what records carried before lowering revisions

class StaleRecordsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_stale_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::unique_ptr<database::Database> Open(const std::string& name) {
    auto db = database::Database::Open((dir_ / name).string());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(db).value() : nullptr;
  }
  // Tunes mm on the test device (synthetic times that depend on the trace only).
  Status Tune(database::Database* db, int trials, TuningLoop** keep = nullptr) {
    loop_ = std::make_unique<TuningLoop>(testing::LoopOptions(trials), db, &measurer_, nullptr);
    if (keep) *keep = loop_.get();
    std::atomic<bool> stop{false};
    return loop_->Run({*MakeTuneTask(testing::SmallMatmul())}, stop, nullptr);
  }
  // Every record of `db`, in commit order.
  static std::vector<database::TuningRecord> Records(database::Database* db) {
    std::vector<database::TuningRecord> out;
    EXPECT_TRUE(db->ForEachRecord({}, [&](const database::TuningRecord& r) {
                    out.push_back(r);
                    return Status::OK();
                  }).ok());
    return out;
  }
  // A copy of `from`'s records into a new log, as an older tunefarm wrote
  // them: its toolchain; `faster` makes the trace's time 100x shorter.
  std::unique_ptr<database::Database> OlderLog(database::Database* from, const std::string& faster = "") {
    auto older = Open("older.db");
    auto workloads = from->ListWorkloads();
    EXPECT_TRUE(workloads.ok());
    for (const auto& w : *workloads) EXPECT_TRUE(older->CommitWorkload(w).ok());
    for (database::TuningRecord r : Records(from)) {
      r.uid.clear();
      r.target.fingerprint.toolchain = kOlderToolchain;
      if (r.trace == faster) {
        for (double& s : r.run_secs) s /= 100;
      }
      EXPECT_TRUE(older->CommitRecord(r).ok());
    }
    return older;
  }

  fs::path dir_;
  TestDeviceMeasurer measurer_;
  std::unique_ptr<TuningLoop> loop_;
};

TEST_F(StaleRecordsTest, ToolchainNamesLlvmAndTheLoweringRevision) {
  EXPECT_EQ(CodegenToolchain().rfind("llvm-", 0), 0u) << CodegenToolchain();
  EXPECT_NE(CodegenToolchain().find(" lowering-r" + std::to_string(kLoweringRevision)), std::string::npos);
  EXPECT_NE(CodegenToolchain(), kOlderToolchain);
  EXPECT_EQ(RecordTarget(Target::Host()).fingerprint.toolchain, CodegenToolchain());
}

// The fastest older records are measured again (here one whose older time is
// 100x too fast); their new records carry this toolchain and the best is
// this build's time; a second resume has nothing left to refresh.
TEST_F(StaleRecordsTest, ResumeMeasuresTheFastestOlderRecordsAgain) {
  auto fresh = Open("fresh.db");
  ASSERT_TRUE(Tune(fresh.get(), 24).ok());
  std::vector<database::TuningRecord> tuned = Records(fresh.get());
  ASSERT_EQ(tuned.size(), 24u);
  // The loop measures the default schedule first. Expected on resume: the
  // default again (the baseline), then the older successes faster than it,
  // fastest first, at most kRefreshLimit.
  ASSERT_TRUE(tuned[0].ok());
  const double default_secs = *tuned[0].TimeSec();
  std::vector<std::pair<double, std::string>> faster_than_default;
  const database::TuningRecord* slowest = nullptr;
  for (const auto& r : tuned) {
    if (r.ok() && (!slowest || *r.TimeSec() > *slowest->TimeSec())) slowest = &r;
  }
  ASSERT_NE(slowest, nullptr);
  ASSERT_NE(slowest->trace, tuned[0].trace) << "the test needs a tuned schedule slower than others";
  std::set<std::string> listed;  // a best measured again has two records: one program
  for (const auto& r : tuned) {
    double secs = r.trace == slowest->trace ? *r.TimeSec() / 100 : *r.TimeSec();
    if (r.ok() && r.trace != tuned[0].trace && secs < default_secs && listed.insert(r.trace).second) {
      faster_than_default.push_back({secs, r.trace});
    }
  }
  std::sort(faster_than_default.begin(), faster_than_default.end());
  if (faster_than_default.size() > size_t(kRefreshLimit)) faster_than_default.resize(kRefreshLimit);
  fresh.reset();

  auto older = OlderLog(Open("fresh.db").get(), slowest->trace);
  TuningLoop* loop = nullptr;
  ASSERT_TRUE(Tune(older.get(), 24, &loop).ok());
  const TaskStatus& status = loop->status().at(0);
  EXPECT_EQ(status.stale_records, 24);
  EXPECT_EQ(status.stale_from, "code of toolchain 'llvm-16'");
  EXPECT_EQ(status.refreshed, int(faster_than_default.size()));
  EXPECT_EQ(status.trials, 24 + 1 + status.refreshed) << "the default and the refreshed records are new trials";

  std::vector<database::TuningRecord> after = Records(older.get());
  ASSERT_EQ(after.size(), size_t(status.trials));
  std::set<std::string> retimed;
  for (size_t i = 24; i < after.size(); ++i) {
    EXPECT_EQ(after[i].target.fingerprint.toolchain, CodegenToolchain());
    retimed.insert(after[i].trace);
  }
  EXPECT_TRUE(retimed.count(tuned[0].trace)) << "the baseline is this build's";
  for (const auto& [secs, trace] : faster_than_default) EXPECT_TRUE(retimed.count(trace)) << trace;
  EXPECT_TRUE(retimed.count(slowest->trace)) << "its older time beat everything: it is measured again";
  // The best is this build's: no older time, the 100x one included.
  ASSERT_GT(status.best_seconds, 0);
  EXPECT_GE(status.best_seconds, 1e-3) << "test-device times are 1-2 ms; older ones set no best";
  bool best_is_current = false;
  for (const auto& r : after) {
    if (r.id == status.best_record_id) best_is_current = r.target.fingerprint.toolchain == CodegenToolchain();
  }
  EXPECT_TRUE(best_is_current);

  // Resumed again: the fastest older records now have this build's times.
  ASSERT_TRUE(Tune(older.get(), status.trials, &loop).ok());
  EXPECT_EQ(loop->status().at(0).stale_records, 24);
  EXPECT_EQ(loop->status().at(0).refreshed, 0);
  EXPECT_EQ(Records(older.get()).size(), after.size());
}

// compile's lookup: this toolchain's records first (same_device), even when
// an older one is faster; with only older ones, the same-architecture rung
// serves them and the kernel says whose code was timed.
TEST_F(StaleRecordsTest, KernelBuildPrefersThisToolchainAndNamesAnOlderOne) {
  auto fresh = Open("fresh.db");
  ASSERT_TRUE(Tune(fresh.get(), 8).ok());
  auto older = OlderLog(fresh.get());
  KernelBuildOptions options;
  auto only_older = BuildKernelFromLog(testing::SmallMatmul(), testing::LoopTarget(), older.get(), options);
  ASSERT_TRUE(only_older.ok()) << only_older.status().ToString();
  EXPECT_EQ(only_older->level, database::FallbackLevel::kSameArch);
  EXPECT_EQ(only_older->record_other_toolchain, kOlderToolchain);
  EXPECT_NE(only_older->schedule_description.find("with code of toolchain 'llvm-16'"), std::string::npos)
      << only_older->schedule_description;

  // One record of this build, slower than every older one.
  database::TuningRecord current = Records(fresh.get()).back();
  current.uid.clear();
  current.run_secs = {1.0};
  auto id = older->CommitRecord(current);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto served = BuildKernelFromLog(testing::SmallMatmul(), testing::LoopTarget(), older.get(), options);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(served->level, database::FallbackLevel::kSameDevice);
  EXPECT_EQ(served->record_id, *id);
  EXPECT_TRUE(served->record_other_toolchain.empty());
  EXPECT_EQ(served->schedule_description.find("toolchain"), std::string::npos) << served->schedule_description;
}

}  // namespace
}  // namespace tunefarm::tuner
