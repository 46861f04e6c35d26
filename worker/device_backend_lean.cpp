// The device backends of the lean board worker, `tunefarm-worker`
// (device_backend.h; TUNEFARM_LEAN_WORKER builds this file in place of
// device_backend.cpp). It has no code generator and no GPU: its CPU backend
// measures objects the tuner built for it, and describes the machine with
// the board fingerprint (board_fingerprint.h) on an ARM board, or with
// Target::Host()'s text-only view elsewhere.
#include <cstdio>

#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/worker/board_fingerprint.h"
#include "tunefarm/worker/device_backend.h"
#include "tunefarm/worker/fleet_worker.h"
#include "tunefarm/worker/local_measurer.h"

namespace tunefarm {

namespace {

// The toolchain this worker reports: it builds nothing, so the code it times
// is the daemon's (which records its own toolchain for candidates it builds,
// daemon/job_manager.cpp); the lowering revision still says which lowering
// the worker's runner replays traces with.
std::string LeanToolchain() { return "tuner-built lowering-r" + std::to_string(kLoweringRevision); }

// This machine, read once: the ARM board, or nothing off aarch64 Linux (the
// reader says Unimplemented there) or when it cannot be read.
const Result<ArmBoard>& Board() {
  static const Result<ArmBoard> board = [] {
    Result<ArmBoard> b = ReadThisArmBoard();
    if (!b.ok() && b.status().code() != StatusCode::kUnimplemented) {
      std::fprintf(stderr, "tunefarm-worker: the board cannot be read (%s); describing it as %s\n",
                   b.status().ToString().c_str(), Target::Host().ToString().c_str());
    }
    return b;
  }();
  return board;
}

// The target this worker runs, in canonical text: the board's, else the host's.
std::string HostTargetText() {
  if (Board().ok()) {
    auto target = Target::Parse(Board()->target);
    if (target.ok()) return target->ToString();
  }
  return Target::Host().ToString();
}

DeviceBackend CpuBackend() {
  DeviceBackend b;
  b.name = "cpu";
  b.summary =
      "this machine's CPU: objects the tuner built for its device key, loaded, checked and timed in a runner "
      "process (this worker builds no code)";
  b.runs_runner = true;
  // "cpu-cortex-a72", "cpu-neoverse-v1-sve256", "cpu-generic-sve512-emulated"
  // under qemu: an emulated board's key never names a real board's, nor one
  // SVE length another's.
  b.default_key = [](const std::string&) -> std::string {
    if (Board().ok()) {
      const ArmBoard& board = *Board();
      std::string sve = board.sve_bits > 0 ? "-sve" + std::to_string(board.sve_bits) : "";
      return "cpu-" + board.mcpu + sve + DeviceKeySuffix(board);
    }
    return "cpu-" + Target::Host().cpu;
  };
  b.targets = [](const std::string&) { return std::vector<std::string>{HostTargetText()}; };
  b.toolchain = [](const std::string&) { return LeanToolchain(); };
  b.fingerprint = [](const std::string&) {
    if (Board().ok()) return ToHardwareFingerprint(*Board(), LeanToolchain());
    return HostFingerprint(Target::Host(), LeanToolchain());
  };
  b.make_measurer = [](const FleetWorkerOptions& o) -> Result<std::unique_ptr<Measurer>> {
    LocalMeasurerOptions local = o.local;
    if (local.runner_path.empty()) {
      TF_ASSIGN_OR_RETURN(local.runner_path, FindRunnerPath());
    }
    local.enable_test_faults = local.enable_test_faults || !o.inject_fault.empty();
    return std::unique_ptr<Measurer>(std::make_unique<LocalMeasurer>(local));
  };
  return b;
}

}  // namespace

const std::vector<DeviceBackend>& DeviceBackends() {
  static const std::vector<DeviceBackend> backends = {CpuBackend(), TestDeviceBackend()};
  return backends;
}

}  // namespace tunefarm
