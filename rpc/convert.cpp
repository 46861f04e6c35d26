// Wire <-> in-memory measurement types (convert.h).
#include "tunefarm/rpc/convert.h"

namespace tunefarm::rpc {

namespace {

// Every measured kind's wire number is its proto enumerator's, and every
// proto enumerator is a measured kind (common/error_kinds.h).
#define TF_CHECK_WIRE_NUMBER_(Kind, name, stored, wire, proto)                  \
  static_assert(v1::proto == (wire), "tunefarm.v1." #proto " is not the number " \
                                     "common/error_kinds.h gives " name);
TF_MEASURE_ERROR_KINDS(TF_CHECK_WIRE_NUMBER_)
#undef TF_CHECK_WIRE_NUMBER_
#define TF_COUNT_KIND_(...) +1
static_assert(v1::MeasureError_ARRAYSIZE == 0 TF_MEASURE_ERROR_KINDS(TF_COUNT_KIND_),
              "tunefarm.v1.MeasureError has a value that common/error_kinds.h does not list");
#undef TF_COUNT_KIND_

v1::MeasureError ToProto(MeasureErrorKind kind) {
  switch (kind) {
#define TF_TO_PROTO_(Kind, name, stored, wire, proto) \
  case MeasureErrorKind::k##Kind:                    \
    return v1::proto;
    TF_MEASURE_ERROR_KINDS(TF_TO_PROTO_)
#undef TF_TO_PROTO_
  }
  return v1::MEASURE_ERROR_WORKER_LOST;
}

MeasureErrorKind FromProto(v1::MeasureError error) {
  switch (error) {
#define TF_FROM_PROTO_(Kind, name, stored, wire, proto) \
  case v1::proto:                                      \
    return MeasureErrorKind::k##Kind;
    TF_MEASURE_ERROR_KINDS(TF_FROM_PROTO_)
#undef TF_FROM_PROTO_
    default: return MeasureErrorKind::kWorkerLost;  // unknown values from a newer peer
  }
}

}  // namespace

v1::MeasureOptions ToProto(const MeasureOptions& o) {
  v1::MeasureOptions p;
  p.set_repeat(o.repeat);
  p.set_number(o.number);
  p.set_min_repeat_ms(o.min_repeat_ms);
  p.set_flush_cache(o.flush_cache);
  p.set_build_timeout_s(o.build_timeout_s);
  p.set_run_timeout_s(o.run_timeout_s);
  p.set_input_seed(o.input_seed);
  p.set_num_threads(o.num_threads);
  p.set_skip_correctness_check(!o.check_correctness);
  return p;
}

MeasureOptions FromProto(const v1::MeasureOptions& p) {
  MeasureOptions o;
  if (p.repeat() > 0) o.repeat = p.repeat();
  if (p.number() > 0) o.number = p.number();
  if (p.min_repeat_ms() > 0) o.min_repeat_ms = p.min_repeat_ms();
  o.flush_cache = p.flush_cache();
  if (p.build_timeout_s() > 0) o.build_timeout_s = p.build_timeout_s();
  if (p.run_timeout_s() > 0) o.run_timeout_s = p.run_timeout_s();
  if (p.input_seed() != 0) o.input_seed = p.input_seed();
  if (p.num_threads() > 0) o.num_threads = p.num_threads();
  o.check_correctness = !p.skip_correctness_check();
  return o;
}

v1::MeasureInput ToProto(const MeasureInput& in) {
  v1::MeasureInput p;
  p.set_candidate_id(in.candidate_id);
  p.set_workload_text(in.workload_text);
  p.set_trace_text(in.trace_text);
  p.set_target(in.target);
  p.set_object(in.object);
  return p;
}

MeasureInput FromProto(const v1::MeasureInput& p) {
  return {p.candidate_id(), p.workload_text(), p.trace_text(), p.target(), p.object()};
}

v1::MeasureResult ToProto(const MeasureResult& r) {
  v1::MeasureResult p;
  p.set_candidate_id(r.candidate_id);
  p.set_error(ToProto(r.error));
  p.set_error_message(r.error_message);
  for (double s : r.repeat_seconds) p.add_repeat_seconds(s);
  p.set_build_seconds(r.build_seconds);
  p.set_speed_probe_seconds(r.speed_probe_seconds);
  p.set_synthetic(r.synthetic);
  p.set_emulated(r.emulated);
  return p;
}

MeasureResult FromProto(const v1::MeasureResult& p) {
  MeasureResult r;
  r.candidate_id = p.candidate_id();
  r.error = FromProto(p.error());
  r.error_message = p.error_message();
  r.repeat_seconds.assign(p.repeat_seconds().begin(), p.repeat_seconds().end());
  r.build_seconds = p.build_seconds();
  r.speed_probe_seconds = p.speed_probe_seconds();
  r.synthetic = p.synthetic();
  r.emulated = p.emulated();
  return r;
}

}  // namespace tunefarm::rpc
