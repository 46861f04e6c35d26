// Setting a FleetWorker up: option checks, the measurer for its device, and
// the Register message it sends on every connection (fleet_worker.h).
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <thread>

#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/v1/fleet.pb.h"
#include "tunefarm/worker/board_fingerprint.h"
#include "tunefarm/worker/fleet_worker.h"
#include "tunefarm/worker/device_backend.h"

namespace tunefarm {

namespace {

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "unknown-host";
  return buf;
}

// The device's fingerprint: for the CPU, the one the tuning log's records of
// local tuning on this machine carry too (HostFingerprint), features as
// Target::Host() writes them; for a GPU, its part, clocks and driver
// (CudaFingerprint). The daemon sorts the features as the log keeps them.
v1::HardwareFingerprint Fingerprint(const DeviceBackend& device, const std::string& name) {
  const HardwareFingerprint host = device.fingerprint(name);
  v1::HardwareFingerprint f;
  f.set_isa(host.isa);
  for (const std::string& feature : host.features) f.add_features(feature);
  f.set_arch(host.arch);
  f.set_cores(host.cores);
  f.set_toolchain(host.toolchain);
  return f;
}

// Built once: the fingerprint and host target do not change while running.
std::unique_ptr<v1::WorkerMessage> RegisterMessage(const FleetWorkerOptions& o, const DeviceBackend& device) {
  auto hello = std::make_unique<v1::WorkerMessage>();
  v1::Register* reg = hello->mutable_register_();
  reg->set_device_key(o.device_key);
  reg->set_device(o.device);
  reg->set_hostname(o.hostname);
  *reg->mutable_fingerprint() = Fingerprint(device, o.device);
  reg->set_max_in_flight(o.max_in_flight);
  reg->set_tunefarm_version(TUNEFARM_VERSION);
  for (const std::string& target : device.targets(o.device)) reg->add_targets(target);
  // What its runner replays (instructions, and the keys `annotate` takes), so
  // that the daemon sends it only traces it can build, also while a fleet
  // runs mixed versions.
  for (const std::string& name : ReplayedInstructionNames()) reg->add_trace_instructions(name);
  for (const char* key : ir::kLoopAnnotations) reg->add_loop_annotations(key);
  reg->set_synthetic(device.synthetic);
  // A board under qemu-user says so in its fingerprint (the lean worker's
  // ToHardwareFingerprint puts "-emulated" on the arch when
  // ArmBoard::emulated): every result it sends is then emulated.
  static_assert(kEmulatedSuffix == kEmulatedArchSuffix, "the board's suffix is the one the log recognises");
  reg->set_emulated(IsEmulatedArch(reg->fingerprint().arch()));
  return hello;
}

}  // namespace

std::string DefaultDeviceKey(const std::string& device) {
  auto backend = FindDeviceBackend(device);
  return backend.ok() ? (*backend)->default_key(device) : std::string();
}

bool IsSyntheticDevice(const std::string& device) {
  auto backend = FindDeviceBackend(device);
  return backend.ok() && (*backend)->synthetic;
}

Status CheckTunerAddress(const std::string& address) {
  const std::string example = " (expected HOST:PORT, e.g. 127.0.0.1:7878 or tuner.example.org:7878)";
  if (address.empty()) return Status::InvalidArgument("no tuner address" + example);
  size_t colon = address.rfind(':');
  if (colon == std::string::npos)
    return Status::InvalidArgument("tuner address '" + address + "' has no port" + example);
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty() || (address.front() != '[' && host.find(':') != std::string::npos)) {
    return Status::InvalidArgument("tuner address '" + address + "' has no usable host (IPv6 goes in brackets)" +
                                   example);
  }
  bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    return Status::InvalidArgument("tuner address '" + address + "' has an invalid port '" + port + "'" + example);
  }
  return Status::OK();
}

Result<std::string> RunnerFaultName(const std::string& inject_fault) {
  if (inject_fault == "crash") return std::string("segfault");
  for (const char* name :
       {"segfault", "abort", "hang", "wrong", "hang_build", "crash_build", "cuda-illegal-address"}) {
    if (inject_fault == name) return inject_fault;
  }
  return Status::InvalidArgument(
      "unknown fault '" + inject_fault +
      "' (crash, hang, segfault, abort, wrong, hang_build, crash_build, cuda-illegal-address)");
}

