// Expert schedules vs oneDNN and OpenBLAS, in one run, 1 and 2 threads.
//
//   bench/expert/run.sh            (unsets OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE)
//
// Every tunefarm kernel is first checked against oneDNN's output on the same
// random inputs; a wrong kernel is reported, never timed. oneDNN picks its own
// best memory layouts (format "any"); the reorders into them are not timed.
// Figures are GFLOP/s of the median run, and ratios to oneDNN in the same run.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "expert_schedules.h"
#include "bench_timing.h"
#include "host_description.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace tunefarm::bench {
namespace {



struct Row {
  std::string name;
  int threads;
  double gflops;
  double ratio;
};

std::vector<Row> rows;

// `ratio`: oneDNN's time over this implementation's (the median of the
// interleaved rounds' ratios).
void Report(const std::string& name, int threads, double flops, double seconds, double ratio) {
  rows.push_back({name, threads, flops / seconds / 1e9, ratio});
  std::printf("  %-34s %d thr  %8.1f GFLOP/s  %5.2fx oneDNN\n", name.c_str(), threads, flops / seconds / 1e9,
              ratio);
  std::fflush(stdout);
}

Result<std::unique_ptr<JitKernel>> Compile(const std::string& file, const std::function<Result<ir::PrimFunc>(const ir::PrimFunc&)>& schedule,
                                           Workload* w_out, ir::PrimFunc* f_out) {
  TF_ASSIGN_OR_RETURN(Workload w, ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + file));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc scheduled, schedule(f));
  *w_out = w;
  *f_out = scheduled;
  return JitCompile(scheduled, Target::Host());
}

bool Check(const char* what, const HostBuffer& actual, const HostBuffer& expected) {
  CompareResult cmp = CompareBuffers(actual, expected, 1e-3, 1e-3);
  if (!cmp.equal) std::printf("  %s: WRONG RESULT vs oneDNN: %s\n", what, cmp.message.c_str());
  return cmp.equal;
}

int RunGmm(int repeat, int threads) {
  // oneDNN sizes its thread team when a primitive is created: set it first.
  tunefarm_set_num_threads(threads);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  Workload w;
  ir::PrimFunc f;
  auto kernel = Compile("gmm_1024.tf", [](const ir::PrimFunc& f) { return ScheduleGmm(f); }, &w, &f);
  if (!kernel.ok()) {
    std::printf("GMM schedule/compile failed: %s\n", kernel.status().ToString().c_str());
    return 1;
  }
  const int64_t m = 1024, n = 1024, k = 1024;
  HostBuffer a(ir::DataType::Float(32), {m, k}), b(ir::DataType::Float(32), {k, n});
  HostBuffer c(ir::DataType::Float(32), {m, n}), c_ref(ir::DataType::Float(32), {m, n}), c_blas(ir::DataType::Float(32), {m, n});
  std::mt19937_64 rng(1);
  a.FillRandom(rng);
  b.FillRandom(rng);

  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc a_md({m, k}, dt::f32, tag::ab), b_any({k, n}, dt::f32, tag::any), c_md({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_any, c_md), eng);
  dnnl::memory a_mem(a_md, eng, a.data()), c_mem(c_md, eng, c_ref.data());
  dnnl::memory b_user({{k, n}, dt::f32, tag::ab}, eng, b.data());
  dnnl::memory b_mem(pd.weights_desc(), eng);
  dnnl::reorder(b_user, b_mem).execute(strm, b_user, b_mem);  // not timed
  dnnl::matmul mm(pd);
  auto run_dnnl = [&] {
    mm.execute(strm, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
    strm.wait();
  };
  // Constant inputs packed once, untimed, like oneDNN's reorder (split_prepack.h).
  auto call = PreparedCall::Prepare(**kernel, f, {a.data(), b.data(), c.data()});
  if (!call.ok()) {
    std::printf("GMM prepack failed: %s\n", call.status().ToString().c_str());
    return 1;
  }
  auto run_tf = [&] { (void)(*call)->Run(); };
  auto run_blas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, a.as<float>(), int(k), b.as<float>(),
                int(n), 0.0f, c_blas.as<float>(), int(n));
  };
  run_dnnl();
  run_tf();
  run_blas();
  if (!Check("tunefarm GMM", c, c_ref) || !Check("OpenBLAS GMM", c_blas, c_ref)) return 1;
  double flops = w.Flops();
  std::printf("GMM 1024x1024x1024 f32 (%.2f GFLOP), %d thread(s)\n", flops / 1e9, threads);
  {
    InterleavedTimes t = TimeInterleaved({run_dnnl, run_tf, run_blas}, repeat);
    Report("oneDNN matmul", threads, flops, t.Median(0), 1.0);
    Report("tunefarm expert schedule", threads, flops, t.Median(1), t.MedianRatio(0, 1));
    Report("OpenBLAS sgemm", threads, flops, t.Median(2), t.MedianRatio(0, 2));
  }
  return 0;
}

