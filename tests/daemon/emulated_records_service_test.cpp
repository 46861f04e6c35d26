// Records measured under emulation (an arm64 board worker under qemu): the
// Compile service builds a board's kernel from one when it is the only
// record for the workload and target, and says so in the response (emulated,
// warning naming workload, target, record uid and device) and in the header;
// the TuningLog service's GetBest marks such an answer. A real board's
// record, however slow, replaces it everywhere.
#include "service_test_util.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"

namespace tunefarm::daemon::testing {
namespace {

constexpr char kBoardTarget[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon";

// Commits `w` and a record of `trace` on the board's target string, with the
// fingerprint of the board (`emulated`: as a worker under qemu reports it,
// arch "cortex-a72-emulated"; the record marked as the tuner marks it).
database::TuningRecord CommitBoardRecord(ServiceHarness& h, const Workload& w, const std::string& trace,
                                         double secs, bool emulated) {
  database::Workload stored{StructuralHashHex(w), w.name, PrintWorkload(w)};
  EXPECT_TRUE(h.db().user().CommitWorkload(stored).ok());
  auto target = Target::Parse(kBoardTarget);
  EXPECT_TRUE(target.ok()) << target.status().ToString();
  database::TuningRecord record;
  record.uid = database::NewRecordUid();  // the caller checks messages for it
  record.workload_hash = stored.hash;
  record.target.target = target->ToString();
  record.target.fingerprint = {"aarch64", {"+neon"}, emulated ? "cortex-a72-emulated" : "cortex-a72",
                               emulated ? 2 : 4, "tuner-built lowering-r" + std::to_string(kLoweringRevision)};
  record.trace = trace;
  record.run_secs = {secs};
  record.worker = emulated ? "ci:cpu#7" : "pi:cpu#1";
  record.device = emulated ? "cpu-cortex-a72-emulated" : "cpu-cortex-a72";
  record.emulated = emulated;
  auto id = h.db().user().CommitRecord(record);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  record.id = id.ok() ? *id : 0;
  return record;
}

v1::BestRecordResponse GetBest(ServiceHarness& h, const Workload& w) {
  grpc::ClientContext context;
  rpc::PrepareCall(&context, h.client(), kDeadlineS);
  v1::BestRecordRequest request;
  request.set_workload_hash(StructuralHashHex(w));
  request.set_target(kBoardTarget);
  v1::BestRecordResponse best;
  grpc::Status s = h.log_stub().GetBest(&context, request, &best);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return best;
}

TEST(EmulatedRecordsServiceTest, CompileSaysWhenTheOnlyRecordWasMeasuredUnderEmulation) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  auto trace = ParallelMatmulTrace(mm);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  database::TuningRecord emulated = CommitBoardRecord(*h, mm, *trace, 2e-3, /*emulated=*/true);

  // The daemon's host is not the board: the board's arch finds its emulated twin.
  v1::CompileRequest request = TextRequest(kMatmulText);
  request.set_target(kBoardTarget);
  request.set_require_tuned(true);
  v1::CompileResponse r;
  grpc::Status s = h->Compile(request, &r);
  ASSERT_TRUE(s.ok()) << "the emulated record is the only one and must be used: " << s.error_message();
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_TUNED_SAME_ARCH);
  EXPECT_EQ(r.record_id(), emulated.id);
  EXPECT_EQ(r.trace(), *trace);
  EXPECT_TRUE(r.emulated());
  for (const std::string& part : {std::string("measured under emulation"), std::string("mm"),
                                  std::string("cortex-a72"), emulated.uid, emulated.device,
                                  std::string("says nothing about a real board")}) {
    EXPECT_NE(r.warning().find(part), std::string::npos) << "'" << part << "' missing in: " << r.warning();
  }
  EXPECT_NE(r.header().find("UNDER EMULATION"), std::string::npos) << r.header();
  EXPECT_NE(r.header().find(emulated.uid), std::string::npos) << r.header();

  v1::BestRecordResponse best = GetBest(*h, mm);
  EXPECT_EQ(best.level(), "same_arch");
  ASSERT_TRUE(best.has_record());
  EXPECT_EQ(best.record().uid(), emulated.uid);
  EXPECT_TRUE(best.record().emulated());

  // A real board's record, slower, replaces it: no warning, not emulated.
  database::TuningRecord real = CommitBoardRecord(*h, mm, *trace, 9e-3, /*emulated=*/false);
  s = h->Compile(request, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.record_id(), real.id);
  EXPECT_FALSE(r.emulated());
  EXPECT_TRUE(r.warning().empty()) << r.warning();
  EXPECT_EQ(r.header().find("EMULATION"), std::string::npos) << r.header();
  EXPECT_NEAR(r.latency_seconds(), 9e-3, 1e-12) << "an emulated time shares the real trace's mean";
  best = GetBest(*h, mm);
  ASSERT_TRUE(best.has_record());
  EXPECT_EQ(best.record().uid(), real.uid);
  EXPECT_FALSE(best.record().emulated());
}

}  // namespace
}  // namespace tunefarm::daemon::testing
