// The TuningLog service (log_service.h) and the request checks it shares
// with the Compile service.
#include "tunefarm/daemon/log_service.h"

#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <utility>

#include "tunefarm/common/quote.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::daemon {

// The search this file drives (tuner/).
using tuner::KernelRecordTarget;

namespace {

grpc::Status Invalid(const std::string& message) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message); }

// A file in the temporary directory, removed on destruction. Export writes
// the whole log here first: Database::ExportJsonl holds the database's lock
// while it runs, and a client reading slowly over the network must not stall
// the tuner's commits for that long.
class TempFile {
 public:
  TempFile() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tunefarm_export_XXXXXX").string();
    int fd = ::mkstemp(pattern.data());
    if (fd >= 0) {
      ::close(fd);
      path_ = pattern;
    }
  }
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

// ---------------------------------------------------------------- conversions and checks

v1::Record RecordToProto(const database::TuningRecord& record) {
  v1::Record out;
  out.set_record_id(record.id);
  out.set_uid(record.uid);
  out.set_workload_hash(record.workload_hash);
  out.set_target(record.target.target);
  out.set_trace(record.trace);
  for (double s : record.run_secs) out.add_run_seconds(s);
  out.set_error_kind(std::string(database::ErrorKindName(record.error_kind)));
  out.set_error_message(record.error_msg);
  out.set_worker(record.worker);
  out.set_device(record.device);
  out.set_created_at_us(record.created_at_us);
  out.set_trace_mean_seconds(record.trace_mean_sec);
  out.set_trace_records(record.trace_records);
  out.set_emulated(record.emulated);
  return out;
}

database::HardwareFingerprint FingerprintFromProto(const v1::HardwareFingerprint& fingerprint) {
  database::HardwareFingerprint out;
  out.isa = fingerprint.isa();
  out.features.assign(fingerprint.features().begin(), fingerprint.features().end());
  out.arch = fingerprint.arch();
  out.cores = fingerprint.cores();
  out.toolchain = fingerprint.toolchain();
  database::CanonicalizeFingerprint(&out);
  return out;
}

Status CheckWorkloadHash(const std::string& hash, const char* field) {
  if (hash.empty()) return Status::InvalidArgument(std::string(field) + " is empty");
  if (hash.size() > kMaxHashBytes) {
    return Status::InvalidArgument(std::string(field) + " is " + std::to_string(hash.size()) +
                                   " bytes long; structural hashes are at most " + std::to_string(kMaxHashBytes));
  }
  for (char c : hash) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
    if (!ok) return Status::InvalidArgument(std::string(field) + " " + QuoteInput(hash) + " is not a structural hash");
  }
  return Status::OK();
}

Result<Target> ParseRequestTarget(const std::string& text, const char* field) {
  return ParseTargetField(field, text.empty() ? "llvm" : text);
}

namespace {

// Names as LLVM and the fingerprint write them: "x86_64", "znver4", "+avx512f".
bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
}

Status CheckName(const std::string& value, const std::string& field, size_t max_chars, bool required) {
  if (required && value.empty()) return Status::InvalidArgument(field + ": is empty");
  if (value.size() > max_chars) {
    return Status::InvalidArgument(field + ": " + QuoteInput(value) + " is longer than " + std::to_string(max_chars) +
                                   " characters");
  }
  for (char c : value) {
    if (!IsNameChar(c)) {
      return Status::InvalidArgument(field + ": " + QuoteInput(value) + " may hold only letters, digits and _ . + -");
    }
  }
  return Status::OK();
}

}  // namespace

