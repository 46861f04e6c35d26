// The Compile service (compile_service.h): request validation, the miss
// policy (default schedule, NOT_FOUND, or a tuning job), and the
// single-flight LRU cache in front of tuner::BuildKernel.
#include "tunefarm/daemon/compile_service.h"

#include <chrono>
#include <utility>

#include "tunefarm/common/quote.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::daemon {

// The search this file drives (tuner/).
using tuner::BuildKernel;
using tuner::BuiltKernel;
using tuner::ChooseSchedule;
using tuner::ChosenSchedule;
using tuner::EmulatedRecordWarning;
using tuner::KernelBuildOptions;
using tuner::KernelRecordTarget;

namespace {

// How errors name the log.
constexpr char kLogName[] = "the daemon's tuning log";

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, LimitMessage(message));
}

// A validated request.
struct CompileJob {
  Workload workload;
  std::string text;  // canonical (PrintWorkload), printed once: the cache key and a tuning job's spec
  std::string hash;
  Target target;
  bool shared = false;
  std::optional<database::HardwareFingerprint> fingerprint;
  int trials = kDefaultTuneTrials;
};

// Length-prefixed fields: no choice of field contents can make two
// different keys equal.
void AppendKeyField(std::string* key, std::string_view field) {
  *key += std::to_string(field.size());
  *key += ':';
  key->append(field);
}

// The workload is keyed by its canonical text, not only its structural hash:
// the hash ignores names, and the symbol and the header's parameter names
// come from the names. The record is keyed by layer, row id and uid (row ids
// of the two layers may coincide; the uid is unique across logs).
std::string CacheKey(const CompileJob& job, const database::Target& record_target,
                     const database::BestRecord& best) {
  std::string key;
  AppendKeyField(&key, job.hash);
  AppendKeyField(&key, job.text);
  AppendKeyField(&key, job.target.ToString());
  AppendKeyField(&key, job.shared ? "so" : "o");
  const database::HardwareFingerprint& fp = record_target.fingerprint;
  AppendKeyField(&key, fp.isa);
  for (const std::string& feature : fp.features) AppendKeyField(&key, feature);
  AppendKeyField(&key, "|");
  AppendKeyField(&key, fp.arch);
  AppendKeyField(&key, std::to_string(fp.cores));
  AppendKeyField(&key, fp.toolchain);
  if (best.record) {
    AppendKeyField(&key, database::LayerName(best.layer));
    AppendKeyField(&key, std::to_string(best.record->id));
    AppendKeyField(&key, best.record->uid);
  } else {
    AppendKeyField(&key, "default");
  }
  return key;
}

v1::CompileResponse::Source SourceOf(const BuiltKernel& kernel) {
  switch (kernel.level) {
    case database::FallbackLevel::kSameDevice: return v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE;
    case database::FallbackLevel::kSameArch: return v1::CompileResponse::SOURCE_TUNED_SAME_ARCH;
    case database::FallbackLevel::kNone: break;
  }
  return v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE;
}

}  // namespace

CompileServiceImpl::CompileServiceImpl(database::TuningLog* log, rpc::ServerSecurity security, size_t cache_entries,
                                       StartTuningFn start_tuning, std::string runtime_dir)
    : log_(log),
      security_(std::move(security)),
      cache_entries_(cache_entries),
      start_tuning_(std::move(start_tuning)),
      runtime_dir_(std::move(runtime_dir)) {}

size_t CompileServiceImpl::cached_entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

