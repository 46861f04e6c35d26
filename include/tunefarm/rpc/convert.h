// Conversions between the wire messages (tunefarm.v1) and tunefarm's own
// measurement types (tunefarm/measure/measure.h). Pure functions, no I/O.
#pragma once

#include "tunefarm/v1/measure.pb.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::rpc {

v1::MeasureOptions ToProto(const MeasureOptions& options);
// Zero fields take MeasureOptions' defaults.
MeasureOptions FromProto(const v1::MeasureOptions& options);

v1::MeasureInput ToProto(const MeasureInput& input);
MeasureInput FromProto(const v1::MeasureInput& input);

v1::MeasureResult ToProto(const MeasureResult& result);
MeasureResult FromProto(const v1::MeasureResult& result);

}  // namespace tunefarm::rpc
