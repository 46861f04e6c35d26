// FleetWorker: a measurement worker that dials the tuner daemon
// (`tunefarm worker --tuner HOST:PORT`).
//
// It keeps one Fleet.Connect stream open (proto/tunefarm/v1/fleet.proto):
// Register first, wait for Registered, then heartbeats every heartbeat
// period from a supervisor thread while the caller's thread reads
// MeasureRequests. Requests are measured in arrival order on one measuring
// thread (so reading and heartbeats go on during a long batch) by a Measurer:
// LocalMeasurer for device "cpu" (crashes and hangs cost one candidate, in its
// runner child process), TestDeviceMeasurer for device "test". Each request
// is answered with one MeasureResults message.
//
// When the stream breaks or the tuner cannot be reached, the worker reconnects
// with exponential backoff (with jitter) until stopped. Requests received but
// not yet started are dropped when their stream breaks (the tuner re-dispatches
// a lost worker's candidates); results of the batch being measured, and any
// that could not be written, are kept and sent after the next Registered (the
// tuner drops duplicates by candidate id). One log line per state change.
//
// The worker never opens a tuning-log database.
//
// Thread safety: Run() is called once, from one thread, and blocks until the
// worker stops. Stop() and stats() may be called from any thread, at any time
// (Stop() is not async-signal-safe: from a signal handler, set the atomic
// passed as FleetWorkerOptions::stop instead). Lifetime: the FleetWorker owns
// its Measurer (and so the runner process) and every thread it starts; all
// threads are joined before Run() returns.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/worker/local_measurer.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm {

namespace v1 {
class MeasureRequest;
class MeasureResults;
class Registered;
class WorkerMessage;
}  // namespace v1

struct FleetWorkerOptions {
  std::string tuner_address;                       // "host:port" of the tuner daemon's Fleet service
  rpc::ClientSecurity security;                    // TLS files and/or token; insecure only to loopback
  std::string device = "cpu";                      // "cpu", "cuda:N" (LocalMeasurer) or "test" (TestDeviceMeasurer)
  std::string device_key;                          // empty: DefaultDeviceKey(device)
  int max_in_flight = 16;                          // candidates accepted at once, 1..1024
  std::string hostname;                            // empty: this machine's host name
  std::chrono::milliseconds initial_backoff{200};  // first reconnect delay; doubles per failure
  std::chrono::milliseconds max_backoff{5000};     // reconnect delay cap
  // Set to true (e.g. from a signal handler) to stop like Stop(). Borrowed;
  // must outlive Run(). May be null.
  const std::atomic<bool>* stop = nullptr;
  // Where state changes are logged, one line per call, no trailing newline.
  // Empty: stderr, prefixed "tunefarm worker: ".
  std::function<void(std::string_view)> log;

  // Device "cpu": how the runner is started (runner_path empty: FindRunnerPath()).
  LocalMeasurerOptions local;
  // Device "test": sleep this long per candidate (fault tests, benchmarks).
  double test_latency_ms = 0;

  // TEST ONLY (fault tests of the fleet; never in production): append
  // "# tunefarm-test-fault: <runner fault>" to every inject_every-th
  // candidate's trace and start the runner with test faults enabled. Fault
  // names: "crash" (the runner's "segfault"), "hang", or any runner fault name
  // (segfault, abort, hang, wrong, hang_build, crash_build). Device "cpu" only.
  std::string inject_fault;
  int inject_every = 1;
};

// Counters for tests and logs; a consistent snapshot.
struct FleetWorkerStats {
  int64_t connect_attempts = 0;  // streams opened
  int64_t registrations = 0;     // Registered received (successful connections)
  std::string worker_id;         // from the last Registered; empty before the first
  int64_t requests_received = 0;
  int64_t candidates_measured = 0;
  int64_t results_sent = 0;        // MeasureResults messages written (live and re-sent)
  int64_t results_resent = 0;      // of which were kept across a broken stream
  int64_t candidates_dropped = 0;  // received but not started when their stream broke
  int64_t heartbeats_sent = 0;
  std::string last_error;  // why the last connection ended or failed
};

