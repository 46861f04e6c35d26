// The ARM board fingerprint of the machine it runs on, as key=value lines:
// what board_fingerprint_qemu_test.cpp runs under qemu-aarch64. It links
// nothing but worker/board_fingerprint*.cpp and common/{status,quote}.cpp, so
// it cross-compiles statically with aarch64-linux-gnu-g++ alone, as the lean
// arm64 worker will (tests/CMakeLists.txt, "ARM board fingerprint" block).
//
// Usage: board_probe [--emulated REASON]
// Prints machine, kernel, cores, hwcap, hwcap2, core_type (one line each),
// mcpu, mcpu_known, mcpu_note, features, target, sve_bits, emulated, emulation_reason,
// device_key_suffix, fingerprint_arch and describe. Exit status 0, or 1 with
// the error on stderr when the board cannot be read.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include "tunefarm/worker/board_fingerprint.h"

int main(int argc, char** argv) {
  tunefarm::EmulationDeclaration declared;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--emulated") == 0 && i + 1 < argc) {
      declared.emulated = true;
      declared.reason = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--emulated REASON]\n", argv[0]);
      return 2;
    }
  }
  auto board = tunefarm::ReadThisArmBoard(declared);
  if (!board.ok()) {
    std::fprintf(stderr, "board_probe: %s\n", board.status().ToString().c_str());
    return 1;
  }
  std::string features;
  for (const std::string& f : board->features) features += (features.empty() ? "" : ",") + f;
  std::printf("machine=%s\nkernel=%s\ncores=%" PRId64 "\nhwcap=0x%" PRIx64 "\nhwcap2=0x%" PRIx64 "\n",
              board->machine.c_str(), board->kernel_release.c_str(), board->cores, board->hwcap, board->hwcap2);
  for (const auto& core : board->core_types) {
    std::printf("core_type=0x%02x 0x%03x r%up%u x%" PRId64 " %s (%s)\n", core.implementer, core.part, core.variant,
                core.revision, core.count, core.name.c_str(), core.mcpu.c_str());
  }
  std::printf("mcpu=%s\nmcpu_known=%d\nmcpu_note=%s\nfeatures=%s\ntarget=%s\nsve_bits=%d\n", board->mcpu.c_str(),
              board->mcpu_known ? 1 : 0, board->mcpu_note.c_str(), features.c_str(), board->target.c_str(),
              board->sve_bits);
  std::printf("emulated=%d\nemulation_reason=%s\ndevice_key_suffix=%s\nfingerprint_arch=%s\ndescribe=%s\n",
              board->emulated ? 1 : 0, board->emulation_reason.c_str(), tunefarm::DeviceKeySuffix(*board).c_str(),
              tunefarm::ToHardwareFingerprint(*board, "none").arch.c_str(),
              tunefarm::DescribeArmBoard(*board).c_str());
  return 0;
}
