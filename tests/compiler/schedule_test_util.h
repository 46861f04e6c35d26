// Shared helpers for the schedule and trace tests: lower a small workload,
// apply schedule steps, and check the scheduled program against the default
// one on random inputs through the reference interpreter and the LLVM JIT.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen_test_util.h"
#include "tunefarm/compiler/lower.h"
#include "tunefarm/compiler/schedule.h"
#include "tunefarm/compiler/trace.h"
#include "tunefarm/compiler/workload_parser.h"

namespace tunefarm::testing {

using Overrides = std::map<std::string, int64_t>;
using ScheduleSteps = std::function<Status(Schedule&)>;

// Parses and lowers a workload text with the given shape overrides.
inline Result<ir::PrimFunc> LowerText(std::string_view text, const Overrides& overrides = {}) {
  ParseOptions options;
  options.param_overrides = overrides;
  TF_ASSIGN_OR_RETURN(Workload w, ParseWorkload(text, options));
  return LowerToPrimFunc(w);
}

// Workload files of the suite (configs/workloads/*.tf), sorted.
inline std::vector<std::string> SuiteWorkloadFiles() {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  if (!fs::exists(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tf") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs `scheduled` through the interpreter (and the JIT when `jit`) and the
// default `base` through the interpreter on the same random data, and
// compares every parameter buffer.
inline ::testing::AssertionResult SameResults(const ir::PrimFunc& base, const ir::PrimFunc& scheduled, bool jit,
                                              uint64_t seed = 11, double tol = 1e-4) {
  std::vector<HostBuffer> expected = RandomArgs(base, seed);
  std::vector<HostBuffer> interp = CopyArgs(expected);
  std::vector<HostBuffer> compiled = CopyArgs(expected);
  Status s = Interpret(base, HostPointers(expected));
  if (!s.ok()) return ::testing::AssertionFailure() << "interpreting the default program: " << s.ToString();
  s = Interpret(scheduled, HostPointers(interp));
  if (!s.ok()) {
    return ::testing::AssertionFailure() << "interpreting the scheduled program: " << s.ToString() << "\n"
                                         << ir::ToString(scheduled);
  }
  auto r = OutputsEqual(scheduled, interp, expected, tol, tol);
  if (!r) return r << "(interpreter: scheduled vs default)";
  if (!jit) return ::testing::AssertionSuccess();
  auto kernel = JitCompile(scheduled, Target::Host());
  if (!kernel.ok()) {
    return ::testing::AssertionFailure() << "JitCompile: " << kernel.status().ToString() << "\n"
                                         << ir::ToString(scheduled);
  }
  s = (*kernel)->Run(Pointers(compiled));
  if (!s.ok()) return ::testing::AssertionFailure() << "JIT run: " << s.ToString();
  r = OutputsEqual(scheduled, compiled, expected, tol, tol);
  if (!r) return r << "(JIT scheduled vs interpreter default)";
  return ::testing::AssertionSuccess();
}

// Replays the schedule's trace, through its text, on a fresh schedule of
// `base` and checks the program and the trace come out identical.
inline ::testing::AssertionResult ReplaysIdentically(const ir::PrimFunc& base, const Schedule& sch) {
  std::string text = sch.trace().ToText();
  auto parsed = Trace::Parse(text);
  if (!parsed.ok()) return ::testing::AssertionFailure() << "parse: " << parsed.status().ToString() << "\n" << text;
  if (!(*parsed == sch.trace())) return ::testing::AssertionFailure() << "parsed trace differs:\n" << text;
  Schedule fresh(base, 12345);
  Status s = parsed->ApplyTo(fresh);
  if (!s.ok()) return ::testing::AssertionFailure() << "replay: " << s.ToString() << "\n" << text;
  if (fresh.trace().ToText() != text) {
    return ::testing::AssertionFailure() << "replayed trace text differs:\n" << text << "--- vs ---\n"
                                         << fresh.trace().ToText();
  }
  if (ir::ToString(fresh.func()) != ir::ToString(sch.func())) {
    return ::testing::AssertionFailure() << "replayed program differs:\n" << ir::ToString(sch.func()) << "--- vs ---\n"
                                         << ir::ToString(fresh.func());
  }
  return ::testing::AssertionSuccess();
}

struct ScheduleOutcome {
  ir::PrimFunc base;
  ir::PrimFunc scheduled;
  std::string trace_text;
};

// Lowers `text`, applies `steps`, checks results (interpreter and JIT) and
// the trace round trip. `out`, when given, receives both programs.
inline ::testing::AssertionResult ScheduleIsCorrect(std::string_view text, const Overrides& overrides,
                                                    const ScheduleSteps& steps, ScheduleOutcome* out = nullptr,
                                                    bool jit = true) {
  auto base = LowerText(text, overrides);
  if (!base.ok()) return ::testing::AssertionFailure() << "lowering: " << base.status().ToString();
  Schedule sch(*base, 1);
  Status s = steps(sch);
  if (!s.ok()) {
    return ::testing::AssertionFailure() << "schedule step failed: " << s.ToString() << "\n"
                                         << ir::ToString(sch.func());
  }
  if (out) *out = {*base, sch.func(), sch.trace().ToText()};
  auto r = SameResults(*base, sch.func(), jit);
  if (!r) return r << "\ntrace:\n" << sch.trace().ToText();
  return ReplaysIdentically(*base, sch);
}

// Expects `status` to be InvalidArgument mentioning every word in `words`.
inline ::testing::AssertionResult IsInvalid(const Status& status, const std::vector<std::string>& words) {
  if (status.ok()) return ::testing::AssertionFailure() << "expected InvalidArgument, got OK";
  if (status.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "expected InvalidArgument, got " << status.ToString();
  }
  for (const std::string& w : words) {
    if (status.message().find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "message lacks '" << w << "': " << status.message();
    }
  }
  return ::testing::AssertionSuccess();
}

// Small inline workloads shared by the tests.
inline constexpr std::string_view kMatmul = R"(
workload mm(M = 16, N = 16, K = 16) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
)";

inline constexpr std::string_view kDenseBiasRelu = R"(
workload dbr(M = 8, N = 32, K = 12) {
  A    = input f32[M, K]
  W    = input f32[N, K]
  bias = input f32[N]
  acc[i, j] = sum(k: K) A[i, k] * W[j, k]
  out[i, j] = max(acc[i, j] + bias[j], 0.0)
  output out
}
)";

// Convolution with an explicit padding stage (the intermediate compute_at moves).
inline constexpr std::string_view kPaddedConv = R"(
workload pconv(C = 3, H = 8, W = 8, K = 4, R = 3, S = 3) {
  X  = input f32[C, H, W]
  Wt = input f32[K, C, R, S]
  pad[c, y: H + 2, x: W + 2] = select(y >= 1 && y <= H && x >= 1 && x <= W, X[c, y - 1, x - 1], 0.0)
  out[k, h: H, w: W] = sum(c: C, r: R, s: S) pad[c, h + r, w + s] * Wt[k, c, r, s]
  output out
}
)";

inline constexpr std::string_view kSoftmax = R"(
workload sm(M = 6, N = 20) {
  X = input f32[M, N]
  mx[i] = max(j: N) X[i, j]
  e[i, j] = exp(X[i, j] - mx[i])
  s[i] = sum(j: N) e[i, j]
  out[i, j] = e[i, j] / s[i]
  output out
}
)";

}  // namespace tunefarm::testing
