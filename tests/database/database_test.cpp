// Committing and querying: top-k order, failed records, the fallback chain,
// append-only records, validation, jobs, read-only handles.
#include <gtest/gtest.h>

#include "test_util.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::GpuTarget;
using testing::MakeFailedRecord;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::TempDir;

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = OpenOrDie(dir_.File("tune.db"));
    ASSERT_NE(db_, nullptr);
    ASSERT_TRUE(db_->CommitWorkload(MakeWorkload("w1")).ok());
    ASSERT_TRUE(db_->CommitWorkload(MakeWorkload("w2")).ok());
  }
  TempDir dir_;
  std::unique_ptr<Database> db_;
};

TEST_F(DatabaseTest, CommitThenQueryReturnsTheSameRecord) {
  TuningRecord record = MakeRecord("w1", CpuTarget(), {2e-3, 3e-3, 4e-3});
  record.error_msg = "";
  auto id = db_->CommitRecord(record);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_GT(*id, 0);

  auto top = db_->GetTopK("w1", CpuTarget(), 5);
  ASSERT_TRUE(top.ok()) << top.status().ToString();
  ASSERT_EQ(top->size(), 1u);
  const TuningRecord& got = top->front();
  EXPECT_EQ(got.id, *id);
  EXPECT_EQ(got.uid.size(), 32u);
  EXPECT_EQ(got.workload_hash, "w1");
  TuningRecord expected = record;
  CanonicalizeFingerprint(&expected.target.fingerprint);
  EXPECT_EQ(got.target, expected.target);
  EXPECT_EQ(got.trace, record.trace);
  EXPECT_EQ(got.run_secs, record.run_secs);  // every repeat, bit for bit
  EXPECT_EQ(got.worker, record.worker);
  EXPECT_EQ(got.device, record.device);
  EXPECT_EQ(got.tunefarm_version, TunefarmVersion());
  EXPECT_GT(got.created_at_us, 0);
  EXPECT_DOUBLE_EQ(*got.TimeSec(), 2e-3);  // the fastest timed group
}

TEST_F(DatabaseTest, TopKIsFastestFirstAndSkipsFailures) {
  std::vector<TuningRecord> batch;
  for (double t : {5.0, 1.0, 4.0, 2.0, 3.0}) batch.push_back(MakeRecord("w1", CpuTarget(), {t * 1e-3}));
  batch.push_back(MakeFailedRecord("w1", CpuTarget(), ErrorKind::kWrongResult));
  batch.push_back(MakeFailedRecord("w1", CpuTarget(), ErrorKind::kTimeout));
  batch.push_back(MakeRecord("w2", CpuTarget(), {0.1e-3}));      // other workload
  batch.push_back(MakeRecord("w1", CpuTarget("znver5"), {0.1e-3}));  // other target
  ASSERT_TRUE(db_->CommitRecords(batch).ok());

  auto top = db_->GetTopK("w1", CpuTarget(), 3);
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 3u);
  EXPECT_DOUBLE_EQ(*(*top)[0].TimeSec(), 1e-3);
  EXPECT_DOUBLE_EQ(*(*top)[1].TimeSec(), 2e-3);
  EXPECT_DOUBLE_EQ(*(*top)[2].TimeSec(), 3e-3);

  auto all = db_->GetTopK("w1", CpuTarget(), 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 5u);  // the two failures never rank
  for (const auto& r : *all) EXPECT_TRUE(r.ok());

  auto by_string = db_->GetTopKByTargetString("w1", CpuTarget().target, 100);
  ASSERT_TRUE(by_string.ok());
  EXPECT_EQ(by_string->size(), 5u);
  EXPECT_TRUE(db_->GetTopK("w1", CpuTarget(), 0).status().code() == StatusCode::kInvalidArgument);
  EXPECT_TRUE(db_->GetTopK("nope", CpuTarget(), 3)->empty());
}

TEST_F(DatabaseTest, FailedRecordIsNeverBest) {
  ASSERT_TRUE(db_->CommitRecord(MakeFailedRecord("w1", CpuTarget(), ErrorKind::kCompileError)).ok());
  auto best = db_->GetBest("w1", CpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kNone);
  EXPECT_FALSE(best->record.has_value());
}