int RunC2d(int repeat, int threads) {
  tunefarm_set_num_threads(threads);
  omp_set_num_threads(threads);
  Workload w;
  ir::PrimFunc f;
  auto kernel = Compile("c2d_resnet_3x3.tf", [](const ir::PrimFunc& f) { return ScheduleC2d(f); }, &w, &f);
  if (!kernel.ok()) {
    std::printf("C2D schedule/compile failed: %s\n", kernel.status().ToString().c_str());
    return 1;
  }
  const int64_t N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3;
  HostBuffer x(ir::DataType::Float(32), {N, C, H, W}), wt(ir::DataType::Float(32), {K, C, R, S});
  HostBuffer out(ir::DataType::Float(32), {N, K, H, W}), out_ref(ir::DataType::Float(32), {N, K, H, W});
  std::mt19937_64 rng(2);
  x.FillRandom(rng);
  wt.FillRandom(rng);

  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc src_any({N, C, H, W}, dt::f32, tag::any), wei_any({K, C, R, S}, dt::f32, tag::any),
      dst_any({N, K, H, W}, dt::f32, tag::any);
  dnnl::convolution_forward::primitive_desc pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wei_any,
                                      dst_any, {1, 1}, {1, 1}, {1, 1}),
      eng);
  dnnl::memory src_user({{N, C, H, W}, dt::f32, tag::nchw}, eng, x.data());
  dnnl::memory wei_user({{K, C, R, S}, dt::f32, tag::oihw}, eng, wt.data());
  dnnl::memory dst_user({{N, K, H, W}, dt::f32, tag::nchw}, eng, out_ref.data());
  dnnl::memory src_mem(pd.src_desc(), eng), wei_mem(pd.weights_desc(), eng), dst_mem(pd.dst_desc(), eng);
  dnnl::reorder(src_user, src_mem).execute(strm, src_user, src_mem);  // layout changes: not timed
  dnnl::reorder(wei_user, wei_mem).execute(strm, wei_user, wei_mem);
  dnnl::convolution_forward conv(pd);
  auto run_dnnl = [&] {
    conv.execute(strm, {{DNNL_ARG_SRC, src_mem}, {DNNL_ARG_WEIGHTS, wei_mem}, {DNNL_ARG_DST, dst_mem}});
    strm.wait();
  };
  run_dnnl();
  dnnl::reorder(dst_mem, dst_user).execute(strm, dst_mem, dst_user);
  strm.wait();
  // The weights are constant: packed once, untimed, like oneDNN's reorder.
  auto call = PreparedCall::Prepare(**kernel, f, {x.data(), wt.data(), out.data()});
  if (!call.ok()) {
    std::printf("C2D prepack failed: %s\n", call.status().ToString().c_str());
    return 1;
  }
  auto run_tf = [&] { (void)(*call)->Run(); };
  run_tf();
  if (!Check("tunefarm C2D", out, out_ref)) return 1;
  double flops = w.Flops();
  std::printf("C2D 3x3 C=64 56x56 K=64 pad 1 f32 (%.3f GFLOP), %d thread(s)\n", flops / 1e9, threads);
  {
    InterleavedTimes t = TimeInterleaved({run_dnnl, run_tf}, repeat);
    Report("oneDNN convolution (best layout)", threads, flops, t.Median(0), 1.0);
    Report("tunefarm expert schedule (NCHW)", threads, flops, t.Median(1), t.MedianRatio(0, 1));
  }
  return 0;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) {
  int repeat = argc > 1 ? std::max(3, std::atoi(argv[1])) : 7;
  std::printf("host: %s\n", tunefarm::bench::HostDescription().c_str());
  int rc = 0;
  for (int threads : {1, 2}) rc |= tunefarm::bench::RunGmm(repeat, threads);
  for (int threads : {1, 2}) rc |= tunefarm::bench::RunC2d(repeat, threads);
  std::printf("\n| workload | implementation | threads | GFLOP/s | vs oneDNN |\n|---|---|---|---|---|\n");
  for (const auto& r : tunefarm::bench::rows) {
    std::printf("| | %s | %d | %.1f | %.2fx |\n", r.name.c_str(), r.threads, r.gflops, r.ratio);
  }
  return rc;
}
