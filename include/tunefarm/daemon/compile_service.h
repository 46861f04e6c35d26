// The Compile gRPC service (proto/tunefarm/v1/compile.proto): build-time
// reuse over the wire, with the policy of `tunefarm compile` (kernel_build.h):
// the tuning log's best record for the workload and target (same device, then
// same architecture), else the default schedule marked
// SOURCE_DEFAULT_SCHEDULE, or NOT_FOUND when require_tuned is set. With
// tune_on_miss, a miss also starts a tuning job through the daemon's
// callback and the answer carries its id. A cuda target ("cuda
// -arch=sm_90") is answered as `tunefarm compile` writes it: the cubin as
// the binary, the header with its host launcher <name>_launch as the symbol
// (kernel_header.h); NVRTC must be on the daemon's machine.
//
// Every handler first calls rpc::Authorize with Role::kClient: a caller
// without credentials gets UNAUTHENTICATED and nothing else happens. Every
// field is validated (INVALID_ARGUMENT naming it; workload text errors carry
// the parser's "workload_text:line:col: ..." message).
//
// Compile cache: keyed by (canonical workload text and hash, target, output
// kind, fingerprint, best record's layer/id/uid). Finding the best record is
// a cheap indexed query done on every request, so a newer, faster record
// changes the key and is picked up at once; compiling is the expensive part
// and is what the cache saves. Bounded by entries, least recently used out
// first. Single-flight: concurrent requests for one key compile it once and
// all wait for that result; every answer not compiled for this very request
// has `cached` set. Failed builds are not cached.
//
// Ownership: the log is borrowed (the daemon owns it) and must outlive
// the service. Thread safety: handlers run concurrently on gRPC's threads;
// the cache is guarded by one mutex, never held while compiling.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/tuner/kernel_build.h"
#include "tunefarm/daemon/log_service.h"
#include "tunefarm/v1/compile.grpc.pb.h"

namespace tunefarm::daemon {

// Limits of a CompileRequest.
inline constexpr size_t kMaxWorkloadTextBytes = 64 * 1024;
inline constexpr int kMaxTuneTrials = 100000;
inline constexpr int kDefaultTuneTrials = 200;  // tune_trials == 0
inline constexpr size_t kMaxDeviceKeyBytes = 256;

// Starts a tuning job for the workloads (canonical workload-language texts)
// on `target` (canonical target string) with workers advertising
// `device_key`, `trials` trials in all; returns the job id. It is called once
// per request that misses with tune_on_miss, from a gRPC thread, possibly
// concurrently: a daemon that wants one job per workload should return the
// id of a job already tuning it. Its error status is the request's answer.
using StartTuningFn = std::function<Result<std::string>(const std::vector<std::string>& workload_texts,
                                                        const std::string& target, const std::string& device_key,
                                                        int trials)>;

class CompileServiceImpl final : public v1::Compile::Service {
 public:
  // `log` is borrowed: the daemon's LayeredDatabase, or a plain Database. `cache_entries`: compiled kernels kept (0: none kept;
  // single-flight still applies). `start_tuning` may be null: tune_on_miss is
  // then FAILED_PRECONDITION. `runtime_dir` holds libtunefarm_runtime.so for
  // OUTPUT_SHARED_LIBRARY ("": next to the executable).
  CompileServiceImpl(database::TuningLog* log, rpc::ServerSecurity security, size_t cache_entries,
                     StartTuningFn start_tuning, std::string runtime_dir = "");

  grpc::Status Compile(grpc::ServerContext* context, const v1::CompileRequest* request,
                       v1::CompileResponse* response) override;

  // Kernels actually compiled (cache misses that built), for tests and stats.
  int64_t compilations() const { return compilations_.load(); }
  // Finished kernels held by the cache now.
  size_t cached_entries() const;

 private:
  struct Entry {
    bool done = false;                          // GUARDED_BY(mu_)
    Status status;                              // GUARDED_BY(mu_); the build's error when done
    std::shared_ptr<const tuner::BuiltKernel> kernel;  // GUARDED_BY(mu_); set when done and OK
    std::list<std::string>::iterator lru;       // GUARDED_BY(mu_); valid when done and cached
  };
  struct Answer {
    std::shared_ptr<const tuner::BuiltKernel> kernel;
    bool cached = false;
  };

  // The kernel for `key`, built by `build` unless cached or in flight.
  // Waiting for another request's build ends early if `context` is cancelled.
  Result<Answer> GetOrBuild(const std::string& key, grpc::ServerContext* context,
                            const std::function<Result<tuner::BuiltKernel>()>& build);
  void EvictLocked();  // requires mu_

  database::TuningLog* const log_;
  const rpc::ServerSecurity security_;
  const size_t cache_entries_;
  const StartTuningFn start_tuning_;
  const std::string runtime_dir_;
  std::atomic<int64_t> compilations_{0};

  mutable std::mutex mu_;
  std::condition_variable done_cv_;  // signalled when an entry becomes done
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries_;  // GUARDED_BY(mu_); done or in flight
  std::list<std::string> lru_;  // GUARDED_BY(mu_); keys of done entries, most recent first
};

}  // namespace tunefarm::daemon
