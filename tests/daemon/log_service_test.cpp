// The TuningLog service over a real gRPC server: GetBest through the
// fallback chain, GetTopK and its bounds, and an Export that streams in
// chunks of at most 1 MiB and imports back into an empty log.
#include <algorithm>
#include <sstream>

#include "service_test_util.h"

namespace tunefarm::daemon::testing {

// The search this file drives (tuner/).
using tuner::RecordTarget;
namespace {

class LogServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = ServiceHarness::Start(4, nullptr);
    ASSERT_NE(h_, nullptr);
    mm_ = ParseOrDie(kMatmulText);
    hash_ = StructuralHashHex(mm_);
  }
  grpc::Status Call(const v1::BestRecordRequest& request, v1::BestRecordResponse* response,
                    const std::string& token = kToken) {
    grpc::ClientContext context;
    rpc::ClientSecurity security = h_->client();
    security.token = token;
    rpc::PrepareCall(&context, security, kDeadlineS);
    return h_->log_stub().GetBest(&context, request, response);
  }
  grpc::Status Call(const v1::TopKRequest& request, v1::TopKResponse* response) {
    grpc::ClientContext context;
    rpc::PrepareCall(&context, h_->client(), kDeadlineS);
    return h_->log_stub().GetTopK(&context, request, response);
  }
  // The whole export; `chunks` gets each chunk's size.
  grpc::Status Export(const v1::ExportRequest& request, std::string* jsonl, std::vector<size_t>* chunks,
                      const std::string& token = kToken) {
    grpc::ClientContext context;
    rpc::ClientSecurity security = h_->client();
    security.token = token;
    rpc::PrepareCall(&context, security, kDeadlineS);
    auto reader = h_->log_stub().Export(&context, request);
    v1::ExportChunk chunk;
    while (reader->Read(&chunk)) {
      chunks->push_back(chunk.jsonl().size());
      *jsonl += chunk.jsonl();
    }
    return reader->Finish();
  }

  std::unique_ptr<ServiceHarness> h_;
  Workload mm_;
  std::string hash_;
};

