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
  if (rest == "cuda-illegal-address") return TestFault::kCudaIllegalAddress;
  return Status::InvalidArgument("unknown test fault '" + std::string(rest) +
                                 "' (segfault, abort, hang, wrong, hang_build, crash_build, cuda-illegal-address)");
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

namespace {

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | uint32_t(uint8_t(bytes[i + 1])) << 8 | uint8_t(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kBase64Alphabet[(v >> shift) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16 | (rest == 2 ? uint32_t(uint8_t(bytes[i + 1])) << 8 : 0);
    out += kBase64Alphabet[(v >> 18) & 63];
    out += kBase64Alphabet[(v >> 12) & 63];
    out += rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::Corruption("base64 text of " + std::to_string(text.size()) + " characters");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=' && text[i + 3] == '=') : 0;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      int d = k >= 4 - pad ? 0 : Base64Value(text[i + size_t(k)]);
      if (d < 0) return Status::Corruption("invalid base64 character at offset " + std::to_string(i + size_t(k)));
      v = v << 6 | uint32_t(d);
    }
    out += char(v >> 16);
    if (pad < 2) out += char(v >> 8 & 0xff);
    if (pad < 1) out += char(v & 0xff);
  }
  return out;
}

json ToJson(const MeasureInput& input) {
  json j = {{"id", input.candidate_id}, {"workload", input.workload_text}, {"trace", input.trace_text},
            {"target", input.target}};
  // JSON strings must be UTF-8, so the object's bytes travel as base64 (+33%;
  // objects are kilobytes, a batch stays far below kMaxFrameBytes).
  if (!input.object.empty()) j["object"] = Base64Encode(input.object);
  return j;
}

Result<MeasureInput> InputFromJson(const json& j) {
  MeasureInput in;
  in.candidate_id = j.value("id", "");
  in.workload_text = j.value("workload", "");
  in.trace_text = j.value("trace", "");
  in.target = j.value("target", "");
  if (std::string object = j.value("object", ""); !object.empty()) {
    auto bytes = Base64Decode(object);
    if (!bytes.ok()) return Status::Corruption("candidate '" + in.candidate_id + "': object: " + bytes.status().message());
    in.object = std::move(*bytes);
  }
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
#define TF_KIND_FROM_NAME_(Kind, text, stored, wire, proto) \
  if (name == (text)) return MeasureErrorKind::k##Kind;
  TF_MEASURE_ERROR_KINDS(TF_KIND_FROM_NAME_)
#undef TF_KIND_FROM_NAME_
  return MeasureErrorKind::kWorkerLost;
}

json ToJson(const MeasureResult& r) {
  return {{"id", r.candidate_id},
          {"error", MeasureErrorKindName(r.error)},
          {"message", r.error_message},
          {"repeat_seconds", r.repeat_seconds},
          {"build_seconds", r.build_seconds},
          {"speed_probe_seconds", r.speed_probe_seconds}};
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
    r.speed_probe_seconds = j.value("speed_probe_seconds", 0.0);
  } catch (const json::exception& e) {
    r.error = MeasureErrorKind::kWorkerLost;
    r.error_message = std::string("malformed result from the runner: ") + e.what();
    r.repeat_seconds.clear();
    r.speed_probe_seconds = 0;
  }
  return r;
}

}  // namespace tunefarm::worker_protocol
