// The values stored in the tuning log: workloads, targets with their hardware
// fingerprint, and tuning records (one measurement of one trace).
//
// These are plain value types. The database knows nothing of the compiler's IR:
// a workload is its structural hash plus its serialized text, a trace is text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/error_kinds.h"
#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/common/status.h"

namespace tunefarm::database {

// A tensor computation, keyed by its structural hash (computed by the compiler;
// opaque to the database). The first text committed for a hash is kept.
struct Workload {
  std::string hash;  // structural hash, e.g. "9f3c...": non-empty
  std::string name;  // e.g. "dense_bias_relu"
  std::string text;  // the workload in the workload language

  bool operator==(const Workload&) const = default;
};

// What the hardware that ran a measurement was (common/hardware_fingerprint.h).
// Its features are kept sorted and unique in the log (CanonicalizeFingerprint).
using HardwareFingerprint = tunefarm::HardwareFingerprint;

// The full target string that code was generated for plus the fingerprint of
// the device that ran it.
struct Target {
  std::string target;  // "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4": non-empty
  HardwareFingerprint fingerprint;

  bool operator==(const Target&) const = default;
};

// How a measurement failed. kNone means it succeeded and has timings. The
// kinds, their names and the integers stored in the log, which are these
// values, are the list in common/error_kinds.h (TF_STORED_ERROR_KINDS).
enum class ErrorKind : int {
#define TF_STORED_ERROR_KIND_ENUMERATOR_(Kind, name, stored) k##Kind = stored,
  TF_STORED_ERROR_KINDS(TF_STORED_ERROR_KIND_ENUMERATOR_)
#undef TF_STORED_ERROR_KIND_ENUMERATOR_
};

// "none", "compile_error", "runtime_error", "timeout", "wrong_result",
// "worker_lost", "other": the names used in JSON Lines and the CLI. A value
// outside the enum is "other".
std::string_view ErrorKindName(ErrorKind kind);
Result<ErrorKind> ParseErrorKind(std::string_view name);

// The toolchain a test device reports in its fingerprint: records that carry
// it are synthetic (common/hardware_fingerprint.h).
using tunefarm::kTestDeviceToolchain;

// One measurement of one trace of one workload on one target. Records are
// append-only: the database never updates one after it is committed.
struct TuningRecord {
  // Globally unique id (32 hex digits). Empty on commit means "generate one".
  // It is what makes merge and import idempotent.
  std::string uid;
  std::string workload_hash;  // must name a committed workload
  Target target;
  std::string trace;             // serialized schedule trace
  std::vector<double> run_secs;  // every repeat, seconds; non-empty iff error_kind == kNone
  ErrorKind error_kind = ErrorKind::kNone;
  std::string error_msg;
  std::string worker;            // worker id, e.g. "host-7:worker-2"
  std::string device;            // device on that worker, e.g. "cpu", "cuda:0"
  // The time was invented, not measured: a test device (`tunefarm worker
  // --device test`) or any other device that does not really run the code.
  // Such a record is kept for the run that made it (a job on a test key
  // resumes and searches from its own records) but never ranks: GetTopK,
  // GetBest, compile, the Compile and TuningLog services never answer with it,
  // and it never shares a trace's mean with a measured record. Committing a
  // record whose fingerprint's toolchain is kTestDeviceToolchain stores it as
  // synthetic whatever this field says (test devices of older versions).
  bool synthetic = false;
  // The time was measured under emulation (a board worker under qemu-user,
  // board_fingerprint.h): real code ran, but its time says nothing about a
  // real board. Such a record never ranks against, nor shares a trace's mean
  // with, a record measured on real hardware, and a lookup answers with one
  // only when nothing real is on record for the target (tuning_log.h): the
  // answer then carries emulated = true. Committing a record whose
  // fingerprint is an emulated device's (IsEmulatedFingerprint: arch ending
  // in "-emulated") stores it as emulated whatever this field says.
  bool emulated = false;
  std::string tunefarm_version;  // empty on commit means this build's version
  int64_t created_at_us = 0;     // unix time in microseconds; 0 on commit means now

  int64_t id = 0;  // row id in the database it was read from; ignored on commit

  // Set only on records that GetTopK and GetBest return (ignored on commit):
  // a trace may be measured more than once on one target (the tuner measures
  // each new best again), and it ranks by the mean of TimeSec() over all its
  // successful records there. This record is the trace's fastest one.
  double trace_mean_sec = 0;  // 0: not a ranked answer
  int trace_records = 0;      // successful records of the trace on this target

  bool ok() const { return error_kind == ErrorKind::kNone; }
  // The record's time (RecordTime of run_secs), or nullopt for a failed
  // measurement.
  std::optional<double> TimeSec() const;
  // What the record ranks by: trace_mean_sec on a ranked answer, TimeSec()
  // elsewhere (nullopt for a failed measurement).
  std::optional<double> RankSec() const;

  // Equality of content (everything but the local row id).
  bool SameContent(const TuningRecord& other) const;
};

// A measurement's time from its timed groups (run_secs): the fastest group;
// nullopt when there is none. Why not their mean: on a shared machine a
// group is slowed, never sped up, by what else runs (another process, a
// neighbour of the virtual machine), and one slowed group moved the mean of
// 3 by 2 % in the median of the records it hit, about a third of them
// (docs/tuning-benchmarks.md, "A record's time"). Since schema v4 the
// records.mean_sec column holds this value (the name is from v1).
std::optional<double> RecordTime(const std::vector<double>& run_secs);

// Sorts and deduplicates features in place: the canonical form stored.
void CanonicalizeFingerprint(HardwareFingerprint* fingerprint);

// Whether `text` is well-formed UTF-8 (what JSON Lines export requires).
bool IsValidUtf8(std::string_view text);

// Checks that a record can be committed: names what is wrong otherwise.
Status ValidateRecord(const TuningRecord& record);

// A fresh uid: 32 lowercase hex digits, 48 bits of millisecond time then 80
// random bits (time-ordered, like a UUIDv7).
std::string NewRecordUid();

// The version string stamped on records committed by this build.
std::string_view TunefarmVersion();

}  // namespace tunefarm::database
