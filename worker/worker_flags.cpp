// The worker's command line (worker_flags.h): flags, checks and the run loop
// of `tunefarm worker` and `tunefarm-worker`.
#include "tunefarm/worker/worker_flags.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>

#include "tunefarm/rpc/token_file.h"
#include "tunefarm/worker/device_backend.h"
#include "tunefarm/worker/fleet_worker.h"

namespace tunefarm {

namespace {

std::atomic<bool> g_stop{false};
// Written before the handler is installed; the handler only reads it.
std::string g_stop_message;

void OnSignal(int) {
  if (g_stop.exchange(true)) std::_Exit(130);  // a second signal: leave now
  (void)!write(2, g_stop_message.data(), g_stop_message.size());
}

// A number as the messages print it: integers without a fraction.
template <typename T>
std::string NumberText(T value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

int Usage(const WorkerProgram& program, const std::string& message) {
  std::fprintf(stderr, "error: %s\nRun `%s --help` for the options and examples.\n", message.c_str(),
               program.command.c_str());
  return kWorkerExitUsage;
}

// A whole-string number within [lo, hi]; `flag` names it in the error.
template <typename T>
Result<T> ParseNumber(const std::string& flag, const std::string& text, T lo, T hi) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    return Status::InvalidArgument(flag + " must be a number in " + NumberText(lo) + ".." + NumberText(hi) +
                                   ", not '" + text + "'");
  }
  return value;
}

}  // namespace

int RunWorker(const WorkerFlags& c, const WorkerProgram& program) {
  auto usage = [&](const std::string& message) { return Usage(program, message); };
  // Checked here rather than by CLI11, so every usage error exits 1 with our message.
  if (c.tuner.empty()) {
    return usage("--tuner HOST:PORT is required: the address of the tuner daemon (`tunefarm serve`)");
  }
  if (Status s = CheckTunerAddress(c.tuner); !s.ok()) return usage("--tuner: " + s.message());
  if (auto device = FindDeviceBackend(c.device); !device.ok()) return usage("--device: " + device.status().message());
  auto max_in_flight = ParseNumber("--max-in-flight", c.max_in_flight, 1, 1024);
  if (!max_in_flight.ok()) return usage(max_in_flight.status().message());
  if (c.insecure && (!c.ca.empty() || !c.cert.empty() || !c.key.empty())) {
    return usage("--insecure (plaintext) cannot be combined with --ca, --cert or --key");
  }
  if (!c.insecure && c.ca.empty()) {
    return usage(
        "--ca is required over TLS (the CA that signed the tuner's certificate), with --cert and --key; "
        "or --insecure for a tuner on this machine");
  }
  if (!c.inject_every.empty() && c.inject_faults.empty()) return usage("--inject-every needs --inject-faults");
  auto inject_every = ParseNumber("--inject-every", c.inject_every.empty() ? "1" : c.inject_every, 1, 1000000);
  if (!inject_every.ok()) return usage(inject_every.status().message());
  auto latency = ParseNumber("--test-latency-ms", c.test_latency_ms.empty() ? "0" : c.test_latency_ms, 0.0, 3.6e6);
  if (!latency.ok()) return usage(latency.status().message());

  FleetWorkerOptions o;
  o.tuner_address = c.tuner;
  o.security.insecure = c.insecure;
  o.security.ca = c.ca;
  o.security.cert = c.cert;
  o.security.key = c.key;
  if (!c.token_file.empty()) {
    auto token = rpc::ReadTokenFile(c.token_file);
    if (!token.ok()) return usage(token.status().message());
    o.security.token = *token;
  }
  o.device = c.device;
  o.device_key = c.device_key;
  o.hostname = c.hostname;
  o.max_in_flight = *max_in_flight;
  o.inject_fault = c.inject_faults;
  o.inject_every = *inject_every;
  o.test_latency_ms = *latency;
  std::istringstream launcher(c.runner_launcher);
  for (std::string word; launcher >> word;) o.local.runner_launcher.push_back(word);
  o.stop = &g_stop;
  auto worker = FleetWorker::Create(std::move(o));
  if (!worker.ok()) return usage(worker.status().message());
  if (c.insecure && c.token_file.empty()) {
    std::fprintf(stderr, "warning: no --token-file; a plaintext tuner admits workers by worker token only\n");
  }

  g_stop = false;
  g_stop_message = "\n" + program.command + ": stopping after the batch being measured (again to quit at once)\n";
  struct sigaction action = {};
  struct sigaction old_int = {};
  struct sigaction old_term = {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &old_int);
  sigaction(SIGTERM, &action, &old_term);
  Status st = (*worker)->Run();
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (!st.ok()) {
    std::fprintf(stderr, "error: %s\n", st.ToString().c_str());
    return st.code() == StatusCode::kFailedPrecondition ? kWorkerExitUsage : kWorkerExitInternal;
  }
  return kWorkerExitOk;
}

