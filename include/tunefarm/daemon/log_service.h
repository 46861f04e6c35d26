// The TuningLog gRPC service (proto/tunefarm/v1/log.proto): read access to
// the daemon's tuning log -- the best record through the fallback chain, the
// top k of a workload on a target string, and a JSON Lines export.
//
// Every handler first calls rpc::Authorize with Role::kClient: a caller
// without credentials gets UNAUTHENTICATED and nothing else happens. Bad
// requests get INVALID_ARGUMENT naming the field.
//
// Ownership: the log is borrowed (the daemon owns it) and must outlive
// the service. Thread safety: handlers run concurrently on gRPC's threads;
// they share nothing but the log, which is thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/database/tuning_log.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/v1/log.grpc.pb.h"

namespace tunefarm::daemon {

// Wire forms of the database's values.
v1::Record RecordToProto(const database::TuningRecord& record);
database::HardwareFingerprint FingerprintFromProto(const v1::HardwareFingerprint& fingerprint);

// Limits of the TuningLog requests.
inline constexpr int kMaxTopK = 1000;
inline constexpr size_t kExportChunkBytes = 1 << 20;  // ExportChunk.jsonl is at most this
inline constexpr size_t kMaxHashBytes = 128;           // workload_hash (16 hex digits in practice)
inline constexpr size_t kMaxTargetBytes = kMaxTargetTextBytes;  // target strings

class TuningLogServiceImpl final : public v1::TuningLog::Service {
 public:
  // `log` is borrowed and must outlive the service: the daemon's
  // LayeredDatabase (user over system), or a plain Database.
  TuningLogServiceImpl(database::TuningLog* log, rpc::ServerSecurity security);

  // level "same_device" / "same_arch" / "none"; an empty target means "llvm"
  // (this host) and an unset fingerprint this host's.
  grpc::Status GetBest(grpc::ServerContext* context, const v1::BestRecordRequest* request,
                       v1::BestRecordResponse* response) override;
  // k in 1..kMaxTopK; records of the target string on every device (both
  // layers of a LayeredDatabase, one entry per trace).
  grpc::Status GetTopK(grpc::ServerContext* context, const v1::TopKRequest* request,
                       v1::TopKResponse* response) override;
  // The log's JSON Lines export (TuningLog::ExportJsonl: a LayeredDatabase
  // exports its user layer) in chunks of at
  // most kExportChunkBytes. The export is taken into a temporary file first
  // so that a slow reader never holds the database's lock.
  grpc::Status Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                      grpc::ServerWriter<v1::ExportChunk>* writer) override;

 private:
  database::TuningLog* const log_;
  const rpc::ServerSecurity security_;
};

// Shared request checks (also used by the Compile service). Each returns
// INVALID_ARGUMENT naming `field` on failure.
Status CheckWorkloadHash(const std::string& hash, const char* field);
// Parses a target string (ParseTargetField); empty means "llvm" (this host).
Result<Target> ParseRequestTarget(const std::string& text, const char* field);
// A caller's hardware fingerprint (`field` is e.g. "fingerprint" or
// "register.fingerprint"): isa at most 32 and arch at most 64 characters of
// letters, digits and _ . + -; at most kMaxFingerprintFeatures features of 1
// to 64 such characters; cores in 0..kMaxFingerprintCores (0: unknown);
// toolchain at most 128 printable ASCII characters. Errors name the field
// ("fingerprint.cores: must be in 0..1048576, got -4").
Status CheckFingerprint(const v1::HardwareFingerprint& fingerprint, const std::string& field);
inline constexpr int kMaxFingerprintFeatures = 1024;
inline constexpr int64_t kMaxFingerprintCores = 1 << 20;

}  // namespace tunefarm::daemon
