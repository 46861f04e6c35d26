// `tunefarm show --target "cuda -arch=sm_90"`: the default GPU program when
// the log has no record, a record's GPU program when it has one, each with
// the IR after LowerForCuda (--lowered), its CUDA C, launches and ptxas'
// report (--asm); --llvm, which a cuda target has no use for, is a user
// error saying what to use instead.
#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"

namespace tunefarm {
namespace {

using cli_test::Output;
using cli_test::RunTunefarm;

constexpr char kCuda[] = " --target 'cuda -arch=sm_90'";

class ShowCudaTest : public cli_test::CliFolderTest {
 protected:
  ShowCudaTest() : CliFolderTest("tunefarm_cli_show_cuda_", 64, 48, 32) {}

  // Logs mm.tf's program bound to blocks of `threads` threads as an sm_90
  // record, as a cuda worker would; its id.
  int64_t LogBoundProgram(int64_t threads) {
    auto w = ParseWorkloadFile(P("mm.tf"));
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    if (!w.ok()) return 0;
    auto f = LowerToPrimFunc(*w);
    EXPECT_TRUE(f.ok());
    Schedule sch(*f);
    EXPECT_TRUE(BindUnboundLoops(sch, threads).ok());
    auto db = database::Database::Open(P("log.db"));
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return 0;
    EXPECT_TRUE((*db)->CommitWorkload({StructuralHashHex(*w), w->name, PrintWorkload(*w)}).ok());
    database::TuningRecord record;
    record.workload_hash = StructuralHashHex(*w);
    record.target.target = "cuda -arch=sm_90";
    record.target.fingerprint.isa = "cuda";
    record.target.fingerprint.arch = "sm_90";
    record.target.fingerprint.cores = 132;
    record.target.fingerprint.toolchain = "nvrtc lowering-r" + std::to_string(kLoweringRevision);
    record.trace = sch.trace().ToText();
    record.run_secs = {1e-5};
    record.worker = "test:gpu-0";
    record.device = "cuda-sm_90";
    auto id = (*db)->CommitRecord(record);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
};

TEST_F(ShowCudaTest, WithoutARecordTheDefaultGpuProgramAsCudaC) {
  Output out = RunTunefarm("show " + P("mm.tf") + kCuda + " --lowered --asm");
  ASSERT_EQ(out.code, 0) << out.text;
  size_t program = out.text.find("# default GPU program (what a cuda worker runs with no record)\nfunc mm(");
  size_t lowered = out.text.find("# after lowering for CUDA\nfunc mm(");
  size_t source = out.text.find("# CUDA C for cuda -arch=sm_90\n");
  size_t launches = out.text.find("# launches, in order\n#   mm_kernel0: grid (12, 1, 1), block (256, 1, 1)\n");
  ASSERT_NE(program, std::string::npos) << out.text;
  EXPECT_NE(out.text.find("thread_binding(\"threadIdx.x\")", program), std::string::npos) << out.text;
  ASSERT_NE(lowered, std::string::npos) << out.text;
  ASSERT_NE(source, std::string::npos) << out.text;
  ASSERT_NE(launches, std::string::npos) << out.text;
  EXPECT_LT(program, lowered);
  EXPECT_LT(lowered, source);
  EXPECT_LT(source, launches);
  EXPECT_NE(out.text.find("__global__ void __launch_bounds__(256) mm_kernel0(", source), std::string::npos) << out.text;
  std::string why_not;
  if (cuda::NvrtcAvailable(&why_not)) {
    EXPECT_NE(out.text.find("# ptxas for sm_90\n#   mm_kernel0: "), std::string::npos) << out.text;
    EXPECT_NE(out.text.find(" registers per thread, 0 bytes spilled, "), std::string::npos) << out.text;
  } else {
    EXPECT_NE(out.text.find("# no ptxas report: NVRTC is not available here"), std::string::npos) << out.text;
  }
  // Without --lowered or --asm the CUDA stages are not printed.
  Output plain = RunTunefarm("show " + P("mm.tf") + kCuda);
  ASSERT_EQ(plain.code, 0) << plain.text;
  EXPECT_EQ(plain.text.find("# CUDA C"), std::string::npos) << plain.text;
}

TEST_F(ShowCudaTest, ARecordIsShownAsTheKernelCompileWouldBuild) {
  int64_t id = LogBoundProgram(128);
  ASSERT_GT(id, 0);
  Output out = RunTunefarm("show " + P("mm.tf") + kCuda + " --db " + P("log.db") + " --asm");
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("# tuned schedule: record #" + std::to_string(id) + " "), std::string::npos) << out.text;
  EXPECT_EQ(out.text.find("# default GPU program"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("__launch_bounds__(128) mm_kernel0("), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("#   mm_kernel0: grid (24, 1, 1), block (128, 1, 1)\n"), std::string::npos) << out.text;
}

TEST_F(ShowCudaTest, LlvmIrForACudaTargetIsAUserError) {
  Output out = RunTunefarm("show " + P("mm.tf") + kCuda + " --llvm");
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("error: --llvm: target 'cuda -arch=sm_90' is compiled as CUDA C, not LLVM IR; --asm prints "
                          "its CUDA C"),
            std::string::npos)
      << out.text;
}

}  // namespace
}  // namespace tunefarm
