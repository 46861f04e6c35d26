// Running kernel objects for AArch64 under qemu-aarch64 with
// object_loader_driver (object_loader_driver.cc, cross-compiled statically
// from the runtime's sources by object_loader_driver.cmake, which defines
// TUNEFARM_AARCH64_DRIVER and TUNEFARM_QEMU_AARCH64 for the test binaries
// that include this): a scratch folder for the driver's manifest, objects and
// buffers, and the run. Used by the loader's own AArch64 tests and by the
// NEON sketch rules' (tests/tuner).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/lower/split_prepack.h"

namespace tunefarm::testing {

inline constexpr const char* kAArch64 = "llvm -mtriple=aarch64-linux-gnu";

inline ::testing::AssertionResult ToolsPresent() {
  if (std::string(TUNEFARM_AARCH64_DRIVER).empty()) {
    return ::testing::AssertionFailure() << "aarch64-linux-gnu-g++ was not found when tunefarm was configured: "
                                            "install it (scripts/setup.sh) and configure again";
  }
  if (std::string(TUNEFARM_QEMU_AARCH64).empty()) {
    return ::testing::AssertionFailure() << "qemu-aarch64 was not found when tunefarm was configured: "
                                            "install qemu-user (scripts/setup.sh) and configure again";
  }
  return ::testing::AssertionSuccess();
}

// A scratch folder for one driver run, removed with this object.
class RunDir {
 public:
  RunDir() {
    static int count = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("tunefarm_loader_a64_" + std::to_string(::getpid()) + "_" + std::to_string(count++));
    std::filesystem::create_directories(path_);
  }
  ~RunDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  void Write(const std::string& name, const void* data, size_t bytes) const {
    std::ofstream(path_ / name, std::ios::binary).write(static_cast<const char*>(data), std::streamsize(bytes));
  }
  void Write(const std::string& name, const std::string& text) const { Write(name, text.data(), text.size()); }
  std::string Read(const std::string& name) const {
    std::ifstream in(path_ / name, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  const std::filesystem::path& path() const { return path_; }
  // Runs the driver under qemu on the manifest in `sub` (a folder of this
  // one; its file names are relative to it); its exit status and output.
  // qemu_cpu, when not empty, is qemu's -cpu (e.g. an SVE vector length:
  // "max,sve-default-vector-length=32").
  std::pair<int, std::string> RunDriver(const std::string& sub = "", const std::string& qemu_cpu = "") const {
    const std::filesystem::path dir = sub.empty() ? path_ : path_ / sub;
    std::string cpu = qemu_cpu.empty() ? "" : " -cpu '" + qemu_cpu + "'";
    std::string command = "TUNEFARM_NUM_THREADS=3 '" + std::string(TUNEFARM_QEMU_AARCH64) + "'" + cpu + " '" +
                          TUNEFARM_AARCH64_DRIVER + "' '" + dir.string() + "' 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return {-1, "popen failed"};
    std::string output;
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
  }

 private:
  std::filesystem::path path_;
};

// The driver's manifest for running `scheduled` (built from `base`) once:
// its object kernel.o, one buffer per param of `base` read from
// buffer_file(i) ("-": zero-filled), the packed buffers of a prepack split,
// the calls (the split's two entries, else the whole one), and every output
// written to out<i>.
inline std::string KernelRunManifest(const ir::PrimFunc& base, const ir::PrimFunc& scheduled,
                                     const std::function<std::string(size_t)>& buffer_file) {
  std::ostringstream m;
  m << "object kernel.o\n";
  for (size_t i = 0; i < base.params.size(); ++i) {
    m << "buffer " << HostBuffer::Like(base.params[i]).size_bytes() << " " << buffer_file(i) << "\n";
  }
  const size_t params = base.params.size();
  if (std::optional<PrepackSplit> split = SplitPrepack(scheduled)) {
    for (const ir::Buffer& b : split->packed) m << "buffer " << HostBuffer::Like(b).size_bytes() << " -\n";
    m << "call " << split->prepack.name << "_packed";
    for (size_t i : split->constant_params) m << " " << i;
    for (size_t i = 0; i < split->packed.size(); ++i) m << " " << params + i;
    m << "\ncall " << split->prepacked.name << "_packed";
    for (size_t i = 0; i < params + split->packed.size(); ++i) m << " " << i;
  } else {
    m << "call " << scheduled.name << "_packed";
    for (size_t i = 0; i < params; ++i) m << " " << i;
  }
  m << "\n";
  for (size_t i = base.num_inputs; i < params; ++i) m << "output " << i << " out" << i << "\n";
  return m.str();
}

}  // namespace tunefarm::testing
