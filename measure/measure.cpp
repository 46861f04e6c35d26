// The small non-virtual parts of the measurement contract (measure.h).
#include "tunefarm/measure/measure.h"

#include <limits>
#include <numeric>

namespace tunefarm {

const char* MeasureErrorKindName(MeasureErrorKind kind) {
  switch (kind) {
    case MeasureErrorKind::kNone: return "none";
    case MeasureErrorKind::kInvalidCandidate: return "invalid_candidate";
    case MeasureErrorKind::kCompileError: return "compile_error";
    case MeasureErrorKind::kRuntimeError: return "runtime_error";
    case MeasureErrorKind::kTimeout: return "timeout";
    case MeasureErrorKind::kWrongResult: return "wrong_result";
    case MeasureErrorKind::kWorkerLost: return "worker_lost";
  }
  return "unknown";
}

double MeasureResult::MeanSeconds() const {
  if (error != MeasureErrorKind::kNone || repeat_seconds.empty()) {
    return std::numeric_limits<double>::infinity();
  }
  return std::accumulate(repeat_seconds.begin(), repeat_seconds.end(), 0.0) /
         static_cast<double>(repeat_seconds.size());
}

}  // namespace tunefarm
