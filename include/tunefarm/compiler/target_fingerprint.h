// The hardware fingerprint of this machine running code built for a target:
// the one computation behind both fingerprints that name this machine, which
// must agree so that it has one fingerprint either way:
//  * the tuning log's records of `tunefarm tune` here (tuner::RecordTarget,
//    which then sorts the features, database::CanonicalizeFingerprint);
//  * what a fleet worker on it registers with (worker/fleet_worker_setup.cpp;
//    the daemon sorts the features as it receives them).
#pragma once

#include <string>

#include "tunefarm/common/hardware_fingerprint.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

// isa: the target triple's architecture (what precedes its first '-');
// features: the target's feature string split at ',' in its order, empty
// entries dropped, kept as written ("+avx512f": Target::Host() keeps only
// those that differ from what the CPU name implies, which with `arch` still
// names the exact set); arch: the target's cpu; cores: this machine's
// hardware threads; toolchain: as given (CodegenToolchain() for code this
// build generates, kTestDeviceToolchain for a test device).
HardwareFingerprint HostFingerprint(const Target& target, std::string toolchain);

}  // namespace tunefarm
