#include "tunefarm/database/record.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <random>

#include <unistd.h>

namespace tunefarm::database {
namespace {

// Every stored kind, in the list's order (common/error_kinds.h).
constexpr ErrorKind kErrorKinds[] = {
#define TF_STORED_ERROR_KIND_VALUE_(Kind, name, stored) ErrorKind::k##Kind,
    TF_STORED_ERROR_KINDS(TF_STORED_ERROR_KIND_VALUE_)
#undef TF_STORED_ERROR_KIND_VALUE_
};

// Whether `kind` is one of the enum's values (a record read or built with
// another integer is not).
bool IsKnownErrorKind(ErrorKind kind) {
  switch (kind) {
#define TF_STORED_ERROR_KIND_CASE_(Kind, name, stored) case ErrorKind::k##Kind:
    TF_STORED_ERROR_KINDS(TF_STORED_ERROR_KIND_CASE_)
#undef TF_STORED_ERROR_KIND_CASE_
    return true;
  }
  return false;
}

// "none, compile_error, ... or other", for ParseErrorKind's message.
std::string ExpectedErrorKindNames() {
  std::string out;
  const size_t n = std::size(kErrorKinds);
  for (size_t i = 0; i < n; ++i) {
    out += i == 0 ? "" : (i + 1 == n ? " or " : ", ");
    out += ErrorKindName(kErrorKinds[i]);
  }
  return out;
}

}  // namespace

bool IsValidUtf8(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = static_cast<unsigned char>(text[i]);
    int extra = byte < 0x80 ? 0 : (byte >> 5) == 0x6 ? 1 : (byte >> 4) == 0xe ? 2 : (byte >> 3) == 0x1e ? 3 : -1;
    if (extra < 0 || i + extra >= text.size()) return false;
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return false;
    }
    i += extra + 1;
  }
  return true;
}

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
#define TF_STORED_ERROR_KIND_NAME_(Kind, name, stored) \
  case ErrorKind::k##Kind:                            \
    return name;
    TF_STORED_ERROR_KINDS(TF_STORED_ERROR_KIND_NAME_)
#undef TF_STORED_ERROR_KIND_NAME_
  }
  return "other";
}

Result<ErrorKind> ParseErrorKind(std::string_view name) {
  for (ErrorKind kind : kErrorKinds) {
    if (ErrorKindName(kind) == name) return kind;
  }
  return Status::InvalidArgument("unknown error kind '" + std::string(name) + "' (expected " +
                                 ExpectedErrorKindNames() + ")");
}

std::optional<double> RecordTime(const std::vector<double>& run_secs) {
  if (run_secs.empty()) return std::nullopt;
  return *std::min_element(run_secs.begin(), run_secs.end());
}

std::optional<double> TuningRecord::TimeSec() const {
  if (!ok()) return std::nullopt;
  return RecordTime(run_secs);
}

std::optional<double> TuningRecord::RankSec() const {
  if (!ok()) return std::nullopt;
  if (trace_mean_sec > 0) return trace_mean_sec;
  return TimeSec();
}

bool TuningRecord::SameContent(const TuningRecord& other) const {
  return uid == other.uid && workload_hash == other.workload_hash && target == other.target &&
         trace == other.trace && run_secs == other.run_secs && error_kind == other.error_kind &&
         error_msg == other.error_msg && worker == other.worker && device == other.device &&
         tunefarm_version == other.tunefarm_version && created_at_us == other.created_at_us &&
         synthetic == other.synthetic && emulated == other.emulated;
}

void CanonicalizeFingerprint(HardwareFingerprint* fingerprint) {
  auto& features = fingerprint->features;
  std::sort(features.begin(), features.end());
  features.erase(std::unique(features.begin(), features.end()), features.end());
}

Status ValidateRecord(const TuningRecord& record) {
  if (record.workload_hash.empty()) return Status::InvalidArgument("record has no workload hash");
  if (record.target.target.empty()) return Status::InvalidArgument("record has an empty target string");
  for (const std::string& feature : record.target.fingerprint.features) {
    if (feature.empty() || feature.find(',') != std::string::npos) {
      return Status::InvalidArgument("target feature '" + feature + "' is empty or contains a comma");
    }
  }
  // Text is exported as JSON, which must be UTF-8: refuse bytes that could
  // not be written back out unchanged.
  for (const std::string* text : {&record.trace, &record.error_msg, &record.worker, &record.device,
                                  &record.target.target, &record.workload_hash}) {
    if (!IsValidUtf8(*text)) return Status::InvalidArgument("record text is not valid UTF-8: '" + *text + "'");
  }
  if (record.target.fingerprint.cores < 0) return Status::InvalidArgument("target core count is negative");
  if (!record.uid.empty()) {
    bool hex = record.uid.size() == 32 && std::all_of(record.uid.begin(), record.uid.end(), [](char c) {
                 return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
               });
    if (!hex) return Status::InvalidArgument("record uid '" + record.uid + "' is not 32 lowercase hex digits");
  }
  if (record.ok()) {
    if (record.run_secs.empty()) {
      return Status::InvalidArgument("successful record has no timings (run_secs is empty)");
    }
    for (double t : record.run_secs) {
      if (!std::isfinite(t) || t <= 0) {
        return Status::InvalidArgument("record timing " + std::to_string(t) + " is not a positive finite number");
      }
    }
  } else if (!record.run_secs.empty()) {
    return Status::InvalidArgument("failed record (" + std::string(ErrorKindName(record.error_kind)) +
                                   ") carries timings");
  }
  if (!IsKnownErrorKind(record.error_kind)) {
    return Status::InvalidArgument("record has an unknown error kind");
  }
  return Status::OK();
}

std::string NewRecordUid() {
  // One process-wide generator seeded from the OS: uids must not collide
  // across processes and machines, which a time-based seed would not ensure.
  // Reseeded after fork() so that parent and child never share a stream.
  static std::mutex mu;
  static std::mt19937_64 engine;
  static pid_t seeded_pid = 0;
  uint64_t high, low;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (seeded_pid != ::getpid()) {
      std::random_device device;
      std::seed_seq seed{device(), device(), device(), device(), device(), device(), device(), device()};
      engine.seed(seed);
      seeded_pid = ::getpid();
    }
    high = engine();
    low = engine();
  }
  // Time-ordered like a UUIDv7: the first 48 bits are the unix time in
  // milliseconds, the other 80 random. New uids then land at the right edge
  // of the uid index instead of on a random page each, which keeps batch
  // ingest into a large log from rewriting a page per record.
  uint64_t millis = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  high = (millis << 16) | (high & 0xffff);
  static const char kHex[] = "0123456789abcdef";
  std::string uid(32, '0');
  for (int i = 0; i < 16; ++i) {
    uid[15 - i] = kHex[(high >> (4 * i)) & 0xf];
    uid[31 - i] = kHex[(low >> (4 * i)) & 0xf];
  }
  return uid;
}

std::string_view TunefarmVersion() {
#ifdef TUNEFARM_VERSION
  return TUNEFARM_VERSION;
#else
  return "0.1.0";
#endif
}

}  // namespace tunefarm::database
