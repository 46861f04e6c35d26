// The board fingerprint where the lean arm64 worker runs in CI: under
// qemu-aarch64 on this x86 machine. tests/worker/aarch64_probe/board_probe.cc,
// compiled statically with aarch64-linux-gnu-g++ from the fingerprint's own
// sources (tests/CMakeLists.txt, "ARM board fingerprint" block), reads this
// machine as ReadThisArmBoard does and prints it; it must say aarch64 and
// emulated, with its reason.
//
// The cross compiler and qemu-aarch64 are required (scripts/setup.sh installs
// both): without them these tests fail, naming what is missing.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

struct ProbeRun {
  int exit_status = -1;
  std::string output;
  std::map<std::string, std::string> values;  // key=value lines (the last of a key)
  std::string core_types;                     // every core_type line
};

::testing::AssertionResult ProbeAvailable() {
  if (std::string(TUNEFARM_BOARD_PROBE).empty()) {
    return ::testing::AssertionFailure() << "aarch64-linux-gnu-g++ was not found when tunefarm was configured: "
                                            "install g++-aarch64-linux-gnu (scripts/setup.sh) and configure again";
  }
  if (std::string(TUNEFARM_BOARD_PROBE_QEMU).empty()) {
    return ::testing::AssertionFailure() << "qemu-aarch64 was not found when tunefarm was configured: "
                                            "install qemu-user (scripts/setup.sh) and configure again";
  }
  if (!std::filesystem::exists(TUNEFARM_BOARD_PROBE)) {
    return ::testing::AssertionFailure() << TUNEFARM_BOARD_PROBE << " was not built";
  }
  return ::testing::AssertionSuccess();
}

// Runs the probe under qemu with `qemu_args` before it and `probe_args` after it.
ProbeRun RunProbe(const std::string& qemu_args, const std::string& probe_args) {
  std::string command = "'" + std::string(TUNEFARM_BOARD_PROBE_QEMU) + "' " + qemu_args + " '" +
                        TUNEFARM_BOARD_PROBE + "' " + probe_args + " 2>&1";
  ProbeRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) run.output.append(buf, n);
  int status = pclose(pipe);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream lines(run.output);
  std::string line;
  while (std::getline(lines, line)) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    run.values[line.substr(0, eq)] = line.substr(eq + 1);
    if (line.substr(0, eq) == "core_type") run.core_types += line.substr(eq + 1) + "\n";
  }
  return run;
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The host's first "vendor_id" value, or "" (what qemu-user passes through).
std::string HostVendorId() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("vendor_id", 0) == 0 && line.find(':') != std::string::npos) {
      std::string value = line.substr(line.find(':') + 1);
      return value.substr(value.find_first_not_of(" \t"));
    }
  }
  return "";
}

TEST(BoardFingerprintQemu, DefaultCpuIsAarch64AndEmulated) {
  ASSERT_TRUE(ProbeAvailable());
  ProbeRun run = RunProbe("", "");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_EQ(run.values["machine"], "aarch64") << run.output;
  EXPECT_EQ(run.values["emulated"], "1") << run.output;
  const std::string& reason = run.values["emulation_reason"];
  // qemu 7.2 passes the host's /proc/cpuinfo through; a qemu that printed
  // one for its "max" CPU would show implementer 0x00. Either is a signal.
  EXPECT_TRUE(Contains(reason, "no 'CPU implementer' line") || Contains(reason, "implementer 0x00")) << run.output;
  std::string vendor = HostVendorId();
  if (Contains(reason, "no 'CPU implementer' line") && !vendor.empty()) {
    EXPECT_TRUE(Contains(reason, "vendor_id '" + vendor + "'")) << run.output;
  }
  EXPECT_EQ(run.values["device_key_suffix"], "-emulated");
  EXPECT_EQ(run.values["fingerprint_arch"], run.values["mcpu"] + "-emulated");
  EXPECT_TRUE(Contains(run.values["target"], "llvm -mtriple=aarch64-linux-gnu -mcpu=")) << run.output;
  EXPECT_TRUE(Contains(run.values["features"], "+neon")) << run.output;
  EXPECT_NE(run.values["cores"], "0");
}

TEST(BoardFingerprintQemu, NamedCpuGivesItsMcpuAndFeaturesButStaysEmulated) {
  ASSERT_TRUE(ProbeAvailable());
  ProbeRun a72 = RunProbe("-cpu cortex-a72", "");
  ASSERT_EQ(a72.exit_status, 0) << a72.output;
  EXPECT_EQ(a72.values["emulated"], "1") << a72.output;
  EXPECT_EQ(a72.values["mcpu"], "cortex-a72") << a72.output;
  EXPECT_TRUE(Contains(a72.core_types, "0x41 0xd08 ")) << a72.output;
  EXPECT_EQ(a72.values["features"], "+neon,-bf16,-dotprod,-fullfp16,-i8mm,-sve,-sve2") << a72.output;
  EXPECT_EQ(a72.values["fingerprint_arch"], "cortex-a72-emulated");

  ProbeRun n1 = RunProbe("-cpu neoverse-n1", "");
  ASSERT_EQ(n1.exit_status, 0) << n1.output;
  EXPECT_EQ(n1.values["emulated"], "1") << n1.output;
  EXPECT_EQ(n1.values["mcpu"], "neoverse-n1") << n1.output;
  EXPECT_EQ(n1.values["features"], "+dotprod,+fullfp16,+neon,-bf16,-i8mm,-sve,-sve2") << n1.output;
}

// qemu's max CPU has SVE; the length a process runs with is the target's.
TEST(BoardFingerprintQemu, TheSveLengthThisProcessRunsWithIsTheTargets) {
  ASSERT_TRUE(ProbeAvailable());
  for (int bytes : {16, 32, 64}) {
    ProbeRun run = RunProbe("-cpu max,sve-default-vector-length=" + std::to_string(bytes), "");
    ASSERT_EQ(run.exit_status, 0) << run.output;
    EXPECT_EQ(run.values["sve_bits"], std::to_string(bytes * 8)) << run.output;
    EXPECT_TRUE(Contains(run.values["target"], " -sve-bits=" + std::to_string(bytes * 8))) << run.output;
  }
  ProbeRun a72 = RunProbe("-cpu cortex-a72", "");
  ASSERT_EQ(a72.exit_status, 0) << a72.output;
  EXPECT_EQ(a72.values["sve_bits"], "0") << a72.output;
  EXPECT_FALSE(Contains(a72.values["target"], "-sve-bits")) << a72.output;
}

TEST(BoardFingerprintQemu, TheCallersDeclarationIsAddedToTheSignals) {
  ASSERT_TRUE(ProbeAvailable());
  ProbeRun run = RunProbe("", "--emulated 'ci: qemu-user'");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_EQ(run.values["emulated"], "1");
  EXPECT_TRUE(Contains(run.values["emulation_reason"], "; declared emulated by the caller: ci: qemu-user"))
      << run.output;
}

}  // namespace
