// Framing and JSON codecs shared by LocalMeasurer and tunefarm-runner.
#include "protocol.h"

#include <cstring>

namespace tunefarm::worker_protocol {

using nlohmann::json;

Result<TestFault> FindTestFault(std::string_view trace_text) {
  size_t pos = trace_text.find(kTestFaultPrefix);
  if (pos == std::string_view::npos) return TestFault::kNone;
  std::string_view rest = trace_text.substr(pos + kTestFaultPrefix.size());
  rest = rest.substr(0, rest.find('\n'));
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r' || rest.back() == '\t')) rest.remove_suffix(1);
  if (rest == "segfault") return TestFault::kSegfault;
  if (rest == "abort") return TestFault::kAbort;
  if (rest == "hang") return TestFault::kHang;
  if (rest == "wrong") return TestFault::kWrong;
  if (rest == "hang_build") return TestFault::kHangBuild;
  if (rest == "crash_build") return TestFault::kCrashBuild;
  return Status::InvalidArgument("unknown test fault '" + std::string(rest) +
                                 "' (segfault, abort, hang, wrong, hang_build, crash_build)");
}

void AppendFrame(const json& message, std::string& out) {
  std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
  uint32_t n = static_cast<uint32_t>(body.size());
  const unsigned char header[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                                   static_cast<unsigned char>(n >> 16), static_cast<unsigned char>(n >> 24)};
  out.append(reinterpret_cast<const char*>(header), 4);
  out += body;
}

std::optional<Result<json>> FrameDecoder::Next() {
  if (buffer_.size() - consumed_ < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + consumed_);
  uint32_t n = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
  if (n > kMaxFrameBytes) {
    return Result<json>(Status::Corruption("frame of " + std::to_string(n) + " bytes exceeds the limit"));
  }
  if (buffer_.size() - consumed_ < 4 + size_t(n)) return std::nullopt;
  json message = json::parse(buffer_.begin() + std::ptrdiff_t(consumed_ + 4),
                             buffer_.begin() + std::ptrdiff_t(consumed_ + 4 + n), nullptr, false);
  consumed_ += 4 + size_t(n);
  // Compact now and then rather than erasing after every frame (quadratic).
  if (consumed_ > (1u << 16) && consumed_ * 2 > buffer_.size()) {
    buffer_.erase(0, consumed_);
    consumed_ = 0;
  }
  if (message.is_discarded() || !message.is_object()) {
    return Result<json>(Status::Corruption("frame is not a JSON object"));
  }
  return Result<json>(std::move(message));
}

json ToJson(const MeasureInput& input) {
  return {{"id", input.candidate_id}, {"workload", input.workload_text}, {"trace", input.trace_text},
          {"target", input.target}};
}

MeasureInput InputFromJson(const json& j) {
  MeasureInput in;
  in.candidate_id = j.value("id", "");
  in.workload_text = j.value("workload", "");
  in.trace_text = j.value("trace", "");
  in.target = j.value("target", "");
  return in;
}

json ToJson(const MeasureOptions& o) {
  return {{"repeat", o.repeat},
          {"number", o.number},
          {"min_repeat_ms", o.min_repeat_ms},
          {"flush_cache", o.flush_cache},
          {"build_timeout_s", o.build_timeout_s},
          {"run_timeout_s", o.run_timeout_s},
          {"input_seed", o.input_seed},
          {"num_threads", o.num_threads},
          {"check_correctness", o.check_correctness}};
}

MeasureOptions OptionsFromJson(const json& j) {
  MeasureOptions o;
  o.repeat = j.value("repeat", o.repeat);
  o.number = j.value("number", o.number);
  o.min_repeat_ms = j.value("min_repeat_ms", o.min_repeat_ms);
  o.flush_cache = j.value("flush_cache", o.flush_cache);
  o.build_timeout_s = j.value("build_timeout_s", o.build_timeout_s);
  o.run_timeout_s = j.value("run_timeout_s", o.run_timeout_s);
  o.input_seed = j.value("input_seed", o.input_seed);
  o.num_threads = j.value("num_threads", o.num_threads);
  o.check_correctness = j.value("check_correctness", o.check_correctness);
  return o;
}

MeasureErrorKind ErrorKindFromName(std::string_view name) {
  for (auto kind : {MeasureErrorKind::kNone, MeasureErrorKind::kInvalidCandidate, MeasureErrorKind::kCompileError,
                    MeasureErrorKind::kRuntimeError, MeasureErrorKind::kTimeout, MeasureErrorKind::kWrongResult,
                    MeasureErrorKind::kWorkerLost}) {
    if (name == MeasureErrorKindName(kind)) return kind;
  }
  return MeasureErrorKind::kWorkerLost;
}

json ToJson(const MeasureResult& r) {
  return {{"id", r.candidate_id},
          {"error", MeasureErrorKindName(r.error)},
          {"message", r.error_message},
          {"repeat_seconds", r.repeat_seconds},
          {"build_seconds", r.build_seconds}};
}

MeasureResult ResultFromJson(const json& j) {
  MeasureResult r;
  try {
    r.candidate_id = j.value("id", "");
    r.error = ErrorKindFromName(j.value("error", "worker_lost"));
    r.error_message = j.value("message", "");
    if (auto it = j.find("repeat_seconds"); it != j.end() && it->is_array()) {
      for (const auto& v : *it) {
        if (v.is_number()) r.repeat_seconds.push_back(v.get<double>());
      }
    }
    r.build_seconds = j.value("build_seconds", 0.0);
  } catch (const json::exception& e) {
    r.error = MeasureErrorKind::kWorkerLost;
    r.error_message = std::string("malformed result from the runner: ") + e.what();
    r.repeat_seconds.clear();
  }
  return r;
}

}  // namespace tunefarm::worker_protocol
