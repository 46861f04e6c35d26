// The small non-virtual parts of the measurement contract (measure.h).
#include "tunefarm/measure/measure.h"

#include <limits>
#include <numeric>

namespace tunefarm {

const char* MeasureErrorKindName(MeasureErrorKind kind) {
  switch (kind) {
#define TF_MEASURE_ERROR_KIND_NAME_(Kind, name, stored, wire, proto) \
  case MeasureErrorKind::k##Kind:                                    \
    return name;
    TF_MEASURE_ERROR_KINDS(TF_MEASURE_ERROR_KIND_NAME_)
#undef TF_MEASURE_ERROR_KIND_NAME_
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