// A lookup with a usability check answers with the fastest record it
// accepts; the check sees the faster ones first.
TEST_F(DatabaseTest, BestSkipsRecordsTheCallerCannotUse) {
  ASSERT_TRUE(db_->CommitRecords({MakeRecord("w1", CpuTarget(), {1e-3}, "stale-a"),
                                  MakeRecord("w1", CpuTarget(), {2e-3}, "stale-b"),
                                  MakeRecord("w1", CpuTarget(), {3e-3}, "fits"),
                                  MakeRecord("w1", CpuTarget(), {4e-3}, "fits-slower")})
                  .ok());
  std::vector<std::string> seen;
  auto best = db_->GetBest("w1", CpuTarget(), [&](const TuningRecord& r) {
    seen.push_back(r.trace);
    return r.trace.rfind("fits", 0) == 0;
  });
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_TRUE(best->record.has_value());
  EXPECT_EQ(best->record->trace, "fits");
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);
  EXPECT_EQ(seen, (std::vector<std::string>{"stale-a", "stale-b", "fits"}));
  // Nothing usable: no record, not an error.
  auto none = db_->GetBest("w1", CpuTarget(), [](const TuningRecord&) { return false; });
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->record.has_value());
  // Without a check, the fastest.
  EXPECT_EQ(db_->GetBest("w1", CpuTarget())->record->trace, "stale-a");
}

TEST_F(DatabaseTest, FallbackChainSaysWhichLevelMatched) {
  Target here = CpuTarget("znver4", 2, "llvm-16");
  Target same_arch_other_box = CpuTarget("znver4", 16, "llvm-17");
  Target other_arch = CpuTarget("skylake", 2, "llvm-16");
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", same_arch_other_box, {2e-3}, "arch-trace")).ok());
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", other_arch, {0.5e-3}, "other-arch-trace")).ok());

  auto best = db_->GetBest("w1", here);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kSameArch);
  ASSERT_TRUE(best->record.has_value());
  EXPECT_EQ(best->record->trace, "arch-trace");  // the faster other-arch record is not used

  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", here, {9e-3}, "device-trace")).ok());
  best = db_->GetBest("w1", here);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);  // slower, but measured on this very device
  EXPECT_EQ(best->record->trace, "device-trace");

  best = db_->GetBest("w1", GpuTarget());
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kNone);
  EXPECT_EQ(FallbackLevelName(best->level), "none");
}

TEST_F(DatabaseTest, FeatureOrderDoesNotMatter) {
  Target a = CpuTarget();
  Target b = a;
  std::reverse(b.fingerprint.features.begin(), b.fingerprint.features.end());
  b.fingerprint.features.push_back("avx2");  // duplicate
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", a, {1e-3})).ok());
  auto best = db_->GetBest("w1", b);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ(best->level, FallbackLevel::kSameDevice);
}

TEST_F(DatabaseTest, RecordsAreAppendOnly) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", CpuTarget(), {1e-3})).ok());
  std::string result = testing::RawQuery(db_->path(), "UPDATE records SET mean_sec = 0 RETURNING id");
  EXPECT_NE(result.find("append-only"), std::string::npos) << result;
  // Committing the same uid twice is refused, not overwritten.
  TuningRecord record = MakeRecord("w1", CpuTarget(), {1e-3});
  record.uid = NewRecordUid();
  ASSERT_TRUE(db_->CommitRecord(record).ok());
  record.run_secs = {5e-3};
  auto again = db_->CommitRecord(record);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  EXPECT_EQ(db_->Stats()->records, 2);
}

