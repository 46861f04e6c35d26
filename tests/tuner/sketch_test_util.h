// Shared by the sketch tests: the suite's workloads, shrunk for speed, and a
// check that a sampled program computes what the default one does (through
// the interpreter, or the JIT with constant inputs prepacked as measured).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner::testing {

namespace fs = std::filesystem;

inline std::vector<std::string> SuiteFiles() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads")) {
    if (e.path().extension() == ".tf") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The default program of the workload file `path`, shrunk to about
// `elements` elements.
inline ir::PrimFunc ShrunkDefault(const std::string& path, double elements = 6e4) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto w = ShrinkWorkload(text, path, {}, elements);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok());
  return *f;
}

inline void ExpectSameAsDefault(const ir::PrimFunc& reference, const ir::PrimFunc& scheduled, bool jit) {
  std::mt19937_64 rng(3);
  std::vector<HostBuffer> ref, got;
  for (size_t i = 0; i < reference.params.size(); ++i) {
    ref.push_back(HostBuffer::Like(reference.params[i]));
    if (i < reference.num_inputs) ref.back().FillRandom(rng);
    got.push_back(HostBuffer::Like(reference.params[i]));
    if (i < reference.num_inputs) std::memcpy(got.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
  }
  std::vector<HostBuffer*> rp, gp;
  std::vector<void*> raw;
  for (auto& b : ref) rp.push_back(&b);
  for (auto& b : got) {
    gp.push_back(&b);
    raw.push_back(b.data());
  }
  ASSERT_TRUE(Interpret(reference, rp).ok());
  if (jit) {
    // Through the prepacked call when constant inputs are packed ahead (as
    // measured), else the whole kernel.
    auto k = JitCompile(scheduled, Target::Host());
    ASSERT_TRUE(k.ok()) << k.status().ToString();
    auto call = PreparedCall::Prepare(**k, scheduled, raw);
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    ASSERT_EQ((*call)->prepacked(), SplitPrepack(scheduled).has_value());
    ASSERT_TRUE((*call)->Run().ok());
  } else {
    Status st = Interpret(scheduled, gp);
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << ir::ToString(scheduled);
  }
  for (size_t i = reference.num_inputs; i < reference.params.size(); ++i) {
    auto cmp = CompareBuffers(got[i], ref[i], 1e-3, 1e-3);
    EXPECT_TRUE(cmp.equal) << reference.name << ": " << cmp.message << "\n" << ir::ToString(scheduled);
  }
}

// The first `n` programs a search under `config` draws from `f`, as trace
// text: a rule that adds no decision to `f` leaves them unchanged.
inline std::vector<std::string> SampleTraces(const ir::PrimFunc& f, const CpuSketchConfig& config, uint64_t seed, int n) {
  auto policy = MakeCpuSketchPolicy(config);
  EvolutionarySearch search(f, policy.get(), SearchOptions{}, seed);
  std::vector<std::string> traces;
  for (int i = 0; i < n; ++i) {
    auto c = search.Sample();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    traces.push_back(c.ok() ? c->trace.ToText() : c.status().ToString());
  }
  return traces;
}

// Parses and lowers an inline workload with shape overrides.
inline ir::PrimFunc LowerWithOverrides(std::string_view text, const std::map<std::string, int64_t>& overrides) {
  ParseOptions options;
  options.param_overrides = overrides;
  auto w = ParseWorkload(text, options);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

// A dense layer with bias and ReLU, weights constant (shapes set by overrides).
inline constexpr std::string_view kDenseLayer = R"(
workload dense(M = 5, N = 17, K = 9) {
  A    = input f32[M, K]
  W    = input const f32[N, K]
  bias = input const f32[N]
  acc[i, j] = sum(k: K) A[i, k] * W[j, k]
  out[i, j] = max(acc[i, j] + bias[j], 0.0)
  output out
}
)";

}  // namespace tunefarm::tuner::testing
