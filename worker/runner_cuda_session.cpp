// The CUDA side of a runner session: which targets a GPU runner takes, how a
// cuda candidate is built (lower, generate CUDA C, NVRTC, fit checks) and how
// it is checked and timed on the GPU, and the GPU reference for workloads
// too large for the interpreter.
#include <cstdio>
#include <cstring>

#include "runner.h"
#include "runner_cuda.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/schedule/gpu_default_schedule.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::runner {

using worker_protocol::TestFault;

namespace {

// TEST DEVICE (cuda-illegal-address): one thread writes through a null pointer.
constexpr const char* kFaultKernel = "tunefarm_test_fault_null_write";
constexpr const char* kFaultSource =
    "extern \"C\" __global__ void tunefarm_test_fault_null_write(float* p) { p[threadIdx.x] = 1.0f; }\n";

// Generates and compiles a lowered PrimFunc's module for `arch`.
Result<std::unique_ptr<CudaBuild>> GenerateAndCompile(const ir::PrimFunc& lowered, const std::string& arch) {
  auto build = std::make_unique<CudaBuild>();
  TF_ASSIGN_OR_RETURN(build->module, cuda::GenerateCuda(lowered));
  TF_ASSIGN_OR_RETURN(build->compiled, cuda::CompileCudaSource(build->module.source, arch));
  return build;
}

// The fault kernel as a module: its one buffer has no elements, so
// CudaProgram passes it a null pointer.
Result<std::unique_ptr<CudaBuild>> FaultBuild(const std::string& arch) {
  auto build = std::make_unique<CudaBuild>();
  build->module.name = "tunefarm_test_fault";
  build->module.source = kFaultSource;
  build->module.buffers.push_back({"null", ir::DataType::Float(32), 0, -1});
  cuda::CudaLaunch launch;
  launch.kernel = kFaultKernel;
  launch.block = {32, 1, 1};
  launch.buffers = {0};
  build->module.launches.push_back(launch);
  TF_ASSIGN_OR_RETURN(build->compiled, cuda::CompileCudaSource(build->module.source, arch));
  return build;
}

}  // namespace

Session::~Session() = default;

bool Session::GpuBroken() const { return gpu_ && gpu_->broken(); }

std::string Session::GpuBrokenReason() const { return gpu_ ? gpu_->broken_reason() : std::string(); }

void Session::OpenGpu() {
  if (gpu_opened_) return;
  gpu_opened_ = true;
  if (device_ == "cpu" || device_.empty()) return;
  auto index = ParseCudaDeviceIndex(device_);
  if (!index.ok()) {
    gpu_error_ = index.status().message();
    return;
  }
  cuda_index_ = *index;
  auto gpu = CudaGpu::Open(*index);
  if (!gpu.ok()) {
    gpu_error_ = gpu.status().message();
    return;
  }
  gpu_ = std::move(*gpu);
  references_.SetCompiledReference(
      [this](const ir::PrimFunc& func, Reference& ref) { return ComputeGpuReference(func, ref); });
}

std::string Session::CannotRun(const Target& target) const {
  if (target.is_host()) return "";
  if (target.kind != "cuda") {
    return "cannot run on this machine (host: " + Target::Host().ToString() + ")";
  }
  if (cuda_index_ < 0 && gpu_error_.empty()) {
    return "cannot run on this machine (host: " + Target::Host().ToString() +
           "; a cuda target needs a runner for device cuda:N)";
  }
  if (!gpu_) return "cannot run here: device " + device_ + " is not usable: " + gpu_error_;
  if (target.arch != gpu_->info().Arch()) {
    return "cannot run on device " + device_ + " (" + gpu_->info().name + ", " + gpu_->info().Arch() + ")";
  }
  return "";
}

