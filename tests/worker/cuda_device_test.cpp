// The CUDA device without a GPU: the driver loader says clearly why there is
// none, device names parse, the fit checks reject what would not launch, the
// default GPU program of a matmul compiles with NVRTC and fits an H100, and a
// runner asked for a GPU it cannot open answers its cuda candidates with why
// (and still measures CPU ones). Tests that need a machine without an NVIDIA
// driver skip on one that has it.
#include <filesystem>

#include "../../worker/cuda_driver.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/worker/cuda_device.h"
#include "tunefarm/worker/cuda_fit.h"
#include "tunefarm/worker/device_backend.h"
#include "tunefarm/worker/fleet_worker.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

bool HasDriver() { return cuda_driver::Driver().ok(); }

// What the driver reports for an H100 SXM (sm_90).
CudaDeviceInfo H100() {
  CudaDeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.total_memory_bytes = int64_t(81559) << 20;
  d.driver_version = 12040;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.l2_bytes = 50 << 20;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647, 65535, 65535};
  d.max_shared_per_block = 48 << 10;
  d.max_shared_per_block_optin = 227 << 10;
  d.max_registers_per_block = 65536;
  d.max_registers_per_sm = 65536;
  return d;
}

TEST(CudaDriverTest, AMissingLibraryIsNoDriverNamingIt) {
  auto driver = cuda_driver::LoadDriver("libcuda-tunefarm-test-missing.so.1");
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(driver.status().message().rfind("no NVIDIA driver (libcuda-tunefarm-test-missing.so.1 not found: ", 0), 0u)
      << driver.status().message();
}