TEST_F(DatabaseTest, InvalidRecordsAreRefusedWithReasons) {
  auto missing_workload = db_->CommitRecord(MakeRecord("unknown", CpuTarget(), {1e-3}));
  EXPECT_EQ(missing_workload.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing_workload.status().message().find("unknown"), std::string::npos);

  EXPECT_EQ(db_->CommitRecord(MakeRecord("w1", CpuTarget(), {})).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->CommitRecord(MakeRecord("w1", CpuTarget(), {-1.0})).status().code(),
            StatusCode::kInvalidArgument);
  TuningRecord failed_with_times = MakeFailedRecord("w1", CpuTarget(), ErrorKind::kTimeout);
  failed_with_times.run_secs = {1.0};
  EXPECT_EQ(db_->CommitRecord(failed_with_times).status().code(), StatusCode::kInvalidArgument);

  TuningRecord not_utf8 = MakeRecord("w1", CpuTarget(), {1e-3}, "split(i, \xff\xfe)");
  EXPECT_EQ(db_->CommitRecord(not_utf8).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db_->CommitWorkload(Workload{"w9", "bad", "\xc3"}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsValidUtf8("\xc2\xb5s \xe2\x9c\x93 \xf0\x9f\x98\x80"));

  // A batch with one bad record commits nothing.
  std::vector<TuningRecord> batch = {MakeRecord("w1", CpuTarget(), {1e-3}), MakeRecord("nope", CpuTarget(), {1e-3})};
  auto ids = db_->CommitRecords(batch);
  EXPECT_FALSE(ids.ok());
  EXPECT_NE(ids.status().message().find("record 1 of 2"), std::string::npos) << ids.status().ToString();
  EXPECT_EQ(db_->Stats()->records, 0);
  EXPECT_EQ(db_->Stats()->targets, 0);  // the target of the rolled-back batch is gone too
  // And a later commit with the same target still works (no stale cache).
  EXPECT_TRUE(db_->CommitRecord(MakeRecord("w1", CpuTarget(), {1e-3})).ok());
}

TEST_F(DatabaseTest, WorkloadsKeepTheirFirstText) {
  Workload changed = MakeWorkload("w1");
  changed.text = "something else";
  ASSERT_TRUE(db_->CommitWorkload(changed).ok());
  auto got = db_->GetWorkload("w1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, MakeWorkload("w1"));
  EXPECT_FALSE(db_->GetWorkload("zzz")->has_value());
  EXPECT_EQ(db_->ListWorkloads()->size(), 2u);
  EXPECT_EQ(db_->CommitWorkload(Workload{"", "x", "y"}).code(), StatusCode::kInvalidArgument);
}

TEST_F(DatabaseTest, JobsResumeFromStoredState) {
  JobState job;
  job.id = "job-1";
  job.target = CpuTarget().target;
  job.spec = R"({"workloads":["w1","w2"],"trials":200})";
  job.trial_budget = 200;
  ASSERT_TRUE(db_->CreateJob(job).ok());
  EXPECT_EQ(db_->CreateJob(job).code(), StatusCode::kAlreadyExists);

  job.status = JobStatus::kRunning;
  job.trials_done = 64;
  job.progress = R"({"w1":64})";
  ASSERT_TRUE(db_->UpdateJob(job).ok());

  // A restarted tuner opens the file again and finds the job where it was.
  std::string path = db_->path();
  db_.reset();
  auto reopened = OpenOrDie(path);
  auto got = reopened->GetJob("job-1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->status, JobStatus::kRunning);
  EXPECT_EQ((*got)->trials_done, 64);
  EXPECT_EQ((*got)->progress, job.progress);
  EXPECT_EQ((*got)->spec, job.spec);
  EXPECT_GT((*got)->updated_at_us, 0);
  EXPECT_EQ(reopened->ListJobs(JobStatus::kRunning)->size(), 1u);
  EXPECT_EQ(reopened->ListJobs(JobStatus::kDone)->size(), 0u);
  EXPECT_EQ(reopened->ListJobs()->size(), 1u);  // no filter: every job
  JobState unknown;
  unknown.id = "nope";
  EXPECT_EQ(reopened->UpdateJob(unknown).code(), StatusCode::kNotFound);
}

TEST_F(DatabaseTest, ReadOnlyHandleRefusesWrites) {
  ASSERT_TRUE(db_->CommitRecord(MakeRecord("w1", CpuTarget(), {1e-3})).ok());
  OpenOptions options;
  options.read_only = true;
  auto ro = OpenOrDie(db_->path(), options);
  EXPECT_EQ(ro->GetBest("w1", CpuTarget())->level, FallbackLevel::kSameDevice);
  EXPECT_EQ(ro->CommitRecord(MakeRecord("w1", CpuTarget(), {1e-3})).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(ro->CommitWorkload(MakeWorkload("w3")).code(), StatusCode::kFailedPrecondition);
}

TEST_F(DatabaseTest, StatsCountEverything) {
  ASSERT_TRUE(db_->CommitRecords({MakeRecord("w1", CpuTarget(), {1e-3}), MakeRecord("w2", GpuTarget(), {1e-3}),
                                  MakeFailedRecord("w2", GpuTarget(), ErrorKind::kRuntimeError)})
                  .ok());
  auto stats = db_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->schema_version, kSchemaVersion);
  EXPECT_EQ(stats->workloads, 2);
  EXPECT_EQ(stats->targets, 2);
  EXPECT_EQ(stats->records, 3);
  EXPECT_EQ(stats->failed_records, 1);
  EXPECT_GT(stats->file_bytes, 0);
  EXPECT_EQ(db_->ListTargets()->size(), 2u);
}

TEST(ErrorKindTest, NamesRoundTrip) {
  for (int i = 0; i <= 6; ++i) {
    auto kind = static_cast<ErrorKind>(i);
    EXPECT_EQ(*ParseErrorKind(ErrorKindName(kind)), kind);
  }
  EXPECT_FALSE(ParseErrorKind("segfault").ok());
}

}  // namespace
}  // namespace tunefarm::database
