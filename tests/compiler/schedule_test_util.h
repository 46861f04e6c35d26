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
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"

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

// kMatmul with B a constant input (weights; split_prepack.h).
inline constexpr std::string_view kConstMatmul = R"(
workload mm(M = 8, N = 32, K = 12) {
  A = input f32[M, K]
  B = input const f32[K, N]
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

// An element-wise producer and consumer (inlining, compute locations).
inline constexpr std::string_view kBiasRelu = R"(
workload br(M = 6, N = 20) {
  A    = input f32[M, N]
  bias = input f32[N]
  t[i, j] = A[i, j] + bias[j]
  out[i, j] = max(t[i, j], 0.0)
  output out
}
)";

// A convolution written as the suite's C2D: padding is a guard on the input.
inline constexpr std::string_view kGuardedConv = R"(
workload gconv(N = 1, C = 3, H = 7, W = 6, K = 4, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input f32[K, C, R, S]
  out[n, k, h: H + 2 * P - R + 1, w: W + 2 * P - S + 1] = sum(c: C, r: R, s: S)
      select(h + r - P >= 0 && h + r - P < H && w + s - P >= 0 && w + s - P < W,
             X[n, c, h + r - P, w + s - P], 0.0) * Wt[k, c, r, s]
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

// The default program of a workload with its outputs on fixed random data,
// computed once and compared against many schedules.
struct Reference {
  ir::PrimFunc base;
  std::vector<HostBuffer> inputs;    // the data every run starts from
  std::vector<HostBuffer> expected;  // after interpreting base
};

inline Result<Reference> MakeReference(ir::PrimFunc base, uint64_t seed = 11) {
  Reference ref{std::move(base), {}, {}};
  ref.inputs = RandomArgs(ref.base, seed);
  ref.expected = CopyArgs(ref.inputs);
  TF_RETURN_IF_ERROR(Interpret(ref.base, HostPointers(ref.expected)));
  return ref;
}

// A suite workload shrunk so the interpreter runs it in a moment.
inline Result<ir::PrimFunc> LowerShrunk(const std::string& path, double flop_budget) {
  TF_ASSIGN_OR_RETURN(Workload w, ShrinkWorkload(ReadTextFile(path), path, {}, flop_budget));
  return LowerToPrimFunc(w);
}

// Interprets (and JIT-runs when `jit`) `scheduled` on the reference data.
inline ::testing::AssertionResult MatchesReference(const Reference& ref, const ir::PrimFunc& scheduled, bool jit,
                                                   double tol = 1e-4) {
  std::vector<HostBuffer> interp = CopyArgs(ref.inputs);
  Status s = Interpret(scheduled, HostPointers(interp));
  if (!s.ok()) return ::testing::AssertionFailure() << "interpreting: " << s.ToString() << "\n" << ir::ToString(scheduled);
  auto r = OutputsEqual(scheduled, interp, ref.expected, tol, tol);
  if (!r || !jit) return r;
  auto kernel = JitCompile(scheduled, Target::Host());
  if (!kernel.ok()) return ::testing::AssertionFailure() << "JitCompile: " << kernel.status().ToString() << "\n" << ir::ToString(scheduled);
  std::vector<HostBuffer> compiled = CopyArgs(ref.inputs);
  s = (*kernel)->Run(Pointers(compiled));
  if (!s.ok()) return ::testing::AssertionFailure() << "JIT run: " << s.ToString();
  r = OutputsEqual(scheduled, compiled, ref.expected, tol, tol);
  return r ? r : r << "(JIT)";
}

// Applies `steps` random, plausible schedule primitives. Requests the
// schedule refuses (InvalidArgument) are skipped; any other error is returned.
inline Status RandomSchedule(Schedule& sch, std::mt19937_64& rng, int steps) {
  auto pick = [&rng](size_t n) { return size_t(rng() % n); };
  auto accept = [](const Status& s) { return s.ok() || s.code() == StatusCode::kInvalidArgument ? Status::OK() : s; };
  for (int step = 0; step < steps; ++step) {
    std::vector<std::string> names = sch.BlockNames();
    if (names.empty()) return Status::OK();
    TF_ASSIGN_OR_RETURN(BlockRV block, sch.GetBlock(names[pick(names.size())]));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(block));
    if (loops.empty()) continue;
    LoopRV loop = loops[pick(loops.size())];
    int64_t extent = sch.LoopExtent(loop).ok() ? *sch.LoopExtent(loop) : 1;
    // A loop of another block (a compute location).
    std::string other_name = names[pick(names.size())];
    TF_ASSIGN_OR_RETURN(BlockRV other, sch.GetBlock(other_name));
    TF_ASSIGN_OR_RETURN(std::vector<LoopRV> other_loops, sch.GetLoops(other));
    Status s;
    switch (pick(15)) {
      case 0:
      case 1: {  // sampled perfect tile
        auto tiles = sch.SamplePerfectTile(loop, 2 + int(pick(2)), 16);
        if (!tiles.ok()) { s = tiles.status(); break; }
        std::vector<Factor> factors(tiles->begin(), tiles->end());
        s = sch.Split(loop, factors).status();
        break;
      }
      case 2:  // literal split, often not dividing
        s = sch.Split(loop, {-1, int64_t(2 + pick(5))}).status();
        break;
      case 3: {  // reorder a few loops of the block
        std::vector<LoopRV> some = loops;
        std::shuffle(some.begin(), some.end(), rng);
        some.resize(std::min<size_t>(some.size(), 2 + pick(2)));
        s = sch.Reorder(some);
        break;
      }
      case 4:
        if (loops.size() >= 2) {
          size_t i = pick(loops.size() - 1);
          s = sch.Fuse({loops[i], loops[i + 1]}).status();
        }
        break;
      case 5:
        s = sch.Parallel(loops[pick(std::min<size_t>(2, loops.size()))]);
        break;
      case 6: {  // vectorize the innermost loop that takes it, split to 4 or 8 lanes when long
        for (size_t i = loops.size(); i-- > 0;) {
          LoopRV inner = loops[i];
          if (sch.LoopExtent(inner).ok() && *sch.LoopExtent(inner) > 16) {
            auto parts = sch.Split(inner, {-1, int64_t(4) << pick(2)});
            if (!parts.ok()) continue;
            inner = parts->back();
          }
          s = sch.Vectorize(inner);
          if (s.ok() || s.code() != StatusCode::kInvalidArgument) break;
        }
        break;
      }
      case 7:
        s = extent <= 8 ? sch.Unroll(loop) : sch.Annotate(loops[0], "pragma_auto_unroll_max_step", 16);
        break;
      case 8:
        s = pick(2) ? sch.ComputeInline(block) : sch.ReverseComputeInline(block);
        break;
      case 9:
        if (!other_loops.empty()) s = sch.ComputeAt(block, other_loops[pick(other_loops.size())]);
        break;
      case 10:
        if (!other_loops.empty()) s = sch.ReverseComputeAt(block, other_loops[pick(other_loops.size())]);
        break;
      case 11: {  // cache_write, then the write-back at a loop of the block
        auto write_back = sch.CacheWrite(block, ir::MemoryScope::kLocal);
        if (!write_back.ok()) { s = write_back.status(); break; }
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> now, sch.GetLoops(block));
        if (!now.empty()) s = sch.ReverseComputeAt(*write_back, now[pick(now.size())]);
        break;
      }
      case 12: {  // cache_read, maybe packed, maybe moved to a loop of the reader
        auto copy = sch.CacheRead(block, int(pick(2)), pick(2) ? ir::MemoryScope::kLocal : ir::MemoryScope::kGlobal);
        if (!copy.ok()) { s = copy.status(); break; }
        if (pick(2)) TF_RETURN_IF_ERROR(accept(sch.PackLayout(*copy, int(pick(2)), 2, int(pick(2)))));
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> now, sch.GetLoops(block));
        if (!now.empty() && pick(2)) s = sch.ComputeAt(*copy, now[pick(now.size())]);
        break;
      }
      case 13: {  // every input through a copy, an accumulator, then one spatial axis padded
        for (int r = 0; r < 4; ++r) {
          if (!sch.CacheRead(block, r, ir::MemoryScope::kGlobal).ok()) break;
        }
        TF_RETURN_IF_ERROR(accept(sch.CacheWrite(block, ir::MemoryScope::kLocal).status()));
        s = sch.PadAxis(block, int(pick(3)), int64_t(2 + pick(7)));
        break;
      }
      case 14: {  // a copy split into its phases, maybe moved to a loop of the reader first
        auto copy = sch.CacheRead(block, int(pick(2)), ir::MemoryScope::kGlobal);
        if (!copy.ok()) { s = copy.status(); break; }
        TF_ASSIGN_OR_RETURN(std::vector<LoopRV> now, sch.GetLoops(block));
        if (!now.empty() && pick(2)) TF_RETURN_IF_ERROR(accept(sch.ComputeAt(*copy, now[pick(now.size())])));
        s = sch.SplitPhases(*copy, int(pick(2)), int64_t(2 + pick(2)));
        break;
      }
    }
    TF_RETURN_IF_ERROR(accept(s));
  }
  return Status::OK();
}

}  // namespace tunefarm::testing