// The toolkit's stub library exports every call (so each name resolves) but
// runs none: cuInit fails, and the message says where.
TEST(CudaDriverTest, TheToolkitStubResolvesEveryCallAndFailsToStart) {
  const std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub at " << stub;
  // The stub's soname is libcuda.so.1: once loaded, the loader would hand it
  // to the process's own Driver() too. Settle that one first.
  (void)cuda_driver::Driver();
  auto driver = cuda_driver::LoadDriver(stub);
  ASSERT_FALSE(driver.ok());
  EXPECT_EQ(driver.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(driver.status().message().find("did not start: cuInit: "), std::string::npos) << driver.status().message();
}

TEST(CudaDriverTest, WithoutADriverEveryQueryIsAClearFailedPrecondition) {
  if (HasDriver()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  for (auto status : {QueryCudaDevice(0).status(), FindCudaDeviceForArch("sm_90").status()}) {
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(status.message().find("no NVIDIA driver (libcuda.so.1 not found: "), std::string::npos)
        << status.message();
  }
}

TEST(CudaDeviceTest, DeviceNamesParse) {
  EXPECT_EQ(*ParseCudaDeviceIndex("cuda"), 0);
  EXPECT_EQ(*ParseCudaDeviceIndex("cuda:0"), 0);
  EXPECT_EQ(*ParseCudaDeviceIndex("cuda:3"), 3);
  for (const char* bad : {"cuda:", "cuda:x", "cuda:-1", "cuda:1x", "gpu", "cpu", "cuda0"}) {
    auto index = ParseCudaDeviceIndex(bad);
    ASSERT_FALSE(index.ok()) << bad;
    EXPECT_NE(index.status().message().find("cuda or cuda:N"), std::string::npos) << index.status().message();
  }
}

TEST(CudaDeviceTest, FingerprintNamesThePartItsClocksAndDriver) {
  CudaDeviceInfo d = H100();
  EXPECT_EQ(d.Arch(), "sm_90");
  EXPECT_EQ(d.TargetText(), "cuda -arch=sm_90");
  EXPECT_EQ(d.DriverText(), "CUDA 12.4");
  HardwareFingerprint f = CudaFingerprint(d, CudaToolchain());
  EXPECT_EQ(f.isa, "cuda");
  EXPECT_EQ(f.arch, "sm_90");
  EXPECT_EQ(f.cores, 132);
  EXPECT_EQ(f.toolchain.rfind("nvrtc lowering-r", 0), 0u) << f.toolchain;
  std::vector<std::string> expected = {"name=NVIDIA_H100_80GB_HBM3", "memory_mib=81559", "sm_clock_mhz=1980",
                                       "memory_clock_mhz=2619", "l2_kib=51200", "driver=CUDA_12.4"};
  EXPECT_EQ(f.features, expected);
  for (const std::string& feature : f.features) EXPECT_EQ(feature.find(','), std::string::npos) << feature;
}

TEST(CudaFitTest, WhatWouldNotLaunchIsRejectedNamingWhy) {
  cuda::CudaModule module;
  cuda::CudaLaunch launch;
  launch.kernel = "k0";
  launch.grid = {128, 1, 1};
  launch.block = {256, 1, 1};
  module.launches = {launch};
  cuda::CudaKernelResources r;
  r.kernel = "k0";
  r.registers = 64;
  r.shared_bytes = 16 << 10;
  const CudaDeviceInfo h100 = H100();
  EXPECT_EQ(CudaModuleDoesNotFit(module, {r}, h100), "");

  auto reason = [&](auto change_launch, auto change_resources) {
    cuda::CudaModule m = module;
    cuda::CudaKernelResources k = r;
    change_launch(m.launches[0]);
    change_resources(k);
    return CudaModuleDoesNotFit(m, {k}, h100);
  };
  auto same_launch = [](cuda::CudaLaunch&) {};
  auto same_resources = [](cuda::CudaKernelResources&) {};
  EXPECT_NE(reason([](cuda::CudaLaunch& l) { l.block = {32, 64, 1}; }, same_resources).find("2048 threads per block"),
            std::string::npos);
  EXPECT_NE(reason([](cuda::CudaLaunch& l) { l.block = {1, 1, 128}; }, same_resources).find("along z"),
            std::string::npos);
  EXPECT_NE(reason([](cuda::CudaLaunch& l) { l.grid = {1, 70000, 1}; }, same_resources).find("grid extent 70000"),
            std::string::npos);
  EXPECT_NE(reason(same_launch, [](cuda::CudaKernelResources& k) { k.spill_bytes = 8; }).find("spills 8 bytes"),
            std::string::npos);
  EXPECT_NE(reason(same_launch, [](cuda::CudaKernelResources& k) { k.shared_bytes = 64 << 10; })
                .find("bytes of shared memory per block"),
            std::string::npos);
  // Dynamic shared memory may use the opt-in limit (227 KiB), not beyond.
  EXPECT_EQ(reason([](cuda::CudaLaunch& l) { l.dynamic_shared_bytes = 100 << 10; }, same_resources), "");
  EXPECT_NE(reason([](cuda::CudaLaunch& l) { l.dynamic_shared_bytes = 220 << 10; }, same_resources)
                .find("shared memory"),
            std::string::npos);
  EXPECT_NE(reason([](cuda::CudaLaunch& l) { l.block = {1024, 1, 1}; },
                   [](cuda::CudaKernelResources& k) { k.registers = 128; })
                .find("128 registers x 1024 threads"),
            std::string::npos);
  // A kernel ptxas did not report is checked at load time instead.
  EXPECT_EQ(reason(same_launch, [](cuda::CudaKernelResources& k) { k.kernel = "other"; }), "");
  EXPECT_EQ(reason([](cuda::CudaLaunch& l) { l.block = {0, 1, 1}; }, same_resources), "kernel k0: a launch with no threads");
}

// What the runner builds for a cuda candidate, short of running it: the
// default GPU program of a matmul, lowered, printed, compiled for sm_90, its
// buffers the function's parameters, and it fits an H100.
TEST(CudaFitTest, TheDefaultGpuProgramOfAMatmulCompilesAndFitsAnH100) {
  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) GTEST_SKIP() << "no NVRTC: " << why_not;
  auto w = ParseWorkload(MatmulText(64, 48, 32));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto func = LowerToPrimFunc(*w);
  ASSERT_TRUE(func.ok()) << func.status().ToString();
  auto scheduled = DefaultGpuSchedule(*func);
  ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
  auto lowered = cuda::LowerForCuda(*scheduled);
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  auto module = cuda::GenerateCuda(*lowered);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  auto compiled = cuda::CompileCudaSource(module->source, "sm_90");
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString() << "\n" << module->source;
  EXPECT_FALSE(compiled->cubin.empty());
  EXPECT_EQ(CudaModuleDoesNotFit(*module, compiled->kernels, H100()), "");
  for (const cuda::CudaLaunch& launch : module->launches) {
    bool reported = false;
    for (const auto& k : compiled->kernels) reported |= k.kernel == launch.kernel;
    EXPECT_TRUE(reported) << launch.kernel << " is not in ptxas' report:\n" << compiled->log;
  }
  // Every parameter is one buffer of its size (the runner copies by it).
  std::vector<int64_t> bytes = {64 * 32 * 4, 32 * 48 * 4, 64 * 48 * 4};
  for (size_t p = 0; p < bytes.size(); ++p) {
    int found = 0;
    for (const cuda::CudaBuffer& b : module->buffers) {
      if (b.param_index == int(p)) {
        ++found;
        EXPECT_EQ(b.bytes(), bytes[p]) << b.name;
      }
    }
    EXPECT_EQ(found, 1) << "parameter " << p;
  }
}

MeasureInput CudaCandidate(std::string id, std::string workload, std::string trace = "") {
  MeasureInput in = Candidate(std::move(id), std::move(workload), std::move(trace));
  in.target = "cuda -arch=sm_90";
  return in;
}

TEST(CudaMeasureTest, ARunnerWithoutItsGpuAnswersCudaCandidatesWithWhyAndStillMeasuresCpuOnes) {
  if (HasDriver()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  LocalMeasurerOptions o = TestMeasurerOptions();
  o.device = "cuda:0";
  LocalMeasurer measurer(o);
  const std::string matmul = MatmulText(16, 16, 16);
  auto results = measurer.Measure(
      {CudaCandidate("gpu", matmul), Candidate("cpu", matmul), CudaCandidate("fault", matmul, FaultTrace("cuda-illegal-address"))},
      FastOptions());
  ASSERT_EQ(results.size(), 3u);
  for (size_t i : {size_t(0), size_t(2)}) {
    EXPECT_EQ(results[i].error, MeasureErrorKind::kInvalidCandidate) << results[i].error_message;
    EXPECT_NE(results[i].error_message.find("device cuda:0 is not usable: no NVIDIA driver (libcuda.so.1 not found: "),
              std::string::npos)
        << results[i].error_message;
  }
  EXPECT_TRUE(Measured(results[1]));
  EXPECT_EQ(measurer.runner_starts(), 1);  // an answer, not a crash
}

TEST(CudaMeasureTest, ACpuRunnerRefusesCudaTargetsAndABadDeviceNameLosesTheBatch) {
  LocalMeasurer cpu(TestMeasurerOptions());
  auto refused = cpu.Measure({CudaCandidate("gpu", MatmulText(8, 8, 8))}, FastOptions());
  EXPECT_EQ(refused[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(refused[0].error_message.find("cannot run on this machine"), std::string::npos) << refused[0].error_message;
  EXPECT_NE(refused[0].error_message.find("device cuda:N"), std::string::npos) << refused[0].error_message;

  LocalMeasurerOptions o = TestMeasurerOptions();
  o.device = "gpu7";
  LocalMeasurer bad(o);
  auto lost = bad.Measure({Candidate("a", MatmulText(8, 8, 8))}, FastOptions());
  EXPECT_EQ(lost[0].error, MeasureErrorKind::kWorkerLost);
  EXPECT_NE(lost[0].error_message.find("device 'gpu7' is not a CUDA device name"), std::string::npos)
      << lost[0].error_message;
  EXPECT_EQ(bad.runner_starts(), 0);
}

TEST(CudaMeasureTest, TheFaultLineIsKnownAndNeedsACudaTarget) {
  LocalMeasurer cpu(TestMeasurerOptions());
  auto results = cpu.Measure({Candidate("x", MatmulText(8, 8, 8), FaultTrace("cuda-illegal-address"))}, FastOptions());
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(results[0].error_message.find("needs a cuda target"), std::string::npos) << results[0].error_message;
}

TEST(CudaBackendTest, CudaDevicesAreFoundByIndexAndAWorkerWithoutAGpuFailsSayingWhy) {
  auto cuda = FindDeviceBackend("cuda");
  ASSERT_TRUE(cuda.ok()) << cuda.status().ToString();
  EXPECT_TRUE((*cuda)->runs_runner);
  EXPECT_FALSE((*cuda)->synthetic);
  EXPECT_EQ(*FindDeviceBackend("cuda:1"), *cuda);
  for (const char* unknown : {"cuda:", "cuda:x", "cuda:-1", "cpu:0", "test:1"}) {
    EXPECT_FALSE(FindDeviceBackend(unknown).ok()) << unknown;
  }
  if (HasDriver()) GTEST_SKIP() << "this machine has an NVIDIA driver";
  EXPECT_EQ(DefaultDeviceKey("cuda:0"), "");  // no key offered without a GPU
  EXPECT_TRUE((*cuda)->targets("cuda:0").empty());
  FleetWorkerOptions o;
  o.tuner_address = "127.0.0.1:1";
  o.security.insecure = true;
  o.device = "cuda:0";
  o.local.runner_path = RunnerPath();
  auto worker = FleetWorker::Create(o);
  ASSERT_FALSE(worker.ok());
  EXPECT_EQ(worker.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(worker.status().message().rfind("device cuda:0: no NVIDIA driver (libcuda.so.1 not found: ", 0), 0u)
      << worker.status().message();
  // The measurer alone fails the same way.
  auto measurer = (*cuda)->make_measurer(o);
  ASSERT_FALSE(measurer.ok());
  EXPECT_NE(measurer.status().message().find("no NVIDIA driver"), std::string::npos) << measurer.status().message();
}

}  // namespace
}  // namespace tunefarm::testing
