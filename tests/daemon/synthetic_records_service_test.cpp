// A test device's records (synthetic, invented times) are never served: the
// Compile service answers with the default schedule, or NOT_FOUND with
// require_tuned, and the TuningLog service's GetBest and GetTopK find
// nothing, however fast the invented times; a measured record is served as
// soon as there is one. A tuning run on a test device resumes from its own
// synthetic records, a measuring run on the same key never does.
#include <atomic>

#include "service_test_util.h"
#include "tunefarm/tuner/sketch.h"
#include "tunefarm/tuner/warm_start.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::daemon::testing {

// The search this file drives (tuner/).
using tuner::CollectTransferRecords;
using tuner::MakeSketchPolicy;
using tuner::MakeTuneTask;
using tuner::RecordTarget;
using tuner::TaskStatus;
using tuner::TransferOptions;
using tuner::TuneOptions;
using tuner::TuningLoop;
namespace {

// Commits `w` and a record of `trace` as a test device records it: the host's
// target string, ISA and CPU, the test device's toolchain, marked synthetic.
int64_t CommitSynthetic(ServiceHarness& h, const Workload& w, const std::string& trace, double secs,
                        bool same_fingerprint = false) {
  database::Workload stored{StructuralHashHex(w), w.name, PrintWorkload(w)};
  EXPECT_TRUE(h.db().user().CommitWorkload(stored).ok());
  database::TuningRecord record;
  record.workload_hash = stored.hash;
  record.target = RecordTarget(Target::Host());
  // A synthetic record on the very fingerprint a request matches at
  // same_device, or on the test device's own (same ISA and CPU: same_arch).
  if (!same_fingerprint) record.target.fingerprint.toolchain = std::string(database::kTestDeviceToolchain);
  record.trace = trace;
  record.run_secs = {secs};
  record.worker = "h/test#1";
  record.device = "test";
  record.synthetic = true;
  auto id = h.db().user().CommitRecord(record);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : 0;
}

TEST(SyntheticRecordsServiceTest, CompileAndGetBestNeverServeATestDevicesRecord) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  auto trace = ParallelMatmulTrace(mm);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  CommitSynthetic(*h, mm, *trace, 1e-9);
  CommitSynthetic(*h, mm, *trace, 1e-9, /*same_fingerprint=*/true);

  v1::CompileRequest required = TextRequest(kMatmulText);
  required.set_require_tuned(true);
  v1::CompileResponse r;
  grpc::Status s = h->Compile(required, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << "served source " << r.source() << ": " << r.header();
  s = h->Compile(TextRequest(kMatmulText), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  EXPECT_EQ(r.record_id(), 0);
  EXPECT_TRUE(r.trace().empty());

  grpc::ClientContext best_context;
  rpc::PrepareCall(&best_context, h->client(), kDeadlineS);
  v1::BestRecordRequest best_request;
  best_request.set_workload_hash(StructuralHashHex(mm));
  v1::BestRecordResponse best;
  ASSERT_TRUE(h->log_stub().GetBest(&best_context, best_request, &best).ok());
  EXPECT_EQ(best.level(), "none");
  EXPECT_FALSE(best.has_record());
  grpc::ClientContext top_context;
  rpc::PrepareCall(&top_context, h->client(), kDeadlineS);
  v1::TopKRequest top_request;
  top_request.set_workload_hash(StructuralHashHex(mm));
  top_request.set_k(10);
  v1::TopKResponse top;
  ASSERT_TRUE(h->log_stub().GetTopK(&top_context, top_request, &top).ok());
  EXPECT_EQ(top.records_size(), 0);

  // A measured record, a million times slower than the invented ones, is the answer.
  int64_t measured = h->CommitRecord(mm, *trace, {1e-3});
  s = h->Compile(required, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE);
  EXPECT_EQ(r.record_id(), measured);
  EXPECT_NEAR(r.latency_seconds(), 1e-3, 1e-12) << "an invented time shares the trace's mean";
}

// The tuning loop with the test device as its measurer: a run that says it
// is synthetic writes synthetic records and resumes from them; a measuring
// run on the same log and device key neither counts nor ranks them.
TEST(SyntheticRecordsServiceTest, OnlyASyntheticRunResumesFromSyntheticRecords) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  auto task = MakeTuneTask(mm);
  ASSERT_TRUE(task.ok());
  TestDeviceMeasurer device;
  auto run = [&](bool synthetic, int trials) {
    TuneOptions o;
    o.target = Target::Host();
    o.trials = trials;
    o.batch_size = 4;
    o.device = "test";
    o.synthetic = synthetic;
    o.warm_start_records = 0;
    o.search.population = 16;
    TuningLoop loop(o, &h->db().user(), &device, nullptr);
    std::atomic<bool> stop{false};
    EXPECT_TRUE(loop.Run({*task}, stop, nullptr).ok());
    return loop.status().at(0);
  };
  TaskStatus first = run(/*synthetic=*/true, 8);
  EXPECT_EQ(first.trials, 8);
  int synthetic_records = 0;
  ASSERT_TRUE(h->db().user().ForEachRecord({}, [&](const database::TuningRecord& r) {
    synthetic_records += r.synthetic;
    return Status::OK();
  }).ok());
  EXPECT_EQ(synthetic_records, 8);
  // Warm-starting a model: invented times teach only another synthetic run.
  auto policy = MakeSketchPolicy(Target::Host(), "");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  TransferOptions transfer;
  transfer.target = RecordTarget(Target::Host()).target;
  transfer.device = "test";
  auto for_measuring = CollectTransferRecords(&h->db().user(), policy->get(), transfer);
  ASSERT_TRUE(for_measuring.ok()) << for_measuring.status().ToString();
  EXPECT_TRUE(for_measuring->records.empty());
  transfer.synthetic = true;
  auto for_synthetic = CollectTransferRecords(&h->db().user(), policy->get(), transfer);
  ASSERT_TRUE(for_synthetic.ok());
  EXPECT_EQ(for_synthetic->records.size(), 8u);
  // Resumed on the test device: its 8 records are its trials, so 4 more.
  TaskStatus resumed = run(/*synthetic=*/true, 12);
  EXPECT_EQ(resumed.trials, 12);
  EXPECT_GT(resumed.best_seconds, 0);
  // A measuring run on the same key: none of them count, nothing is its best yet.
  TaskStatus measuring = run(/*synthetic=*/false, 4);
  EXPECT_EQ(measuring.trials, 4);
  v1::CompileRequest required = TextRequest(kMatmulText);
  required.set_require_tuned(true);
  v1::CompileResponse r;
  grpc::Status s = h->Compile(required, &r);
  // The measuring run's records are the only ones served (the measurer here
  // is the test device standing in for a real one).
  ASSERT_TRUE(s.ok()) << s.error_message();
  int64_t served = r.record_id();
  bool served_measured = false;
  ASSERT_TRUE(h->db().user().ForEachRecord({}, [&](const database::TuningRecord& rec) {
    if (rec.id == served) served_measured = !rec.synthetic;
    return Status::OK();
  }).ok());
  EXPECT_TRUE(served_measured);
}

}  // namespace
}  // namespace tunefarm::daemon::testing
