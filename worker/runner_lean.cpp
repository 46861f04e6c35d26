// The lean worker's runner (TUNEFARM_LEAN_WORKER): it builds no code and
// drives no GPU. Candidates arrive as objects the tuner built for this
// board's device key (fleet.toml [builders] tuner_built), loaded by
// runner_session.cpp with LoadKernelObject; references come from the
// interpreter. The full runner defines these in runner_build_jit.cpp and
// runner_cuda_session.cpp.
#include "runner.h"
#include "runner_cuda.h"

namespace tunefarm::runner {

Result<std::unique_ptr<JitKernel>> CompileCandidate(const ir::PrimFunc&, const Target&, const CodegenOptions&) {
  return Status::Unimplemented(
      "this worker builds no code: the daemon must build candidates for its device key "
      "(fleet.toml [builders] tuner_built)");
}

bool BuildsCode() { return false; }

// Session holds a CudaGpu pointer for the full runner's GPU side; here it
// is never made, so only its destructor is linked.
CudaGpu::~CudaGpu() = default;

Session::~Session() = default;

bool Session::GpuBroken() const { return false; }

std::string Session::GpuBrokenReason() const { return ""; }

void Session::OpenGpu() { gpu_opened_ = true; }

std::string Session::CannotRun(const Target& target) const {
  if (target.is_host()) return "";
  if (target.kind == "cuda") return "cannot run on this worker: it has no CUDA (a lean board worker)";
  return "cannot run on this machine (host: " + Target::Host().ToString() + ")";
}

std::optional<std::pair<MeasureErrorKind, std::string>> Session::BuildCuda(const Target&, bool, Built&) const {
  return std::pair{MeasureErrorKind::kInvalidCandidate, std::string("this worker has no CUDA")};
}

MeasureResult Session::RunCuda(Built& built, const MeasureOptions&, int) {
  MeasureResult r;
  r.build_seconds = built.build_seconds;
  r.error = MeasureErrorKind::kInvalidCandidate;
  r.error_message = "this worker has no CUDA";
  return r;
}

Status Session::ComputeGpuReference(const ir::PrimFunc&, Reference&) {
  return Status::Unimplemented("this worker has no CUDA");
}

}  // namespace tunefarm::runner