void AddWorkerFlags(CLI::App& cmd, WorkerFlags& f, const WorkerProgram& program) {
  const std::string& p = program.command;
  cmd.footer(
      program.about +
      "\n\n"
      "Security: over TLS give --ca (the fleet CA) and a certificate signed by it with the worker\n"
      "role, the URI subjectAltName tunefarm:role=worker (--cert, --key; docs/fleet.md, \"Issuing\n"
      "credentials\"): a client's certificate is refused as a worker. --insecure (plaintext) is\n"
      "allowed only to a loopback tuner, which then admits workers by the worker token in\n"
      "--token-file. Tokens are never taken on the command line.\n\n"
      "Examples:\n"
      "  " + p + " --tuner tuner.lab:7878 --ca fleet-ca.pem --cert worker.pem --key worker.key\n"
      "  " + p + " --tuner 127.0.0.1:7878 --insecure --token-file ~/.config/tunefarm/worker-token\n"
      "  " + p + " --tuner 127.0.0.1:7878 --insecure --token-file token --device test --max-in-flight 64\n"
      "      a TEST DEVICE: instant synthetic timings, for dispatch benchmarks and fault tests; the\n"
      "      tuner records them as synthetic and never serves them as tuned kernels\n\n"
      "Exit codes: 0 stopped by a signal, 1 usage or configuration error, 2 internal error.");
  cmd.add_option("--tuner", f.tuner, "HOST:PORT of the tuner daemon's Fleet service (required)")
      ->type_name("HOST:PORT");
  std::string devices;
  for (const DeviceBackend& d : DeviceBackends()) devices += (devices.empty() ? "" : "; ") + d.name + ": " + d.summary;
  cmd.add_option("--device", f.device, devices)->capture_default_str();
  cmd.add_option("--device-key", f.device_key,
                 "What this worker measures for; the tuner sends it only candidates of that key "
                 "(default: cpu-<host CPU>, e.g. cpu-znver4 or cpu-cortex-a72; cuda-<arch>, e.g. cuda-sm_90, "
                 "for --device cuda:N; 'test' for --device test)")
      ->type_name("KEY");
  cmd.add_option("--max-in-flight", f.max_in_flight, "Candidates accepted at once, 1..1024")
      ->type_name("N")
      ->capture_default_str();
  cmd.add_option("--hostname", f.hostname, "Name reported to the tuner (default: this machine's host name)");
  cmd.add_option("--ca", f.ca, "PEM: the CA certificate that signed the tuner's certificate")->type_name("FILE");
  cmd.add_option("--cert", f.cert, "PEM: this worker's certificate, signed by the fleet CA with the worker role")
      ->type_name("FILE");
  cmd.add_option("--key", f.key, "PEM: the private key of --cert")->type_name("FILE");
  cmd.add_option("--token-file", f.token_file, "File holding the worker token (plaintext loopback tuners)")
      ->type_name("FILE");
  cmd.add_flag("--insecure", f.insecure, "Plaintext, without TLS: only to a tuner on a loopback address");
  cmd.add_option("--runner-launcher", f.runner_launcher,
                 "Start the runner through this command (words split at spaces), e.g. "
                 "'qemu-aarch64 -L SYSROOT' for a worker that itself runs under qemu-user where the "
                 "machine cannot execute the runner directly (no binfmt_misc); default: the runner itself")
      ->type_name("CMD");
  const char* test_group = "TEST ONLY (fault tests of the fleet; never in production)";
  cmd.add_option("--inject-faults", f.inject_faults,
                 "TEST ONLY: make candidates misbehave in the runner: crash or hang "
                 "(also segfault, abort, wrong, hang_build, crash_build, and cuda-illegal-address for cuda "
                 "targets); --device cpu or cuda:N")
      ->group(test_group);
  cmd.add_option("--inject-every", f.inject_every, "TEST ONLY: inject into 1 of every N candidates (default 1)")
      ->type_name("N")
      ->group(test_group);
  cmd.add_option("--test-latency-ms", f.test_latency_ms,
                 "TEST ONLY: the test device takes this long per candidate, one after another "
                 "(keeps candidates in flight)")
      ->type_name("MS")
      ->group(test_group);
}

}  // namespace tunefarm
