// The math functions' inline forms (codegen_llvm_math.h) against the C
// library called once per lane (CodegenOptions::inline_math off, what the
// code generator emitted before), each over 1M floats in a loop vectorized at
// 16 lanes, one thread, in the same process; beside them oneDNN's eltwise
// primitive for the functions it has (gelu_erf, exp, tanh, logistic, log),
// also one thread. GELU is BERT's feed-forward epilogue in its erf form.
//
//   build/bench/math/tunefarm_math_bench [repeats]
//
// Prints each kernel's ns per element and the median over interleaved
// rounds of libm's time over the inline form's (the speedup), and of
// oneDNN's over the inline form's. The figures move with the host and its
// load: on a shared machine, read the ratios, not the times. "ULP" is the
// largest difference of the two forms' results; GELU's negative tail cancels
// (1 + erf(x / sqrt 2) for x < -3), so there one ULP of erf is many of the
// result, in either form. Last, each form's JIT compile time (the fastest
// of three).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "host_description.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

#ifdef TUNEFARM_HAVE_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace tunefarm::bench {
namespace {

constexpr int64_t kElements = 1 << 20;
constexpr int64_t kLanes = 16;

struct Function {
  std::string name;
  std::string body;    // out[i] = <body>, of X[i]
  float lo, hi;        // inputs drawn uniformly from [lo, hi]
  const char* onednn;  // oneDNN's eltwise algorithm, or null
};

std::vector<Function> Functions() {
  return {{"gelu_erf", "0.5 * X[i] * (1.0 + erf(X[i] * 0.7071067811865476))", -5, 5, "gelu_erf"},
          {"erf", "erf(X[i])", -5, 5, nullptr},
          {"tanh", "tanh(X[i])", -5, 5, "tanh"},
          {"exp", "exp(X[i])", -10, 10, "exp"},
          {"sigmoid", "sigmoid(X[i])", -10, 10, "logistic"},
          {"log", "log(X[i])", 0.001f, 100, "log"},
          {"pow", "pow(X[i], 2.5)", 0.001f, 100, nullptr}};
}

// The function over kElements floats, its loop split by 16 and vectorized.
Result<ir::PrimFunc> Kernel(const Function& fn) {
  std::string text = "workload math_" + fn.name + "(N = " + std::to_string(kElements) +
                     ") {\n  X = input f32[N]\n  out[i] = " + fn.body + "\n  output out\n}\n";
  TF_ASSIGN_OR_RETURN(Workload w, ParseWorkload(text));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  Schedule sch(f);
  TF_ASSIGN_OR_RETURN(BlockRV out, sch.GetBlock("out"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(out));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> split, sch.Split(loops.back(), {-1, kLanes}));
  TF_RETURN_IF_ERROR(sch.Vectorize(split.back()));
  return sch.func();
}

#ifdef TUNEFARM_HAVE_ONEDNN
// oneDNN's eltwise forward (inference) over the same buffers, or null.
std::function<void()> OneDnnEltwise(const std::string& wanted, float* x, float* out) {
  using dnnl::algorithm;
  const std::pair<const char*, algorithm> known[] = {{"gelu_erf", algorithm::eltwise_gelu_erf},
                                                     {"tanh", algorithm::eltwise_tanh},
                                                     {"exp", algorithm::eltwise_exp},
                                                     {"logistic", algorithm::eltwise_logistic},
                                                     {"log", algorithm::eltwise_log}};
  for (const auto& [name, alg] : known) {
    if (name != wanted) continue;
    auto eng = std::make_shared<dnnl::engine>(dnnl::engine::kind::cpu, 0);
    auto strm = std::make_shared<dnnl::stream>(*eng);
    dnnl::memory::desc md({kElements}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, alg, md, 0.0f, 0.0f);
    dnnl::eltwise_forward prim(dnnl::eltwise_forward::primitive_desc(desc, *eng));
    dnnl::memory src(md, *eng, x), dst(md, *eng, out);
    return [eng, strm, prim, src, dst]() {
      prim.execute(*strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      strm->wait();
    };
  }
  return nullptr;
}
#endif

// The largest distance in ULP between a[i] and b[i] (-1 where only one is NaN).
int64_t MaxUlpDistance(const std::vector<float>& a, const std::vector<float>& b) {
  auto key = [](float f) {
    int32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return bits < 0 ? -int64_t(bits & 0x7fffffff) : int64_t(bits);
  };
  int64_t worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) return -1;
      continue;
    }
    worst = std::max(worst, std::abs(key(a[i]) - key(b[i])));
  }
  return worst;
}

