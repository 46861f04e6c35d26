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
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
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
// ones the compiled default schedule (tests prove the two equal), where the
// runner builds code (BuildsCode()); the lean runner interprets them all.
// The interpreter runs at roughly 15 Mflop/s, so its references cost at most
// about 0.7 s, once per workload and seed.
constexpr double kInterpreterFlopLimit = 1e7;

// How this runner turns a candidate that came without an object into code.
// Two definitions, chosen by the build: runner_build_jit.cpp asks the code
// generator of the target's kind (codegen.h, CodeGeneratorFor);
// runner_lean.cpp (the lean worker, TUNEFARM_LEAN_WORKER) builds no code and
// answers Unimplemented, saying the daemon must build for this device key.
// Objects the tuner built are loaded with LoadKernelObject in both.
Result<std::unique_ptr<JitKernel>> CompileCandidate(const ir::PrimFunc& f, const Target& target,
                                                    const CodegenOptions& options);
// Whether CompileCandidate can build code at all.
bool BuildsCode();

// Computes the expected outputs of a workload too large for the interpreter:
// `func` is its default PrimFunc as written, `ref.inputs` are filled and
// `ref.outputs` allocated; it fills the outputs and names its `method`.
using CompiledReference = std::function<Status(const ir::PrimFunc& func, Reference& ref)>;

// Caches references, most recently used first, within a byte budget. Main thread only.
class ReferenceCache {
 public:
  explicit ReferenceCache(int64_t max_bytes = int64_t(1) << 30) : max_bytes_(max_bytes) {}
  // The reference for (w, seed), computed on first use.
  Result<Reference*> Get(const Workload& w, uint64_t seed);
  bool Contains(const std::string& key) const;
  void Drop(const std::string& key);
  // How references beyond kInterpreterFlopLimit are computed; unset: the
  // default schedule compiled for this host (CompileCandidate), or the
  // interpreter where the runner builds no code. A GPU runner sets its GPU's
  // default program (runner_cuda_session.cpp).
  void SetCompiledReference(CompiledReference compute) { compiled_ = std::move(compute); }

 private:
  int64_t max_bytes_;
  CompiledReference compiled_;
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

class CudaGpu;      // runner_cuda.h
struct CudaBuild;   // runner_cuda.h

// The runner exits with this status after answering a candidate whose CUDA
// error left the GPU's context unusable (runner_cuda.h); LocalMeasurer then
// measures the rest of the batch in a fresh runner.
constexpr int kExitGpuBroken = 4;

// One batch: builds, then measures in order, sending events on `channel`.
class Session {
 public:
  // `device`: "cpu", or "cuda:N" to measure cuda targets on GPU N (opened at
  // the first batch; host targets still run on the CPU).
  Session(Channel& channel, bool test_faults, std::string device);
  ~Session();
  void HandleBatch(const nlohmann::json& request);

 private:
  // A candidate as built on a build thread, until it is measured.
  struct Built {
    bool ok = false;
    MeasureResult failure;  // when !ok: the answer, already final
    worker_protocol::TestFault fault = worker_protocol::TestFault::kNone;
    std::shared_ptr<const Workload> workload;  // shared with the batch's other candidates of it
    ir::PrimFunc func;                  // the scheduled PrimFunc (its params fix the argument order)
    std::unique_ptr<JitKernel> kernel;  // host targets: freed as soon as the candidate is measured
    std::unique_ptr<CudaBuild> cuda;    // cuda targets: the module and its compiled code
    std::unique_ptr<CudaBuild> cuda_fault;  // TEST DEVICE: the null-pointer kernel of cuda-illegal-address
    int target_threads = 0;             // the target's -num-threads, 0 if none
    double build_seconds = 0;
  };
  void Build(const MeasureInput& input, CandidatePrograms& programs, Built& out);
  MeasureResult Run(Built& built, const MeasureOptions& options, int index);

  // The CUDA side (runner_cuda_session.cpp).
  void OpenGpu();                                    // once, before the first batch's builds
  std::string CannotRun(const Target& target) const;  // CandidatePrograms::TargetCheck
  // Lowers, generates and compiles a cuda candidate (its trace had no
  // instructions: the default GPU program), and checks it fits the GPU; on
  // failure, the error kind and message.
  std::optional<std::pair<MeasureErrorKind, std::string>> BuildCuda(const Target& target, bool default_program,
                                                                    Built& out) const;
  MeasureResult RunCuda(Built& built, const MeasureOptions& options, int index);
  Status ComputeGpuReference(const ir::PrimFunc& func, Reference& ref);
  bool GpuBroken() const;               // a CUDA error left the context unusable
  std::string GpuBrokenReason() const;

  Channel& channel_;
  bool test_faults_;
  std::string device_;             // "cpu" or "cuda:N"
  int cuda_index_ = -1;            // N of "cuda:N"; -1 for "cpu"
  bool gpu_opened_ = false;        // OpenGpu ran
  std::unique_ptr<CudaGpu> gpu_;   // null: no GPU (cpu device, or it failed to open)
  std::string gpu_error_;          // why gpu_ is null on a cuda device
  ReferenceCache references_;
};

}  // namespace tunefarm::runner
