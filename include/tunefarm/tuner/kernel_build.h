// Building a deployable kernel from the tuning log: the policy shared by
// `tunefarm compile` and the Compile service.
//
//   workload, parsed once -> lowered once to the default PrimFunc ->
//   ChooseSchedule: the best record through the log's fallback chain (same
//   device, then same architecture) whose trace replays on it, each trace
//   parsed and replayed once, the chosen one's schedule kept ->
//   BuildKernel: an object from the target kind's code generator (codegen.h;
//   LLVM for `llvm`, which lowers for code generation), optionally linked
//   into a shared library against libtunefarm_runtime, plus a C header
//   declaring the entry point; for `cuda`, the cubin NVRTC compiles for the
//   target's arch (the default GPU program when the schedule has no
//   instructions) plus a header with a host launcher (kernel_header.h).
//
// With no usable record the default (untuned) schedule is built, unless
// require_tuned is set. Every failure says which stage it came from so that
// callers can map it to their own exit codes or gRPC statuses.
//
// Thread safety: the functions here keep no state and may run concurrently
// (each code generation uses its own LLVM context; shared-library links use a
// private temporary directory per call). A log is asked on the calling
// thread; logs are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/database/tuning_log.h"
#include "tunefarm/tuner/kernel_header.h"  // KernelHeaderText and the cuda launcher header

namespace tunefarm::tuner {

// A record a lookup passed over because its trace does not replay on the
// workload's loop nest (most likely tuned before a change to lowering or to
// the schedule primitives), and why.
struct PassedOverRecord {
  int64_t id = 0;   // row id in the log it came from
  std::string uid;  // unique across logs
  std::string why;
};

// The schedule a TraceReplaysOn predicate made of the record it accepted
// last: the default PrimFunc with that record's trace applied.
struct ReplayedRecord {
  std::string uid;    // the record's; empty until one is accepted
  ir::PrimFunc func;
};

// Accepts records whose trace parses and replays on `default_func`, and
// appends the others to *passed_over. With `accepted`, keeps there the
// schedule of the record it accepts (TuningLog::GetBest answers with the last
// record its predicate accepted), so that nobody replays it again. Every
// pointer must outlive the predicate.
database::RecordUsable TraceReplaysOn(const ir::PrimFunc& default_func, std::vector<PassedOverRecord>* passed_over,
                                      ReplayedRecord* accepted = nullptr);

// The error for a lookup that found records but none that replays: it names
// the fastest of them.
Status NoRecordReplays(const std::vector<PassedOverRecord>& passed_over, const std::string& log_name,
                       const std::string& workload_name);

// The record target a kernel for `target` is looked up under: the given
// fingerprint (canonicalized), or if unset this host's (tuner::RecordTarget)
// for llvm, and for cuda one of isa "cuda", the target's arch and
// CudaKernelToolchain, which only a GPU of that architecture's records match
// (same architecture: the exact part is not known where kernels are built).
database::Target KernelRecordTarget(const Target& target,
                                    const std::optional<database::HardwareFingerprint>& fingerprint);

// The toolchain named in cuda records' fingerprints, "nvrtc lowering-r<N>"
// (the worker's CudaToolchain, which records are measured with).
std::string CudaKernelToolchain();

// The folder holding libtunefarm_runtime.so next to the running executable:
// <prefix>/lib when installed, <build>/runtime in a build tree; "" if none.
std::string DefaultRuntimeLibraryDir();

// What a build produced, and where its schedule came from.
struct BuiltKernel {
  std::string binary;       // ELF relocatable object, or the shared library when built shared; cuda: the cubin
  bool shared = false;      // binary is a shared library
  size_t object_size = 0;   // bytes of the relocatable object (before any link), or of the cubin
  std::string header;       // C header declaring `symbol` (kernel_header.h)
  // Entry point: int32_t symbol(inputs..., outputs...); cuda: the header's
  // launcher, CUresult <name>_launch(stream, inputs..., outputs...[, workspace]).
  std::string symbol;
  std::string workload_name;
  std::string workload_hash;
  std::string target;       // canonical target string the code was generated for

  // The schedule. record_id == 0 means the default schedule.
  std::string trace;        // trace text of the record; empty for the default
  int64_t record_id = 0;    // row id in the layer it came from
  std::string record_uid;
  double mean_seconds = 0;  // the trace's logged time (TuningRecord::RankSec); 0 for the default
  database::FallbackLevel level = database::FallbackLevel::kNone;
  database::Layer layer = database::Layer::kUser;
  std::string record_arch;  // arch of the device that measured the record
  // The record's code generator when it is not the one this build is for
  // (CodegenToolchain, or the given fingerprint's): its time is of other code.
  std::string record_other_toolchain;
  // The record was measured under emulation (database/record.h): the log
  // answers with one only when it holds no record measured on real hardware
  // for the workload and target. Its device and worker, for the warning.
  bool record_emulated = false;
  std::string record_device;
  std::string record_worker;
  // "default (untuned)", "default GPU program (untuned): ..." or "tuned: record #..." (as in the header)
  std::string schedule_description;

