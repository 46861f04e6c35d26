// Helpers for the Compile and TuningLog service tests: a real gRPC server on
// 127.0.0.1:0 over a temporary tuning log, a client channel with the token,
// and tuning records whose traces really replay.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/compile_service.h"
#include "tunefarm/daemon/log_service.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace tunefarm::daemon::testing {

// The search this file drives (tuner/).
using tuner::RecordTarget;

inline constexpr char kToken[] = "a-token-of-16-chars-or-more";
inline constexpr double kDeadlineS = 120;  // compiles on a loaded 2-core machine

inline constexpr char kMatmulText[] =
    "workload mm(M = 64, N = 48, K = 32) {\n"
    "  A = input f32[M, K]\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
inline constexpr char kScaleText[] =
    "workload scale(N = 256) {\n  X = input f32[N]\n  Y[i] = X[i] * 2.0\n  output Y\n}\n";

// A schedule of mm that parallelizes the outer tile of i: its object calls
// tunefarm_parallel_for, the default schedule's does not.
inline Result<std::string> ParallelMatmulTrace(const Workload& w, int64_t outer = 8) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  Schedule sch(f);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<ValueRV> tiles,
                      sch.SamplePerfectTile(loops[0], 2, 64, std::vector<int64_t>{outer, 64 / outer}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> i, sch.Split(loops[0], {tiles[0], tiles[1]}));
  TF_RETURN_IF_ERROR(sch.Parallel(i[0]));
  return sch.trace().ToText();
}

// One server with both services over a fresh tuning log in a temporary
// directory; everything is torn down on destruction.
class ServiceHarness {
 public:
  static std::unique_ptr<ServiceHarness> Start(size_t cache_entries, StartTuningFn start_tuning) {
    auto h = std::unique_ptr<ServiceHarness>(new ServiceHarness());
    std::string pattern = (std::filesystem::temp_directory_path() / "tunefarm_service_test_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      return nullptr;
    }
    h->dir_ = pattern;
    auto db = database::LayeredDatabase::Open(h->dir_ + "/log.db", "");
    if (!db.ok()) {
      ADD_FAILURE() << db.status().ToString();
      return nullptr;
    }
    h->db_ = std::move(db).value();
    h->security_.insecure = true;
    h->security_.client_tokens = {kToken};
    h->compile_ = std::make_unique<CompileServiceImpl>(h->db_.get(), h->security_, cache_entries,
                                                       std::move(start_tuning), std::string(TUNEFARM_BINARY_DIR) + "/runtime");
    h->log_ = std::make_unique<TuningLogServiceImpl>(h->db_.get(), h->security_);
    auto server = rpc::StartServer("127.0.0.1:0", h->security_, 64 << 20, {h->compile_.get(), h->log_.get()});
    if (!server.ok()) {
      ADD_FAILURE() << server.status().ToString();
      return nullptr;
    }
    h->server_ = std::move(server).value();
    h->client_.insecure = true;
    h->client_.token = kToken;
    auto channel = rpc::MakeChannel("127.0.0.1:" + std::to_string(h->server_.port), h->client_);
    if (!channel.ok()) {
      ADD_FAILURE() << channel.status().ToString();
      return nullptr;
    }
    h->channel_ = std::move(channel).value();
    h->compile_stub_ = v1::Compile::NewStub(h->channel_);
    h->log_stub_ = v1::TuningLog::NewStub(h->channel_);
    return h;
  }

  ~ServiceHarness() {
    if (server_.server) server_.server->Shutdown(rpc::DeadlineIn(5));
    server_.server.reset();
    compile_stub_.reset();
    log_stub_.reset();
    compile_.reset();
    log_.reset();
    db_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // A Compile call with `token` ("" sends no credentials).
  grpc::Status Compile(const v1::CompileRequest& request, v1::CompileResponse* response,
                       const std::string& token = kToken) {
    grpc::ClientContext context;
    rpc::ClientSecurity security = client_;
    security.token = token;
    rpc::PrepareCall(&context, security, kDeadlineS);
    return compile_stub_->Compile(&context, request, response);
  }

  // Commits `w` and a successful record of `trace` on this host's record
  // target (what a request without a fingerprint matches); returns its id.
  int64_t CommitRecord(const Workload& w, const std::string& trace, std::vector<double> run_secs) {
    database::Workload stored{StructuralHashHex(w), w.name, PrintWorkload(w)};
    EXPECT_TRUE(db_->user().CommitWorkload(stored).ok());
    database::TuningRecord record;
    record.workload_hash = stored.hash;
    record.target = RecordTarget(Target::Host());
    record.trace = trace;
    record.run_secs = std::move(run_secs);
    record.worker = "test:worker-0";
    record.device = "cpu";
    auto id = db_->user().CommitRecord(record);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }

  CompileServiceImpl& compile_service() { return *compile_; }
  v1::TuningLog::Stub& log_stub() { return *log_stub_; }
  database::LayeredDatabase& db() { return *db_; }
  const rpc::ClientSecurity& client() const { return client_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  grpc::Server* server() const { return server_.server.get(); }
  std::string File(const std::string& name) const { return dir_ + "/" + name; }

 private:
  ServiceHarness() = default;

  std::string dir_;
  std::unique_ptr<database::LayeredDatabase> db_;
  rpc::ServerSecurity security_;
  std::unique_ptr<CompileServiceImpl> compile_;
  std::unique_ptr<TuningLogServiceImpl> log_;
  rpc::RunningServer server_;
  rpc::ClientSecurity client_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Compile::Stub> compile_stub_;
  std::unique_ptr<v1::TuningLog::Stub> log_stub_;
};

inline v1::CompileRequest TextRequest(const std::string& text) {
  v1::CompileRequest request;
  request.set_workload_text(text);
  return request;
}

inline Workload ParseOrDie(const std::string& text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? *w : Workload{};
}

}  // namespace tunefarm::daemon::testing
