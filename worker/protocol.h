// The wire between LocalMeasurer (parent) and tunefarm-runner (child).
//
// Framing: each message is a 4-byte little-endian length followed by that
// many bytes of JSON (one object). Both directions use it over one Unix
// stream socket (the runner's fd 3). Message types and their order are
// documented in docs/measurement.md; this file holds the framing and the
// codecs for the types that cross the wire (MeasureInput, MeasureOptions,
// MeasureResult), so the two sides cannot drift apart.
//
// Internal to worker/: nothing outside it includes this header.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tunefarm/common/status.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::worker_protocol {

constexpr int kProtocolVersion = 1;
// A batch of a few hundred candidates with long traces stays far below this;
// a larger length means a corrupt stream.
constexpr uint32_t kMaxFrameBytes = 64u << 20;
// Environment variable that names the runner's device: "cpu" (unset: the
// same) or "cuda:N" (LocalMeasurerOptions::device).
constexpr const char* kRunnerDeviceEnv = "TUNEFARM_RUNNER_DEVICE";
// Environment variable that enables the runner's fault-injection test hooks.
constexpr const char* kTestFaultsEnv = "TUNEFARM_RUNNER_TEST_FAULTS";
// TEST DEVICE: a trace line "# tunefarm-test-fault: <fault>" makes a runner
// started with kTestFaultsEnv=1 misbehave on purpose (see TestFault).
constexpr std::string_view kTestFaultPrefix = "# tunefarm-test-fault:";

// Test-only misbehaviours, acted on by the runner after building a candidate.
enum class TestFault : uint8_t {
  kNone,
  kSegfault,     // crash with SIGSEGV when run
  kAbort,        // abort() when run (SIGABRT, with a stderr message)
  kHang,         // never return from the run
  kWrong,        // corrupt the output after the run
  kHangBuild,    // never finish building
  kCrashBuild,   // crash with SIGSEGV while building
  // cuda targets: launch a kernel that writes through a null pointer before
  // the candidate's (CUDA_ERROR_ILLEGAL_ADDRESS; the context is then unusable).
  kCudaIllegalAddress,
};
// The fault named in a trace text, kNone when there is none; an unknown
// fault name is an error.
Result<TestFault> FindTestFault(std::string_view trace_text);

// Appends one frame holding `message` to `out`.
void AppendFrame(const nlohmann::json& message, std::string& out);

// Incremental frame decoder: feed bytes as they arrive, take whole messages.
class FrameDecoder {
 public:
  void Append(const char* data, size_t size) { buffer_.append(data, size); }
  // The next whole message; nullopt when more bytes are needed; an error when
  // the stream is corrupt (oversized frame, invalid JSON).
  std::optional<Result<nlohmann::json>> Next();

 private:
  std::string buffer_;
  size_t consumed_ = 0;  // bytes of buffer_ already decoded
};

// A candidate's `object` bytes travel base64-encoded (JSON strings are text);
// malformed base64 is Corruption (a broken stream, not a bad candidate).
nlohmann::json ToJson(const MeasureInput& input);
Result<MeasureInput> InputFromJson(const nlohmann::json& j);
// Standard base64 with '=' padding (RFC 4648), no line breaks.
std::string Base64Encode(std::string_view bytes);
Result<std::string> Base64Decode(std::string_view text);
nlohmann::json ToJson(const MeasureOptions& options);
MeasureOptions OptionsFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const MeasureResult& result);
MeasureResult ResultFromJson(const nlohmann::json& j);

// "compile_error" <-> kCompileError; unknown names give kWorkerLost.
MeasureErrorKind ErrorKindFromName(std::string_view name);

}  // namespace tunefarm::worker_protocol
