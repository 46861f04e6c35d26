// What a caller's buffer alignment costs a tunefarm kernel: the expert GMM
// 1024 and C2D schedules (the vectorized, packed kernels tuning finds) and the
// default schedule of a MobileNet-V2 stride-2 depthwise layer, each called
// with every buffer 0, 4 and 16 bytes past a 64-byte boundary (numpy and
// malloc give 16, a slice of an array 4), timed in interleaved rounds.
//
//   build/bench/expert/tunefarm_alignment_bench [repeats]
//
// Generated kernels promise LLVM no alignment of their parameters, so every
// offset runs the same code; the figures are each offset's time over the
// aligned call's (the median of the rounds' ratios) -- what a misaligned
// buffer costs in cache-line splits, not a different code path.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "expert_schedules.h"
#include "host_description.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm::bench {
namespace {

constexpr std::string_view kDepthwiseStride2 = R"(
workload mobilenet_v2_dw_s2(N = 1, C = 96, H = 112, W = 112, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[c, r, s]
  output out
}
)";

constexpr size_t kOffsets[] = {0, 4, 16};

// One copy of every param, `offset` bytes past a 64-byte boundary.
struct OffsetArgs {
  std::vector<std::unique_ptr<char, decltype(&std::free)>> blocks;
  std::vector<void*> pointers;
};

OffsetArgs MakeArgs(const ir::PrimFunc& f, size_t offset, uint64_t seed) {
  OffsetArgs args;
  std::mt19937_64 rng(seed);
  for (const ir::Buffer& param : f.params) {
    HostBuffer values = HostBuffer::Like(param);
    values.FillRandom(rng);
    size_t bytes = size_t(values.size_bytes());
    char* block = static_cast<char*>(std::aligned_alloc(64, (bytes + offset + 63) / 64 * 64));
    std::memcpy(block + offset, values.data(), bytes);
    args.blocks.emplace_back(block, &std::free);
    args.pointers.push_back(block + offset);
  }
  return args;
}

Status TimeOffsets(const std::string& name, const ir::PrimFunc& f, int repeat) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<JitKernel> kernel, JitCompile(f, Target::Host()));
  std::vector<OffsetArgs> args;
  std::vector<std::unique_ptr<PreparedCall>> calls;
  std::vector<std::function<void()>> runs;
  for (size_t offset : kOffsets) {
    args.push_back(MakeArgs(f, offset, 7));
    // Constant inputs packed once, untimed, into a buffer of the kernel's own.
    TF_ASSIGN_OR_RETURN(std::unique_ptr<PreparedCall> call, PreparedCall::Prepare(*kernel, f, args.back().pointers));
    calls.push_back(std::move(call));
    PreparedCall* raw = calls.back().get();
    runs.push_back([raw] { (void)raw->Run(); });
  }
  InterleavedTimes t = TimeInterleaved(runs, repeat);
  std::printf("  %-28s aligned %8.3f ms", name.c_str(), t.Median(0) * 1e3);
  for (size_t i = 1; i < runs.size(); ++i) {
    std::printf("   +%zu B: %.3fx", kOffsets[i], 1.0 / t.MedianRatio(0, i));
  }
  std::printf("\n");
  return Status::OK();
}

Result<ir::PrimFunc> SuiteSchedule(const std::string& file,
                                   const std::function<Result<ir::PrimFunc>(const ir::PrimFunc&)>& schedule) {
  TF_ASSIGN_OR_RETURN(Workload w, ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + file));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(w));
  return schedule(f);
}

int Run(int repeat) {
  std::printf("host: %s\n", HostDescription().c_str());
  std::printf("time per call with every buffer at +0 B (aligned), and each offset's time over it:\n");
  auto gmm = SuiteSchedule("gmm_1024.tf", [](const ir::PrimFunc& f) { return ScheduleGmm(f); });
  auto c2d = SuiteSchedule("c2d_resnet_3x3.tf", [](const ir::PrimFunc& f) { return ScheduleC2d(f); });
  auto dw = ParseWorkload(kDepthwiseStride2);
  if (!gmm.ok() || !c2d.ok() || !dw.ok()) {
    std::printf("scheduling failed\n");
    return 1;
  }
  auto dw_default = LowerToPrimFunc(*dw);
  if (!dw_default.ok()) return 1;
  int rc = 0;
  for (int threads : {1, 2}) {
    tunefarm_set_num_threads(threads);
    std::printf("%d thread(s)\n", threads);
    for (const auto& [name, f] : {std::pair<std::string, const ir::PrimFunc*>{"GMM 1024 expert", &*gmm},
                                  {"C2D 3x3 expert", &*c2d},
                                  {"depthwise s2 default", &*dw_default}}) {
      Status st = TimeOffsets(name, *f, repeat);
      if (!st.ok()) {
        std::printf("  %s: %s\n", name.c_str(), st.ToString().c_str());
        rc = 1;
      }
    }
  }
  return rc;
}

}  // namespace
}  // namespace tunefarm::bench

int main(int argc, char** argv) { return tunefarm::bench::Run(argc > 1 ? std::max(3, std::atoi(argv[1])) : 9); }