Result<std::unique_ptr<FleetWorker>> FleetWorker::Create(FleetWorkerOptions options) {
  return Create(std::move(options), nullptr);
}

Result<std::unique_ptr<FleetWorker>> FleetWorker::Create(FleetWorkerOptions o, std::unique_ptr<Measurer> measurer) {
  TF_RETURN_IF_ERROR(CheckTunerAddress(o.tuner_address));
  TF_ASSIGN_OR_RETURN(const DeviceBackend* device, FindDeviceBackend(o.device));
  if (o.max_in_flight < 1 || o.max_in_flight > 1024) {
    return Status::InvalidArgument("max in flight must be 1..1024, not " + std::to_string(o.max_in_flight));
  }
  if (o.initial_backoff.count() <= 0 || o.max_backoff < o.initial_backoff) {
    return Status::InvalidArgument("reconnect backoff must be positive, and its maximum at least its start");
  }
  if (o.security.insecure && !rpc::IsLoopbackAddress(o.tuner_address)) {
    return Status::InvalidArgument("plaintext (--insecure) is allowed only to a loopback tuner, not '" +
                                   o.tuner_address + "'; use --ca, --cert and --key");
  }
  if (!o.security.insecure && (o.security.cert.empty() || o.security.key.empty())) {
    return Status::InvalidArgument(
        "over TLS a worker must present a certificate signed by the fleet CA with the worker role "
        "(--cert and --key; URI subjectAltName tunefarm:role=worker), or use --insecure with a loopback tuner");
  }
  // Builds a channel only to read and check the PEM files now, not at the
  // first connection attempt; Run makes a fresh channel per attempt.
  auto channel = rpc::MakeChannel(o.tuner_address, o.security);
  if (!channel.ok()) return channel.status();
  std::string fault;
  if (!o.inject_fault.empty()) {
    TF_ASSIGN_OR_RETURN(fault, RunnerFaultName(o.inject_fault));
    if (!device->runs_runner) {
      std::string with_runner;
      for (const DeviceBackend& d : DeviceBackends()) {
        if (d.runs_runner) with_runner += (with_runner.empty() ? "" : " or ") + d.name;
      }
      return Status::InvalidArgument("fault injection (TEST ONLY) needs device " + with_runner +
                                     " (a runner process to inject into), not '" + o.device + "'");
    }
    if (o.inject_every < 1) return Status::InvalidArgument("inject every must be at least 1");
  }
  if (o.test_latency_ms < 0 || (o.test_latency_ms > 0 && !device->takes_test_latency)) {
    return Status::InvalidArgument("test latency is for device test only, and cannot be negative");
  }
  // A device that is not here (a GPU without a driver) fails now, saying
  // why, rather than registering a key it cannot measure for.
  if (device->available) {
    TF_RETURN_IF_ERROR(device->available(o.device));
  }
  if (o.device_key.empty()) o.device_key = device->default_key(o.device);
  // The tuner's rules (ValidateRegister): a key it would refuse is a
  // configuration error here, not a reconnect loop.
  bool key_ok = o.device_key.size() <= 128;
  for (char c : o.device_key)
    key_ok &= std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_.:", c) != nullptr;
  if (!key_ok) {
    return Status::InvalidArgument("device key '" + o.device_key +
                                   "' must have 1 to 128 characters: letters, digits and - _ . :");
  }
  if (o.hostname.empty()) o.hostname = HostName().substr(0, 256);
  if (o.hostname.size() > 256) return Status::InvalidArgument("hostname is longer than 256 characters");
  if (!measurer) {
    TF_ASSIGN_OR_RETURN(measurer, device->make_measurer(o));
  }
  std::unique_ptr<FleetWorker> worker(new FleetWorker(std::move(o), std::move(measurer)));
  worker->fault_name_ = fault;
  worker->hello_ = RegisterMessage(worker->options_, *device);
  return worker;
}

FleetWorker::FleetWorker(FleetWorkerOptions options, std::unique_ptr<Measurer> measurer)
    : options_(std::move(options)), measurer_(std::move(measurer)) {}

FleetWorker::~FleetWorker() = default;

}  // namespace tunefarm