Status TimeFunction(const Function& fn, int repeat) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, Kernel(fn));
  CodegenOptions libm_options;
  libm_options.inline_math = false;
  // Each form compiled three times, alternately; the fastest of each.
  std::unique_ptr<JitKernel> libm_kernel, inline_kernel;
  double compile_ms[2] = {1e9, 1e9};
  for (int round = 0; round < 3; ++round) {
    for (int form = 0; form < 2; ++form) {
      auto start = std::chrono::steady_clock::now();
      TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> k,
                          JitCompile(f, Target::Host(), form == 0 ? libm_options : CodegenOptions()));
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      compile_ms[form] = std::min(compile_ms[form], ms);
      (form == 0 ? libm_kernel : inline_kernel) = std::move(k);
    }
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(fn.lo, fn.hi);
  std::vector<float> x(kElements), out_inline(kElements), out_libm(kElements), out_onednn(kElements);
  for (float& v : x) v = dist(rng);
  std::vector<std::function<void()>> runs = {
      [&] { (void)libm_kernel->Run({x.data(), out_libm.data()}); },
      [&] { (void)inline_kernel->Run({x.data(), out_inline.data()}); }};
  std::function<void()> onednn;
#ifdef TUNEFARM_HAVE_ONEDNN
  if (fn.onednn != nullptr) onednn = OneDnnEltwise(fn.onednn, x.data(), out_onednn.data());
#endif
  if (onednn) runs.push_back(onednn);
  InterleavedTimes t = TimeInterleaved(runs, repeat);
  const double ns = 1e9 / double(kElements);
  std::printf("%-9s %8.3f %8.3f %7.2fx", fn.name.c_str(), t.Median(0) * ns, t.Median(1) * ns, t.MedianRatio(0, 1));
  if (onednn) {
    std::printf(" %8.3f %7.2fx", t.Median(2) * ns, t.MedianRatio(2, 1));
  } else {
    std::printf(" %8s %8s", "-", "-");
  }
  std::printf(" %6lld   %5.1f %5.1f\n", static_cast<long long>(MaxUlpDistance(out_inline, out_libm)), compile_ms[0],
              compile_ms[1]);
  return Status::OK();
}

int Run(int repeat) {
  std::printf("host: %s\n", HostDescription().c_str());
  std::printf("1 thread, %lld floats, loop vectorized at %lld lanes; ns per element, speedups as medians of "
              "interleaved rounds' ratios (%d rounds)\n",
              static_cast<long long>(kElements), static_cast<long long>(kLanes), repeat);
  std::printf("%-9s %8s %8s %8s %8s %8s %6s   %s\n", "function", "libm", "inline", "speedup", "oneDNN", "oDNN/inl",
              "ULP", "compile ms libm, inline");
  tunefarm_set_num_threads(1);
#ifdef TUNEFARM_HAVE_ONEDNN
  omp_set_num_threads(1);
#endif
  int rc = 0;
  for (const Function& fn : Functions()) {
    Status s = TimeFunction(fn, repeat);
    if (!s.ok()) {
      std::printf("%s: %s\n", fn.name.c_str(), s.ToString().c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) { return tunefarm::bench::Run(argc > 1 ? std::max(3, std::atoi(argv[1])) : 9); }
