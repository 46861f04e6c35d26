// ReadThisArmBoard (board_fingerprint.h): the sources of ParseArmBoard, read
// from this machine. Only an aarch64 Linux build has them; elsewhere it says
// so rather than describing the build host as an ARM board.
#include <fstream>
#include <sstream>

#include "tunefarm/worker/board_fingerprint.h"

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>  // the aarch64 kernel's uapi header: checks arm_hwcap's numbers
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

static_assert(tunefarm::arm_hwcap::kFp == HWCAP_FP);
static_assert(tunefarm::arm_hwcap::kAsimd == HWCAP_ASIMD);
static_assert(tunefarm::arm_hwcap::kEvtstrm == HWCAP_EVTSTRM);
static_assert(tunefarm::arm_hwcap::kFphp == HWCAP_FPHP);
static_assert(tunefarm::arm_hwcap::kAsimdhp == HWCAP_ASIMDHP);
static_assert(tunefarm::arm_hwcap::kCpuid == HWCAP_CPUID);
static_assert(tunefarm::arm_hwcap::kAsimddp == HWCAP_ASIMDDP);
static_assert(tunefarm::arm_hwcap::kSve == HWCAP_SVE);
static_assert(tunefarm::arm_hwcap2::kSve2 == HWCAP2_SVE2);
static_assert(tunefarm::arm_hwcap2::kI8mm == HWCAP2_I8MM);
static_assert(tunefarm::arm_hwcap2::kBf16 == HWCAP2_BF16);
#endif

namespace tunefarm {

#if defined(__aarch64__) && defined(__linux__)

Result<ArmBoard> ReadThisArmBoard(const EmulationDeclaration& declared) {
  ArmBoardSources sources;
  std::ifstream cpuinfo("/proc/cpuinfo");
  if (!cpuinfo) return Status::IOError("cannot read /proc/cpuinfo");
  std::ostringstream text;
  text << cpuinfo.rdbuf();
  sources.proc_cpuinfo = text.str();

  sources.hwcap = getauxval(AT_HWCAP);
  sources.hwcap2 = getauxval(AT_HWCAP2);
  struct utsname names {};
  if (uname(&names) != 0) return Status::IOError("uname failed");
  sources.kernel_release = names.release;
  sources.machine = names.machine;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  sources.online_cores = online > 0 ? online : 0;

  // Without "cpuid" in HWCAP the kernel does not trap MRS of ID registers for
  // user space, and the instruction is undefined: read MIDR_EL1 only with it.
  if ((sources.hwcap & arm_hwcap::kCpuid) != 0) {
    uint64_t midr = 0;
    asm volatile("mrs %0, MIDR_EL1" : "=r"(midr));
    sources.midr_el1 = midr;
  }
  // The length this process's SVE code runs with: the kernel's default for
  // new processes (/proc/sys/abi/sve_default_vector_length), which a kernel
  // may set below what the cores support.
  if ((sources.hwcap & arm_hwcap::kSve) != 0) {
    int vl = prctl(PR_SVE_GET_VL);
    if (vl > 0) sources.sve_vector_bytes = vl & PR_SVE_VL_LEN_MASK;
  }
  return ParseArmBoard(sources, declared);
}

#else

Result<ArmBoard> ReadThisArmBoard(const EmulationDeclaration& /*declared*/) {
  return Status::Unimplemented(
      "this tunefarm was not built for aarch64 Linux: the ARM board fingerprint reads /proc/cpuinfo, "
      "getauxval(AT_HWCAP) and MIDR_EL1 of an arm64 kernel (build the worker with aarch64-linux-gnu-g++)");
}

#endif

}  // namespace tunefarm
