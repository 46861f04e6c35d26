// The measurement contract: what a candidate is (MeasureInput), what its
// measurement answers (MeasureResult, MeasureErrorKind) and the Measurer
// interface that builds a scheduled kernel, runs it isolated, times it and
// checks it against the reference. It sits below the tuner, the rpc layer
// (which carries these types to fleet workers over gRPC) and the workers
// (whose LocalMeasurer measures on this machine); it knows none of them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/error_kinds.h"
#include "tunefarm/common/status.h"

namespace tunefarm {

class Trace;  // compiler/schedule/trace.h

// How a measurement failed (kNone: it did not). The kinds, what each means,
// their names and their numbers on the wire, which are these values, are
// the list in common/error_kinds.h.
enum class MeasureErrorKind : uint8_t {
#define TF_MEASURE_ERROR_KIND_ENUMERATOR_(Kind, name, stored, wire, proto) k##Kind = wire,
  TF_MEASURE_ERROR_KINDS(TF_MEASURE_ERROR_KIND_ENUMERATOR_)
#undef TF_MEASURE_ERROR_KIND_ENUMERATOR_
};
const char* MeasureErrorKindName(MeasureErrorKind kind);  // "compile_error", ...

struct MeasureOptions {
  int repeat = 3;               // timed groups, all reported
  int number = 0;               // runs per group; 0: enough to last min_repeat_ms
  double min_repeat_ms = 20;    // minimum duration of one group
  bool flush_cache = false;     // evict caches between groups
  double build_timeout_s = 30;
  double run_timeout_s = 10;    // for warm-up + all groups of one candidate
  uint64_t input_seed = 42;     // random inputs, identical for reference and candidate
  int num_threads = 0;          // threads for parallel loops; 0: the runtime default
  bool check_correctness = true;
};

struct MeasureInput {
  std::string candidate_id;   // echoed back; unique per candidate
  std::string workload_text;  // the workload language text
  std::string trace_text;     // Trace::ToText(); empty = default schedule
  std::string target;         // Target::ToString()
  // A relocatable object (EmitObject bytes for `target`) already built for this
  // candidate, e.g. by the tuner daemon for a board that should not compile;
  // empty: the measurer builds it. The workload and trace are still needed
  // (buffer shapes, the reference), and must be what the object was built from.
  std::string object = {};  // "= {}": brace-initializers that stop at target need not name it
  // The trace `trace_text` prints, when whoever made the input holds it as an
  // object (the tuning loop does): consumers in the same process (the fleet
  // dispatcher routing by instruction, the daemon's builds for boards) use it
  // instead of parsing the text again. Null: parse trace_text. Only the text
  // crosses a process boundary (the runner's JSON, the fleet's proto).
  std::shared_ptr<const Trace> trace = {};
};

struct MeasureResult {
  std::string candidate_id;
  MeasureErrorKind error = MeasureErrorKind::kNone;
  std::string error_message;
  std::vector<double> repeat_seconds;  // seconds per run, one per group
  double build_seconds = 0;
  // Seconds of the runner's speed probe, a fixed arithmetic loop timed right
  // after the kernel on the same threads (runner.h, TimeSpeedProbe): a larger
  // value than the same worker's other results means the machine ran slower
  // while this one was timed. 0: not probed (a failure, a synthetic device,
  // an older worker). Comparable only among one worker's results at one
  // thread count.
  double speed_probe_seconds = 0;
  // The time was invented, not measured: a test device's (fleet workers of
  // device test set it; TestDeviceMeasurer itself does not, so unit tests may
  // stand it in for a real device). The tuning log never ranks or serves it.
  bool synthetic = false;
  // The code ran under emulation (a board worker under qemu-user sets it):
  // its time says nothing about a real device. Its record is emulated
  // (database/record.h): never ranked against, or served in place of, a real
  // device's. The tuner also marks every result of a worker that registered
  // as emulated.
  bool emulated = false;
  std::string worker;  // who measured it (set by fleet dispatch; empty: this process)
  double MeanSeconds() const;  // mean of repeat_seconds; +inf on error
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // Measures every input (in order, one result each). Never throws; a failed
  // candidate is a result with an error kind, not a failed call.
  virtual std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) = 0;
};

}  // namespace tunefarm