grpc::Status CompileServiceImpl::Compile(grpc::ServerContext* context, const v1::CompileRequest* request,
                                         v1::CompileResponse* response) {
  grpc::Status auth = rpc::Authorize(*context, security_, rpc::Role::kClient);
  if (!auth.ok()) return auth;

  // ---- validation: cheap checks first, the database last.
  CompileJob job;
  auto target = ParseRequestTarget(request->target(), "target");
  if (!target.ok()) return rpc::ToGrpc(target.status());
  job.target = std::move(target).value();
  // llvm and cuda: the kinds BuildKernel writes a header for. A cuda
  // target answers with the cubin and the launcher header (NVRTC on the
  // daemon's machine; without it the build is FAILED_PRECONDITION saying so).
  if (job.target.kind != "llvm" && job.target.kind != "cuda") {
    return Invalid("target: the Compile service builds llvm and cuda targets, not '" + job.target.ToString() + "'");
  }
  if (!v1::CompileRequest::Output_IsValid(request->output())) {
    return Invalid("output: unknown output kind " + std::to_string(request->output()));
  }
  job.shared = request->output() == v1::CompileRequest::OUTPUT_SHARED_LIBRARY;
  if (job.shared && job.target.kind == "cuda") {
    return Invalid("output: a cuda target is built as a cubin and a launcher header; ask for OUTPUT_OBJECT for " +
                   job.target.ToString());
  }
  if (job.shared && !job.target.is_host()) {
    return Invalid("output: a shared library is linked for this daemon's host only; ask for OUTPUT_OBJECT for " +
                   job.target.ToString());
  }
  if (request->tune_trials() < 0 || request->tune_trials() > kMaxTuneTrials) {
    return Invalid("tune_trials must be in 0.." + std::to_string(kMaxTuneTrials) + ", got " +
                   std::to_string(request->tune_trials()));
  }
  if (request->tune_trials() > 0) job.trials = request->tune_trials();
  if (request->device_key().size() > kMaxDeviceKeyBytes) {
    return Invalid("device_key is longer than " + std::to_string(kMaxDeviceKeyBytes) + " bytes");
  }
  if (request->tune_on_miss()) {
    if (!start_tuning_) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "this daemon cannot tune");
    if (request->device_key().empty()) return Invalid("device_key is required with tune_on_miss");
  }
  if (request->has_fingerprint()) {
    if (Status fp_ok = CheckFingerprint(request->fingerprint(), "fingerprint"); !fp_ok.ok()) return rpc::ToGrpc(fp_ok);
    job.fingerprint = FingerprintFromProto(request->fingerprint());
  }

  switch (request->workload_case()) {
    case v1::CompileRequest::kWorkloadText: {
      const std::string& text = request->workload_text();
      if (text.size() > kMaxWorkloadTextBytes) {
        return Invalid("workload_text is " + std::to_string(text.size()) + " bytes; at most " +
                       std::to_string(kMaxWorkloadTextBytes) + " are accepted");
      }
      ParseOptions parse;
      parse.source_name = "workload_text";
      auto parsed = ParseWorkload(text, parse);
      if (!parsed.ok()) return Invalid(parsed.status().message());
      job.workload = std::move(parsed).value();
      job.hash = StructuralHashHex(job.workload);
      break;
    }
    case v1::CompileRequest::kWorkloadHash: {
      Status hash_ok = CheckWorkloadHash(request->workload_hash(), "workload_hash");
      if (!hash_ok.ok()) return rpc::ToGrpc(hash_ok);
      auto stored = log_->GetWorkload(request->workload_hash());
      if (!stored.ok()) return rpc::ToGrpc(stored.status());
      if (!*stored) {
        return grpc::Status(grpc::StatusCode::NOT_FOUND, "the tuning log knows no workload with structural hash " +
                                                             request->workload_hash() + "; send workload_text");
      }
      ParseOptions parse;
      parse.source_name = "stored workload " + request->workload_hash();
      auto parsed = ParseWorkload((*stored)->text, parse);
      if (!parsed.ok()) return rpc::ToGrpc(Status::Corruption(parsed.status().message()));
      job.workload = std::move(parsed).value();
      job.hash = request->workload_hash();  // what its records were committed under
      break;
    }
    case v1::CompileRequest::WORKLOAD_NOT_SET:
      return Invalid("the request names no workload: set workload_text or workload_hash");
  }
  job.text = PrintWorkload(job.workload);

  // ---- the best record (cheap) decides the key; a miss may start a job.
  // The workload is lowered once; the lookup parses and replays each record's
  // trace once (records whose traces no longer replay on the workload's nest
  // are passed over) and keeps the chosen one's schedule for the build.
  database::Target record_target = KernelRecordTarget(job.target, job.fingerprint);
  auto default_func = LowerToPrimFunc(job.workload);
  if (!default_func.ok()) return rpc::ToGrpc(default_func.status());
  auto schedule = ChooseSchedule(log_, kLogName, job.hash, job.workload.name, record_target, *default_func);
  if (!schedule.ok()) return rpc::ToGrpc(schedule.status());
  if (!schedule->best.record) {
    std::string job_id;
    if (request->tune_on_miss()) {
      auto started = start_tuning_({job.text}, job.target.ToString(), request->device_key(), job.trials);
      if (!started.ok()) {
        return rpc::ToGrpc(Status(started.status().code(), "starting a tuning job for workload " + job.hash +
                                                               " failed: " + started.status().message()));
      }
      job_id = std::move(started).value();
      response->set_tuning_job_id(job_id);
    }
    if (request->require_tuned()) {
      std::string message = "no tuning record for workload " + job.workload.name + " (structural hash " + job.hash +
                            ") on target " + job.target.ToString();
      message += job_id.empty() ? "; tune it first" : "; tuning job " + job_id + " was started for it";
      return grpc::Status(grpc::StatusCode::NOT_FOUND, message);
    }
  }

  KernelBuildOptions options;
  options.shared = job.shared;
  options.runtime_dir = runtime_dir_;
  options.log_name = kLogName;
  const ChosenSchedule& chosen = *schedule;
  auto answer = GetOrBuild(CacheKey(job, record_target, chosen.best), context,
                           [&] { return BuildKernel(job.workload, job.target, chosen, options); });
  if (!answer.ok()) return rpc::ToGrpc(answer.status());

  const BuiltKernel& kernel = *answer->kernel;
  response->set_binary(kernel.binary);
  response->set_symbol(kernel.symbol);
  response->set_header(kernel.header);
  response->set_workload_hash(job.hash);
  response->set_trace(kernel.trace);
  response->set_source(SourceOf(kernel));
  response->set_record_id(kernel.record_id);
  response->set_latency_seconds(kernel.mean_seconds);
  response->set_cached(answer->cached);
  response->set_emulated(kernel.tuned() && kernel.record_emulated);
  response->set_warning(EmulatedRecordWarning(kernel));
  return grpc::Status::OK;
}