// "cpu-<host CPU>" (e.g. "cpu-znver4") for "cpu"; "cuda-<arch>" (e.g.
// "cuda-sm_90") for "cuda:N", empty when that GPU is not here; "test" for the
// test device, so synthetic timings never share a key with real ones unless
// asked for.
std::string DefaultDeviceKey(const std::string& device);

// Whether `device` invents its times instead of measuring them (the test
// device). Such a worker registers as synthetic and marks every result so:
// the tuning log keeps those records for the job but never serves them.
bool IsSyntheticDevice(const std::string& device);

// OK when `address` is "host:port" or "[ipv6]:port" with a port in 1..65535;
// InvalidArgument saying what is wrong otherwise.
Status CheckTunerAddress(const std::string& address);

// The runner fault name for an --inject-faults value ("crash" -> "segfault");
// InvalidArgument listing the accepted names otherwise.
Result<std::string> RunnerFaultName(const std::string& inject_fault);

class FleetWorker {
 public:
  // Checks the options (address, device, limits, TLS files readable, insecure
  // only to loopback, runner found for "cpu") and builds the measurer.
  // InvalidArgument / NotFound naming what is wrong; nothing is dialled yet.
  static Result<std::unique_ptr<FleetWorker>> Create(FleetWorkerOptions options);
  // Same, measuring with `measurer` instead of the device's own (tests).
  static Result<std::unique_ptr<FleetWorker>> Create(FleetWorkerOptions options, std::unique_ptr<Measurer> measurer);

  ~FleetWorker();
  FleetWorker(const FleetWorker&) = delete;
  FleetWorker& operator=(const FleetWorker&) = delete;

  // Connects, serves and reconnects until stopped. On stop: the batch being
  // measured is finished and its results are sent (if connected), the stream
  // is half-closed, and Run returns OK. A second call is FailedPrecondition.
  // When the tuner's port speaks the other protocol (TLS to a plaintext
  // worker, or plaintext to a TLS one), Run stops and returns
  // FailedPrecondition saying how to dial it: retrying cannot help.
  Status Run();
  // Asks Run() to stop; returns at once.
  void Stop();
  FleetWorkerStats stats() const;
  const FleetWorkerOptions& options() const { return options_; }

 private:
  struct Session;
  struct Job {
    std::string request_id;
    std::vector<MeasureInput> inputs;
    MeasureOptions options;
  };

  FleetWorker(FleetWorkerOptions options, std::unique_ptr<Measurer> measurer);
  bool Stopping() const;
  void Log(const std::string& line) const;
  // One connection: open, register, serve until the stream ends. Returns why it ended.
  Status RunSession(bool* registered);
  void Supervise(Session* session);
  // Re-sends kept results, makes `session` the live one, starts heartbeats.
  void OnRegistered(Session* session, const v1::Registered& registered);
  void Enqueue(const v1::MeasureRequest& request);
  void MeasureLoop();
  void Deliver(v1::MeasureResults results);
  bool WaitBackoff(std::chrono::milliseconds delay);
  // FailedPrecondition when the tuner's port speaks the other protocol than
  // this worker dials with, else OK (including when the probe cannot tell).
  Status ProtocolMismatch() const;

  const FleetWorkerOptions options_;
  const std::unique_ptr<Measurer> measurer_;
  std::string fault_name_;                    // runner fault to inject; empty: none
  std::unique_ptr<v1::WorkerMessage> hello_;  // the Register message, built by Create
  std::atomic<bool> ran_{false};
  std::atomic<bool> stop_{false};
  std::atomic<bool> measure_loop_done_{false};

  mutable std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Job> queue_;         // GUARDED_BY(queue_mu_)
  int queued_candidates_ = 0;     // GUARDED_BY(queue_mu_)
  int measuring_candidates_ = 0;  // GUARDED_BY(queue_mu_)
  int64_t inject_counter_ = 0;    // GUARDED_BY(queue_mu_)

  // Serializes every write to the stream (gRPC allows one writer at a time).
  mutable std::mutex write_mu_;
  Session* live_ = nullptr;                                  // GUARDED_BY(write_mu_): registered session
  std::vector<std::unique_ptr<v1::MeasureResults>> unsent_;  // GUARDED_BY(write_mu_)

  mutable std::mutex stats_mu_;
  FleetWorkerStats stats_;  // GUARDED_BY(stats_mu_)
};

}  // namespace tunefarm
