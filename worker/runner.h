// Internals of tunefarm-runner, the child process that LocalMeasurer drives.
//
// The runner reads batch requests from its channel (fd 3), builds every
// candidate of a batch (in parallel, on build threads that are joined before
// any timing starts), then runs, checks and times the candidates one by one
// with nothing else running, and answers one event stream per batch. See
// docs/measurement.md for the message sequence.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/measure/candidate_program.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::runner {

// The runner's end of the socket. Send is called from build threads and the
// main thread; Receive only from the main thread.
class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  // Writes one framed message; a failed write (parent gone) exits the process.
  void Send(const nlohmann::json& message);
  // Blocks for the next message; nullopt on EOF (the parent closed it).
  std::optional<Result<nlohmann::json>> Receive();

 private:
  int fd_;
  std::mutex send_mutex_;  // serializes whole frames from several threads
  worker_protocol::FrameDecoder decoder_;  // main thread only
};

// Random inputs and the expected outputs for one workload and seed.
struct Reference {
  std::string key;                    // structural hash + seed
  std::vector<HostBuffer> inputs;     // the PrimFunc's input params, in order
  std::vector<HostBuffer> outputs;    // expected values of its output params
  uint64_t inputs_checksum = 0;       // detects kernels that write their inputs
  double rtol = 1e-4, atol = 1e-4;    // tolerance for this workload's outputs
  std::string method;                 // "interpreter" or "compiled default schedule"
};

// Workloads up to this many flops get the interpreter as reference; larger
// ones the compiled default schedule (tests prove the two equal).
// The interpreter runs at roughly 15 Mflop/s, so its references cost at most
// about 0.7 s, once per workload and seed.
constexpr double kInterpreterFlopLimit = 1e7;

// Caches references, most recently used first, within a byte budget. Main thread only.
class ReferenceCache {
 public:
  explicit ReferenceCache(int64_t max_bytes = int64_t(1) << 30) : max_bytes_(max_bytes) {}
  // The reference for (w, seed), computed on first use. `func` is w's default PrimFunc.
  Result<Reference*> Get(const Workload& w, uint64_t seed);
  bool Contains(const std::string& key) const;
  void Drop(const std::string& key);

 private:
  int64_t max_bytes_;
  std::list<std::unique_ptr<Reference>> entries_;
};

std::string ReferenceKey(const Workload& w, uint64_t seed);
uint64_t Checksum(const std::vector<HostBuffer>& buffers);

// Seconds of a fixed arithmetic loop run once on each of the runtime's
// current threads (the median of three calls, about a millisecond each,
// after warm-up calls that settle the pool's threads on their cores):
// MeasureResult::speed_probe_seconds. Comparable only with probes of the same
// runner binary at the same thread count (runner_speed_probe.cpp).
double TimeSpeedProbe();

// One batch: builds, then measures in order, sending events on `channel`.
class Session {
 public:
  Session(Channel& channel, bool test_faults) : channel_(channel), test_faults_(test_faults) {}
  void HandleBatch(const nlohmann::json& request);

 private:
  struct Built;
  void Build(const MeasureInput& input, CandidatePrograms& programs, Built& out);
  MeasureResult Run(Built& built, const MeasureOptions& options, int index);

  Channel& channel_;
  bool test_faults_;
  ReferenceCache references_;
};

}  // namespace tunefarm::runner