Result<CompileServiceImpl::Answer> CompileServiceImpl::GetOrBuild(const std::string& key,
                                                                  grpc::ServerContext* context,
                                                                  const std::function<Result<BuiltKernel>()>& build) {
  std::shared_ptr<Entry> entry;
  {
    std::unique_lock<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      entry = it->second;
      if (entry->done) {
        lru_.splice(lru_.begin(), lru_, entry->lru);
        return Answer{entry->kernel, true};
      }
      // Another request is compiling this key: wait for its result rather
      // than compile it again. Wake up now and then to notice a client that
      // gave up.
      while (!entry->done) {
        if (context != nullptr && context->IsCancelled()) {
          return Status::Cancelled("the client cancelled while the kernel was compiling for another request");
        }
        done_cv_.wait_for(lock, std::chrono::milliseconds(50));
      }
      if (!entry->status.ok()) return entry->status;
      return Answer{entry->kernel, true};
    }
    entry = std::make_shared<Entry>();
    entries_.emplace(key, entry);
  }

  // Compile without the lock: other keys are served meanwhile.
  compilations_.fetch_add(1);
  Result<BuiltKernel> built = build();
  Answer answer;
  Status failure;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entry->done = true;
    if (built.ok()) {
      entry->kernel = std::make_shared<const BuiltKernel>(std::move(built).value());
      lru_.push_front(key);
      entry->lru = lru_.begin();
      EvictLocked();
      answer.kernel = entry->kernel;
    } else {
      // Not cached: the next request tries again (the log may have changed).
      entry->status = failure = built.status();
      entries_.erase(key);
    }
  }
  done_cv_.notify_all();
  if (!answer.kernel) return failure;
  return answer;
}

void CompileServiceImpl::EvictLocked() {
  while (lru_.size() > cache_entries_) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
}

}  // namespace tunefarm::daemon