TEST_F(LogServiceTest, GetBestWalksTheFallbackChain) {
  v1::BestRecordRequest request;
  request.set_workload_hash(hash_);
  v1::BestRecordResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_EQ(response.level(), "none");
  EXPECT_FALSE(response.has_record());

  std::string trace = *ParallelMatmulTrace(mm_);
  h_->CommitRecord(mm_, trace, {3e-5});
  int64_t best = h_->CommitRecord(mm_, trace, {1e-5, 2e-5});
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_EQ(response.level(), "same_device");
  EXPECT_EQ(response.record().record_id(), best);
  EXPECT_EQ(response.record().trace(), trace);
  EXPECT_EQ(response.record().run_seconds_size(), 2);
  EXPECT_EQ(response.record().error_kind(), "none");
  EXPECT_EQ(response.record().target(), Target::Host().ToString());

  // Another device of the same architecture: a same-arch match.
  database::Target host = RecordTarget(Target::Host());
  v1::HardwareFingerprint* fp = request.mutable_fingerprint();
  fp->set_isa(host.fingerprint.isa);
  for (const std::string& f : host.fingerprint.features) fp->add_features(f);
  fp->set_arch(host.fingerprint.arch);
  fp->set_cores(host.fingerprint.cores + 64);
  fp->set_toolchain(host.fingerprint.toolchain);
  ASSERT_TRUE(Call(request, &response).ok());
  EXPECT_EQ(response.level(), "same_arch");
  EXPECT_EQ(response.record().record_id(), best);

  EXPECT_EQ(Call(request, &response, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  request.set_target("llvm -mcpu=notacpu");
  EXPECT_EQ(Call(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  request.set_target("");
  request.set_workload_hash("");
  EXPECT_EQ(Call(request, &response).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(LogServiceTest, GetTopKIsFastestFirstAndBounded) {
  // Three traces (the log ranks traces, not records); trailing blank lines
  // keep the schedule and change the text.
  std::string trace = *ParallelMatmulTrace(mm_);
  int64_t slow = h_->CommitRecord(mm_, trace, {3e-5});
  int64_t fast = h_->CommitRecord(mm_, trace + "\n", {1e-5});
  int64_t middle = h_->CommitRecord(mm_, trace + "\n\n", {2e-5});
  v1::TopKRequest request;
  request.set_workload_hash(hash_);
  request.set_target(Target::Host().ToString());
  request.set_k(2);
  v1::TopKResponse response;
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.records_size(), 2);
  EXPECT_EQ(response.records(0).record_id(), fast);
  EXPECT_EQ(response.records(1).record_id(), middle);
  request.set_k(1000);
  response.Clear();
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.records_size(), 3);
  EXPECT_EQ(response.records(2).record_id(), slow);
  for (int k : {0, -1, 1001}) {
    request.set_k(k);
    grpc::Status s = Call(request, &response);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << k;
    EXPECT_NE(s.error_message().find("k must be"), std::string::npos) << s.error_message();
  }
  // Measured again at 3e-5: the fast trace's mean is 2e-5, level with the
  // middle one, and the older record wins the tie. The answer says so.
  h_->CommitRecord(mm_, trace + "\n", {3e-5});
  request.set_k(1);
  response.Clear();
  ASSERT_TRUE(Call(request, &response).ok());
  ASSERT_EQ(response.records_size(), 1);
  EXPECT_EQ(response.records(0).record_id(), fast);
  EXPECT_DOUBLE_EQ(response.records(0).trace_mean_seconds(), 2e-5);
  EXPECT_EQ(response.records(0).trace_records(), 2);
}

TEST_F(LogServiceTest, ExportStreamsChunksThatImportBack) {
  // Enough records to need several 1 MiB chunks.
  std::string trace = *ParallelMatmulTrace(mm_);
  std::string padded = trace + "# " + std::string(6000, 'p') + "\n";
  database::Workload stored{hash_, mm_.name, PrintWorkload(mm_)};
  ASSERT_TRUE(h_->db().user().CommitWorkload(stored).ok());
  std::vector<database::TuningRecord> records;
  for (int i = 0; i < 400; ++i) {
    database::TuningRecord r;
    r.workload_hash = hash_;
    r.target = RecordTarget(Target::Host());
    r.trace = padded;
    r.run_secs = {1e-5 * (i + 1)};
    r.worker = "test";
    r.device = "cpu";
    records.push_back(r);
  }
  ASSERT_TRUE(h_->db().user().CommitRecords(records).ok());

  std::string jsonl;
  std::vector<size_t> chunks;
  grpc::Status s = Export(v1::ExportRequest(), &jsonl, &chunks);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_GE(chunks.size(), 3u);
  for (size_t n : chunks) EXPECT_LE(n, kExportChunkBytes);
  std::ostringstream direct;
  ASSERT_TRUE(h_->db().user().ExportJsonl(direct).ok());
  // Equal to a direct export but for the header's time stamp (not printed: megabytes).
  auto body = [](const std::string& text) { return text.substr(text.find('\n')); };
  EXPECT_TRUE(body(jsonl) == body(direct.str())) << jsonl.size() << " vs " << direct.str().size() << " bytes";

  auto copy = database::Database::Open(h_->File("copy.db"));
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  std::istringstream in(jsonl);
  auto stats = (*copy)->ImportJsonl(in, "export");
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->records_added, 400);

  // Filters: another workload's export has the header line only.
  v1::ExportRequest other;
  other.set_workload_hash("00000000deadbeef");
  jsonl.clear();
  chunks.clear();
  ASSERT_TRUE(Export(other, &jsonl, &chunks).ok());
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 1) << jsonl;
  EXPECT_EQ(Export(v1::ExportRequest(), &jsonl, &chunks, "wrong-token-of-enough-length").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace tunefarm::daemon::testing