std::optional<std::pair<MeasureErrorKind, std::string>> Session::BuildCuda(const Target& target, bool default_program,
                                                                          Built& out) const {
  using Failure = std::pair<MeasureErrorKind, std::string>;
  if (default_program) {
    auto scheduled = DefaultGpuSchedule(out.func);
    if (!scheduled.ok()) {
      return Failure{MeasureErrorKind::kCompileError, "the default GPU program: " + scheduled.status().message()};
    }
    out.func = std::move(*scheduled);
  }
  auto lowered = cuda::LowerForCuda(out.func);
  if (!lowered.ok()) return Failure{MeasureErrorKind::kCompileError, "lowering for CUDA: " + lowered.status().message()};
  auto build = GenerateAndCompile(*lowered, target.arch);
  if (!build.ok()) return Failure{MeasureErrorKind::kCompileError, "CUDA: " + build.status().ToString()};
  // Rejected before anything runs: what would fail to launch or spill.
  std::string misfit = CudaBuildDoesNotFit(**build, gpu_->info());
  if (!misfit.empty()) {
    return Failure{MeasureErrorKind::kCompileError, "does not fit " + gpu_->info().name + ": " + misfit};
  }
  out.cuda = std::move(*build);
  if (out.fault == TestFault::kCudaIllegalAddress) {
    auto fault = FaultBuild(target.arch);
    if (!fault.ok()) return Failure{MeasureErrorKind::kCompileError, "test fault kernel: " + fault.status().ToString()};
    out.cuda_fault = std::move(*fault);
  }
  return std::nullopt;
}

Status Session::ComputeGpuReference(const ir::PrimFunc& func, Reference& ref) {
  ref.method = "GPU default schedule";
  TF_ASSIGN_OR_RETURN(ir::PrimFunc scheduled, DefaultGpuSchedule(func));
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, cuda::LowerForCuda(scheduled));
  TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaBuild> build, GenerateAndCompile(lowered, gpu_->info().Arch()));
  std::string misfit = CudaBuildDoesNotFit(*build, gpu_->info());
  if (!misfit.empty()) return Status::Internal("the default GPU program does not fit the device: " + misfit);
  TF_ASSIGN_OR_RETURN(std::unique_ptr<CudaProgram> program, CudaProgram::Load(*gpu_, *build));
  const auto& buffers = program->module().buffers;
  for (size_t i = 0; i < buffers.size(); ++i) {
    int param = buffers[i].param_index;
    if (param >= 0 && size_t(param) < ref.inputs.size()) {
      TF_RETURN_IF_ERROR(program->Upload(int(i), ref.inputs[size_t(param)].data(), ref.inputs[size_t(param)].size_bytes()));
    }
  }
  TF_RETURN_IF_ERROR(program->RunOnce().status());
  for (size_t i = 0; i < buffers.size(); ++i) {
    int param = buffers[i].param_index;
    if (param >= 0 && size_t(param) >= ref.inputs.size()) {
      HostBuffer& out = ref.outputs.at(size_t(param) - ref.inputs.size());
      if (buffers[i].bytes() != out.size_bytes()) return Status::Internal("output '" + buffers[i].name + "' has another size");
      TF_RETURN_IF_ERROR(program->Download(int(i), out.data(), out.size_bytes()));
    }
  }
  return Status::OK();
}