  bool tuned() const { return record_id != 0; }
};

// What a caller must tell about a kernel tuned from an emulated record
// (kernel.record_emulated): "the only record for W on T was measured under
// emulation (record uid U, device D on worker X, arch A): its time says
// nothing about a real board; ...". Empty for any other kernel. `tunefarm
// compile` prints it as a warning, the Compile service returns it, and the
// header's schedule line says the same.
std::string EmulatedRecordWarning(const BuiltKernel& kernel);

// Which step failed.
enum class KernelBuildStage {
  // BuildKernelFromLog's first two steps (callers of the steps map those themselves):
  kLower,         // the workload does not lower (a compiler bug for a valid workload)
  kSchedule,      // ChooseSchedule failed: the lookup, or no record's trace replays
  kRequireTuned,  // require_tuned and no usable record: NotFound
  kCodegen,       // code generation (InvalidArgument: no generator for the kind, or the target cannot be built)
  kLink,          // shared library: non-host target, cuda too (InvalidArgument, before codegen) or the link failed
};

struct KernelBuildOptions {
  bool shared = false;         // link a shared library (host targets only)
  bool require_tuned = false;  // a miss is NotFound instead of the default schedule
  // The device the kernel will run on; unset: this host.
  std::optional<database::HardwareFingerprint> fingerprint;
  std::string runtime_dir;     // folder of libtunefarm_runtime.so; "": DefaultRuntimeLibraryDir()
  std::string log_name = "the tuning log";  // names the log in errors ("record #3 of <log_name> ...")
  // Called once the schedule is chosen, before code generation, with every
  // field but binary/object_size/header set (the CLI reports the choice).
  std::function<void(const BuiltKernel&)> on_schedule_chosen;
};

// What ChooseSchedule chose, ready to build.
struct ChosenSchedule {
  database::BestRecord best;  // best.record unset: the default schedule
  // What is built: the default PrimFunc with best's trace applied (replayed
  // in the lookup, once), or the default PrimFunc itself.
  ir::PrimFunc func;
  // Faster records passed over because their traces do not replay: the
  // schedule description names them.
  std::vector<PassedOverRecord> passed_over;
};

// The fastest record of `workload_hash` in `log` on `record_target`
// (KernelRecordTarget) whose trace replays on `default_func`, and the
// schedule that replay made; a null `log` means no log: the default schedule.
// Records found of which none replays are NoRecordReplays (naming `log_name`
// and `workload_name`); the log's own errors are passed on.
Result<ChosenSchedule> ChooseSchedule(database::TuningLog* log, const std::string& log_name,
                                      std::string_view workload_hash, const std::string& workload_name,
                                      const database::Target& record_target, const ir::PrimFunc& default_func);

// What BuildKernel builds, before any code is generated: every field of
// BuiltKernel but binary, object_size and header, passed to
// options.on_schedule_chosen; then require_tuned (kRequireTuned, NotFound).
Result<BuiltKernel> DescribeKernel(const Workload& workload, const Target& target, const ChosenSchedule& schedule,
                                   const KernelBuildOptions& options, KernelBuildStage* failed_stage = nullptr);

// Links a relocatable object for this host into a shared library against
// libtunefarm_runtime.so (in `runtime_dir`; "": DefaultRuntimeLibraryDir())
// with the system's `cc`; returns the library's bytes. The library finds the
// runtime beside itself or where the loader looks, never in a folder of the
// machine that linked it.
Result<std::string> LinkSharedLibrary(const std::string& object_bytes, const std::string& runtime_dir);

// Builds `schedule.func` for `target`: DescribeKernel, code generation, link,
// header. It neither lowers the workload nor replays a trace (the Compile
// service keys its cache on the chosen record between the two steps).
Result<BuiltKernel> BuildKernel(const Workload& workload, const Target& target, const ChosenSchedule& schedule,
                                const KernelBuildOptions& options, KernelBuildStage* failed_stage = nullptr);

// All of it: lowers `workload` (once), ChooseSchedule from `log` (null: no
// log) under options.fingerprint's record target, then BuildKernel. On
// error, sets *failed_stage when given.
Result<BuiltKernel> BuildKernelFromLog(const Workload& workload, const Target& target, database::TuningLog* log,
                                       const KernelBuildOptions& options,
                                       KernelBuildStage* failed_stage = nullptr);

}  // namespace tunefarm::tuner
