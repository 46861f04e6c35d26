// The ways a measurement can fail, in one list. MeasureErrorKind
// (measure/measure.h), database::ErrorKind (database/record.h), their names
// and every mapping between them and the wire's tunefarm.v1.MeasureError
// (proto/tunefarm/v1/measure.proto, rpc/convert.cpp) are generated from it,
// so a kind added here reaches all of them: the generated switches have no
// default, and rpc/convert.cpp checks every proto number against the list.
//
// TF_ERROR_KINDS(X, arg) calls X(arg, Kind, name, in, stored, wire, proto)
// once per kind:
//   Kind    the enumerator, k<Kind>, in each enum that has the kind
//   name    its text: the runner's JSON frames, JSON Lines, the TuningLog
//           service, the CLI
//   in      BOTH: measured and stored. MEASURED: a measurement reports it and
//           the log stores it as the kind whose value is `stored`. STORED:
//           only the log has it (a record imported or written by hand)
//   stored  the integer in the log's records.error_kind column, the value of
//           database::ErrorKind::k<Kind>
//   wire    the tunefarm.v1.MeasureError number, the value of
//           MeasureErrorKind::k<Kind>; -1 where the kind is STORED only
//   proto   the tunefarm.v1.MeasureError enumerator; - where STORED only
// Never change a `stored` or `wire` number: logs written before, and workers
// of older versions, must still be read. A new kind takes new numbers.
//
// Most callers want one of the two views:
//   TF_MEASURE_ERROR_KINDS(X): X(Kind, name, stored, wire, proto) per
//     measured kind (BOTH and MEASURED), in the list's order;
//   TF_STORED_ERROR_KINDS(X): X(Kind, name, stored) per stored kind (BOTH and
//     STORED), in the list's order.
#pragma once

#include <cstddef>

// clang-format off
#define TF_ERROR_KINDS(X, arg)                                                                  \
  /*  Kind              name                 in        stored  wire  proto */                  \
  X(arg, None,             "none",              BOTH,     0,      0,    MEASURE_ERROR_NONE)        \
  /* the trace does not apply to the workload: recorded as a compile error */                  \
  X(arg, InvalidCandidate, "invalid_candidate", MEASURED, 1,      1,    MEASURE_ERROR_INVALID_CANDIDATE) \
  X(arg, CompileError,     "compile_error",     BOTH,     1,      2,    MEASURE_ERROR_COMPILE)     \
  /* crashed (a signal) or returned an error */                                                \
  X(arg, RuntimeError,     "runtime_error",     BOTH,     2,      3,    MEASURE_ERROR_RUNTIME)     \
  /* the build or the run exceeded its deadline */                                             \
  X(arg, Timeout,          "timeout",           BOTH,     3,      4,    MEASURE_ERROR_TIMEOUT)     \
  /* the output differs from the reference */                                                  \
  X(arg, WrongResult,      "wrong_result",      BOTH,     4,      5,    MEASURE_ERROR_WRONG_RESULT) \
  /* the measuring process vanished for another reason */                                      \
  X(arg, WorkerLost,       "worker_lost",       BOTH,     5,      6,    MEASURE_ERROR_WORKER_LOST) \
  X(arg, Other,            "other",             STORED,   6,      -1,   -)
// clang-format on

#define TF_MEASURE_ERROR_KINDS(X) TF_ERROR_KINDS(TF_ERROR_KIND_MEASURED_ROW_, X)
#define TF_STORED_ERROR_KINDS(X) TF_ERROR_KINDS(TF_ERROR_KIND_STORED_ROW_, X)

// The views' row filters: `in` picks the expansion by token pasting.
#define TF_ERROR_KIND_MEASURED_ROW_(X, Kind, name, in, stored, wire, proto) \
  TF_ERROR_KIND_MEASURED_##in(X, Kind, name, stored, wire, proto)
#define TF_ERROR_KIND_MEASURED_BOTH(X, ...) X(__VA_ARGS__)
#define TF_ERROR_KIND_MEASURED_MEASURED(X, ...) X(__VA_ARGS__)
#define TF_ERROR_KIND_MEASURED_STORED(X, ...)
#define TF_ERROR_KIND_STORED_ROW_(X, Kind, name, in, stored, wire, proto) \
  TF_ERROR_KIND_STORED_##in(X, Kind, name, stored)
#define TF_ERROR_KIND_STORED_BOTH(X, ...) X(__VA_ARGS__)
#define TF_ERROR_KIND_STORED_MEASURED(X, ...)
#define TF_ERROR_KIND_STORED_STORED(X, ...) X(__VA_ARGS__)

namespace tunefarm {

// The log's kind (database::ErrorKind) that a measured kind
// (MeasureErrorKind) is recorded as: its `stored` value. A template so that
// common/ names neither enum; the tuner instantiates it.
template <typename Stored, typename Measured>
constexpr Stored RecordedErrorKind(Measured kind) {
  switch (kind) {
#define TF_ERROR_KIND_RECORDED_AS_(Kind, name, stored, wire, proto) \
  case Measured::k##Kind:                                           \
    return static_cast<Stored>(stored);
    TF_MEASURE_ERROR_KINDS(TF_ERROR_KIND_RECORDED_AS_)
#undef TF_ERROR_KIND_RECORDED_AS_
  }
  return Stored::kOther;  // a value outside the enum
}

// The list's own invariants, checked where it is included.
namespace error_kinds_detail {

#define TF_ERROR_KIND_STORED_VALUE_(Kind, name, stored, ...) stored,
#define TF_ERROR_KIND_WIRE_VALUE_(Kind, name, stored, wire, proto) wire,
inline constexpr int kStoredValues[] = {TF_STORED_ERROR_KINDS(TF_ERROR_KIND_STORED_VALUE_)};
inline constexpr int kWireValues[] = {TF_MEASURE_ERROR_KINDS(TF_ERROR_KIND_WIRE_VALUE_)};
inline constexpr int kRecordedValues[] = {TF_MEASURE_ERROR_KINDS(TF_ERROR_KIND_STORED_VALUE_)};
#undef TF_ERROR_KIND_STORED_VALUE_
#undef TF_ERROR_KIND_WIRE_VALUE_

template <size_t N>
constexpr bool Distinct(const int (&v)[N]) {
  for (size_t i = 0; i < N; ++i) {
    for (size_t j = i + 1; j < N; ++j) {
      if (v[i] == v[j]) return false;
    }
  }
  return true;
}

template <size_t N, size_t M>
constexpr bool EachIn(const int (&v)[N], const int (&set)[M]) {
  for (size_t i = 0; i < N; ++i) {
    bool found = false;
    for (size_t j = 0; j < M; ++j) found = found || v[i] == set[j];
    if (!found) return false;
  }
  return true;
}

static_assert(Distinct(kStoredValues), "two stored error kinds share a stored number");
static_assert(Distinct(kWireValues), "two measured error kinds share a wire number");
static_assert(EachIn(kRecordedValues, kStoredValues), "a measured error kind is recorded as no stored kind");

}  // namespace error_kinds_detail

}  // namespace tunefarm