MeasureResult Session::RunCuda(Built& b, const MeasureOptions& options, int index) {
  MeasureResult r;
  r.build_seconds = b.build_seconds;
  auto fail = [&](MeasureErrorKind kind, std::string message) {
    r.error = kind;
    r.error_message = std::move(message);
    r.repeat_seconds.clear();
    return r;
  };
  std::string key = ReferenceKey(*b.workload, options.input_seed);
  bool announce = !references_.Contains(key);
  if (announce) channel_.Send({{"type", "reference_start"}, {"index", index}});
  auto ref_or = references_.Get(*b.workload, options.input_seed);
  if (announce) channel_.Send({{"type", "reference_done"}, {"index", index}});
  if (!ref_or.ok()) return fail(MeasureErrorKind::kRuntimeError, "computing the reference failed: " + ref_or.status().message());
  const Reference& ref = **ref_or;
  const auto& params = b.func.params;
  if (b.func.num_inputs != ref.inputs.size() || params.size() != ref.inputs.size() + ref.outputs.size()) {
    return fail(MeasureErrorKind::kInvalidCandidate, "the scheduled function's parameters differ from the workload's");
  }

  // Loading: a cubin the driver refuses, or a kernel whose registers leave
  // too few threads per block, is this candidate's compile error.
  auto loaded = CudaProgram::Load(*gpu_, *b.cuda);
  if (!loaded.ok()) {
    MeasureErrorKind kind = gpu_->broken() ? MeasureErrorKind::kRuntimeError : MeasureErrorKind::kCompileError;
    return fail(kind, "loading on " + gpu_->info().name + ": " + loaded.status().message());
  }
  CudaProgram& program = **loaded;
  const auto& buffers = program.module().buffers;
  std::vector<int> output_buffer(ref.outputs.size(), -1), input_buffer(ref.inputs.size(), -1);
  for (size_t i = 0; i < buffers.size(); ++i) {
    const cuda::CudaBuffer& buffer = buffers[i];
    if (buffer.param_index < 0) {
      if (Status s = program.Fill(int(i), 0xff); !s.ok()) return fail(MeasureErrorKind::kRuntimeError, s.message());
      continue;
    }
    size_t param = size_t(buffer.param_index);
    const HostBuffer& expect = param < ref.inputs.size() ? ref.inputs[param] : ref.outputs.at(param - ref.inputs.size());
    if (param >= params.size() || buffer.bytes() != expect.size_bytes()) {
      return fail(MeasureErrorKind::kInvalidCandidate, "CUDA buffer '" + buffer.name + "' does not match parameter " +
                                                           std::to_string(param) + " of the workload");
    }
    // Outputs start as all-ones bytes (NaN for floats): a kernel that skips
    // elements fails the check.
    Status s = param < ref.inputs.size() ? program.Upload(int(i), expect.data(), expect.size_bytes())
                                         : program.Fill(int(i), 0xff);
    if (!s.ok()) return fail(MeasureErrorKind::kRuntimeError, s.message());
    (param < ref.inputs.size() ? input_buffer[param] : output_buffer[param - ref.inputs.size()]) = int(i);
  }

  channel_.Send({{"type", "run_start"}, {"index", index}});
  // TEST DEVICE: a kernel that faults before the candidate's.
  if (b.cuda_fault) {
    auto fault = CudaProgram::Load(*gpu_, *b.cuda_fault);
    if (!fault.ok()) return fail(MeasureErrorKind::kRuntimeError, "test fault kernel: " + fault.status().message());
    auto faulted = (*fault)->RunOnce();
    if (!faulted.ok()) return fail(MeasureErrorKind::kRuntimeError, "CUDA error: " + faulted.status().message());
  }
  auto first = program.RunOnce();
  if (!first.ok()) return fail(MeasureErrorKind::kRuntimeError, "CUDA error: " + first.status().message());

  std::vector<HostBuffer> outputs;
  for (size_t k = 0; k < ref.outputs.size(); ++k) {
    outputs.push_back(HostBuffer::Like(params[ref.inputs.size() + k]));
    if (output_buffer[k] < 0) {
      return fail(MeasureErrorKind::kInvalidCandidate, "output '" + params[ref.inputs.size() + k]->name + "' is no CUDA buffer");
    }
    Status s = program.Download(output_buffer[k], outputs.back().data(), outputs.back().size_bytes());
    if (!s.ok()) return fail(MeasureErrorKind::kRuntimeError, "CUDA error: " + s.message());
  }
  if (b.fault == TestFault::kWrong) outputs[0].SetFromDouble(0, outputs[0].GetAsDouble(0) + 1000);
  if (options.check_correctness) {
    for (size_t k = 0; k < outputs.size(); ++k) {
      CompareResult c = CompareBuffers(outputs[k], ref.outputs[k], ref.rtol, ref.atol);
      if (!c.equal) {
        return fail(MeasureErrorKind::kWrongResult, "output '" + params[ref.inputs.size() + k]->name +
                                                        "' differs from the " + ref.method + " reference: " + c.message);
      }
    }
  }
  // A kernel that writes its inputs would time other work than it was checked on.
  for (size_t k = 0; k < ref.inputs.size(); ++k) {
    if (input_buffer[k] < 0) continue;
    HostBuffer after = HostBuffer::Like(params[k]);
    Status s = program.Download(input_buffer[k], after.data(), after.size_bytes());
    if (!s.ok()) return fail(MeasureErrorKind::kRuntimeError, "CUDA error: " + s.message());
    if (std::memcmp(after.data(), ref.inputs[k].data(), size_t(after.size_bytes())) != 0) {
      return fail(MeasureErrorKind::kWrongResult, "the kernel wrote to its input buffer '" + params[k]->name + "'");
    }
  }
  auto times = program.Time(options, *first);
  if (!times.ok()) return fail(MeasureErrorKind::kRuntimeError, "CUDA error while timing: " + times.status().message());
  r.repeat_seconds = std::move(*times);
  return r;
}

}  // namespace tunefarm::runner