Status CheckFingerprint(const v1::HardwareFingerprint& fingerprint, const std::string& field) {
  TF_RETURN_IF_ERROR(CheckName(fingerprint.isa(), field + ".isa", 32, false));
  TF_RETURN_IF_ERROR(CheckName(fingerprint.arch(), field + ".arch", 64, false));
  if (fingerprint.features_size() > kMaxFingerprintFeatures) {
    return Status::InvalidArgument(field + ".features: at most " + std::to_string(kMaxFingerprintFeatures) +
                                   ", got " + std::to_string(fingerprint.features_size()));
  }
  for (int i = 0; i < fingerprint.features_size(); ++i) {
    TF_RETURN_IF_ERROR(
        CheckName(fingerprint.features(i), field + ".features[" + std::to_string(i) + "]", 64, true));
  }
  if (fingerprint.cores() < 0 || fingerprint.cores() > kMaxFingerprintCores) {
    return Status::InvalidArgument(field + ".cores: must be in 0.." + std::to_string(kMaxFingerprintCores) +
                                   ", got " + std::to_string(fingerprint.cores()));
  }
  const std::string& toolchain = fingerprint.toolchain();
  if (toolchain.size() > 128) {
    return Status::InvalidArgument(field + ".toolchain: " + QuoteInput(toolchain) + " is longer than 128 characters");
  }
  for (char c : toolchain) {
    if (c < 0x20 || c > 0x7e) {
      return Status::InvalidArgument(field + ".toolchain: " + QuoteInput(toolchain) +
                                     " may hold only printable ASCII characters");
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------- TuningLogServiceImpl

TuningLogServiceImpl::TuningLogServiceImpl(database::TuningLog* log, rpc::ServerSecurity security)
    : log_(log), security_(std::move(security)) {}

grpc::Status TuningLogServiceImpl::GetBest(grpc::ServerContext* context, const v1::BestRecordRequest* request,
                                           v1::BestRecordResponse* response) {
  grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kClient);
  if (!auth.ok()) return auth;
  Status hash_ok = CheckWorkloadHash(request->workload_hash(), "workload_hash");
  if (!hash_ok.ok()) return rpc::ToGrpc(hash_ok);
  auto target = ParseRequestTarget(request->target(), "target");
  if (!target.ok()) return rpc::ToGrpc(target.status());
  std::optional<database::HardwareFingerprint> fingerprint;
  if (request->has_fingerprint()) {
    if (Status fp_ok = CheckFingerprint(request->fingerprint(), "fingerprint"); !fp_ok.ok()) return rpc::ToGrpc(fp_ok);
    fingerprint = FingerprintFromProto(request->fingerprint());
  }
  auto best = log_->GetBest(request->workload_hash(), KernelRecordTarget(*target, fingerprint));
  if (!best.ok()) return rpc::ToGrpc(best.status());
  response->set_level(std::string(database::FallbackLevelName(best->level)));
  if (best->record) *response->mutable_record() = RecordToProto(*best->record);
  return grpc::Status::OK;
}

grpc::Status TuningLogServiceImpl::GetTopK(grpc::ServerContext* context, const v1::TopKRequest* request,
                                           v1::TopKResponse* response) {
  grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kClient);
  if (!auth.ok()) return auth;
  Status hash_ok = CheckWorkloadHash(request->workload_hash(), "workload_hash");
  if (!hash_ok.ok()) return rpc::ToGrpc(hash_ok);
  if (request->k() < 1 || request->k() > kMaxTopK) {
    return Invalid("k must be in 1.." + std::to_string(kMaxTopK) + ", got " + std::to_string(request->k()));
  }
  auto target = ParseRequestTarget(request->target(), "target");
  if (!target.ok()) return rpc::ToGrpc(target.status());
  auto top = log_->GetTopKByTargetString(request->workload_hash(), target->ToString(), request->k());
  if (!top.ok()) return rpc::ToGrpc(top.status());
  for (const database::TuningRecord& record : *top) *response->add_records() = RecordToProto(record);
  return grpc::Status::OK;
}

grpc::Status TuningLogServiceImpl::Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                                          grpc::ServerWriter<v1::ExportChunk>* writer) {
  grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kClient);
  if (!auth.ok()) return auth;
  database::RecordFilter filter;
  if (!request->workload_hash().empty()) {
    Status hash_ok = CheckWorkloadHash(request->workload_hash(), "workload_hash");
    if (!hash_ok.ok()) return rpc::ToGrpc(hash_ok);
    filter.workload_hash = request->workload_hash();
  }
  if (!request->target().empty()) {
    // Records store canonical target strings: "llvm" must find this host's.
    auto target = ParseRequestTarget(request->target(), "target");
    if (!target.ok()) return rpc::ToGrpc(target.status());
    filter.target = target->ToString();
  }
  TempFile file;
  if (file.path().empty()) return rpc::ToGrpc(Status::IOError("cannot create a temporary file for the export"));
  {
    std::ofstream out(file.path(), std::ios::binary | std::ios::trunc);
    Status exported = log_->ExportJsonl(out, filter);
    if (!exported.ok()) return rpc::ToGrpc(exported);
  }
  std::ifstream in(file.path(), std::ios::binary);
  if (!in) return rpc::ToGrpc(Status::IOError("cannot read back the export in " + file.path()));
  std::string buffer(kExportChunkBytes, '\0');
  v1::ExportChunk chunk;
  while (in) {
    in.read(buffer.data(), std::streamsize(buffer.size()));
    std::streamsize n = in.gcount();
    if (n <= 0) break;
    if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "the client cancelled the export");
    chunk.set_jsonl(buffer.data(), size_t(n));
    if (!writer->Write(chunk)) return grpc::Status(grpc::StatusCode::CANCELLED, "the client went away during the export");
  }
  if (in.bad()) return rpc::ToGrpc(Status::IOError("reading back the export in " + file.path() + " failed"));
  return grpc::Status::OK;
}

}  // namespace tunefarm::daemon
