// The runner's CUDA GPU: context, programs, launches, event timing (runner_cuda.h).
#include "runner_cuda.h"

#include <algorithm>

#include "tunefarm/measure/timing.h"

namespace tunefarm::runner {

using namespace cuda_driver;

Result<std::unique_ptr<CudaGpu>> CudaGpu::Open(int index) {
  TF_ASSIGN_OR_RETURN(const Api* cu, Driver());
  TF_ASSIGN_OR_RETURN(CudaDeviceInfo info, QueryCudaDevice(index));
  CUdevice device = 0;
  TF_RETURN_IF_ERROR(cu->Check(cu->cuDeviceGet(&device, index), "cuDeviceGet"));
  CUcontext context = nullptr;
  Status retained = cu->Check(cu->cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  if (!retained.ok()) {
    return Status::FailedPrecondition("cannot open CUDA device cuda:" + std::to_string(index) + " (" + info.name +
                                      "): " + retained.message());
  }
  std::unique_ptr<CudaGpu> gpu(new CudaGpu(*cu, std::move(info), device, context));
  TF_RETURN_IF_ERROR(cu->Check(cu->cuCtxSetCurrent(context), "cuCtxSetCurrent"));
  return gpu;
}

CudaGpu::~CudaGpu() {
  // Errors are ignored on the way out: a broken context is released all the same.
  if (scratch_ != 0) (void)cu_.cuMemFree(scratch_);
  (void)cu_.cuDevicePrimaryCtxRelease(device_);
}

Status CudaGpu::Check(CUresult result, const char* call) {
  Status s = cu_.Check(result, call);
  if (!s.ok() && broken_reason_.empty()) broken_reason_ = s.message();
  return s;
}

Status CudaGpu::FlushCache() {
  if (scratch_ == 0) {
    TF_RETURN_IF_ERROR(Check(cu_.cuMemAlloc(&scratch_, size_t(kCudaFlushBytes)), "cuMemAlloc (cache flush buffer)"));
  }
  // A new value each time, so no layer can skip a write of what is already there.
  return Check(cu_.cuMemsetD8(scratch_, ++flush_value_, size_t(kCudaFlushBytes)), "cuMemsetD8 (cache flush)");
}

Result<std::unique_ptr<CudaProgram>> CudaProgram::Load(CudaGpu& gpu, const CudaBuild& build) {
  const Api& cu = gpu.api();
  std::unique_ptr<CudaProgram> p(new CudaProgram(gpu));
  p->module_ = build.module;
  if (build.compiled.cubin.empty()) return Status::InvalidArgument("the compiled module is empty");
  // Not gpu.Check: a cubin the driver refuses leaves the context usable.
  TF_RETURN_IF_ERROR(cu.Check(cu.cuModuleLoadData(&p->handle_, build.compiled.cubin.data()),
                              ("cuModuleLoadData (driver " + gpu.info().DriverText() + ")").c_str()));
  for (const cuda::CudaLaunch& launch : p->module_.launches) {
    CUfunction f = nullptr;
    TF_RETURN_IF_ERROR(cu.Check(cu.cuModuleGetFunction(&f, p->handle_, launch.kernel.c_str()),
                                ("cuModuleGetFunction(" + launch.kernel + ")").c_str()));
    // What the loaded kernel really needs decides, beside NVRTC's report:
    // its registers bound the threads a block may have.
    int max_threads = 0;
    TF_RETURN_IF_ERROR(cu.Check(cu.cuFuncGetAttribute(&max_threads, kFuncMaxThreadsPerBlock, f),
                                "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)"));
    if (launch.threads_per_block() > max_threads) {
      int regs = 0;
      (void)cu.cuFuncGetAttribute(&regs, kFuncNumRegs, f);
      return Status::InvalidArgument("kernel " + launch.kernel + ": " + std::to_string(launch.threads_per_block()) +
                                     " threads per block, but with " + std::to_string(regs) +
                                     " registers per thread the device runs at most " + std::to_string(max_threads));
    }
    if (launch.dynamic_shared_bytes > 0) {
      TF_RETURN_IF_ERROR(cu.Check(
          cu.cuFuncSetAttribute(f, kFuncMaxDynamicSharedSizeBytes, int(launch.dynamic_shared_bytes)),
          ("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(launch.dynamic_shared_bytes) + ")")
              .c_str()));
    }
    p->functions_.push_back(f);
  }
  p->pointers_.assign(p->module_.buffers.size(), 0);
  for (size_t i = 0; i < p->module_.buffers.size(); ++i) {
    const cuda::CudaBuffer& b = p->module_.buffers[i];
    if (b.bytes() <= 0) continue;  // never dereferenced: a null pointer
    TF_RETURN_IF_ERROR(gpu.Check(cu.cuMemAlloc(&p->pointers_[i], size_t(b.bytes())),
                                 ("cuMemAlloc(" + std::to_string(b.bytes()) + " bytes for " + b.name + ")").c_str()));
  }
  TF_RETURN_IF_ERROR(gpu.Check(cu.cuEventCreate(&p->start_, kEventDefault), "cuEventCreate"));
  TF_RETURN_IF_ERROR(gpu.Check(cu.cuEventCreate(&p->end_, kEventDefault), "cuEventCreate"));
  return p;
}

CudaProgram::~CudaProgram() {
  const Api& cu = gpu_.api();
  // Wait for queued work before freeing what it uses; errors are ignored on
  // the way out (a broken context ends the runner anyway).
  (void)cu.cuCtxSynchronize();
  if (start_ != nullptr) (void)cu.cuEventDestroy(start_);
  if (end_ != nullptr) (void)cu.cuEventDestroy(end_);
  for (CUdeviceptr p : pointers_) {
    if (p != 0) (void)cu.cuMemFree(p);
  }
  if (handle_ != nullptr) (void)cu.cuModuleUnload(handle_);
}

Status CudaProgram::Upload(int buffer, const void* data, int64_t bytes) {
  if (bytes <= 0) return Status::OK();
  return gpu_.Check(gpu_.api().cuMemcpyHtoD(pointers_.at(size_t(buffer)), data, size_t(bytes)),
                    ("cuMemcpyHtoD(" + module_.buffers.at(size_t(buffer)).name + ")").c_str());
}

Status CudaProgram::Download(int buffer, void* data, int64_t bytes) {
  if (bytes <= 0) return Status::OK();
  return gpu_.Check(gpu_.api().cuMemcpyDtoH(data, pointers_.at(size_t(buffer)), size_t(bytes)),
                    ("cuMemcpyDtoH(" + module_.buffers.at(size_t(buffer)).name + ")").c_str());
}

Status CudaProgram::Fill(int buffer, unsigned char byte) {
  const cuda::CudaBuffer& b = module_.buffers.at(size_t(buffer));
  if (b.bytes() <= 0) return Status::OK();
  return gpu_.Check(gpu_.api().cuMemsetD8(pointers_[size_t(buffer)], byte, size_t(b.bytes())),
                    ("cuMemsetD8(" + b.name + ")").c_str());
}

Status CudaProgram::Enqueue() {
  const Api& cu = gpu_.api();
  std::vector<void*> args;
  for (size_t k = 0; k < module_.launches.size(); ++k) {
    const cuda::CudaLaunch& l = module_.launches[k];
    // cuLaunchKernel takes the address of each argument: here, of each
    // buffer's device pointer, in the kernel's parameter order.
    args.clear();
    for (int buffer : l.buffers) args.push_back(&pointers_.at(size_t(buffer)));
    TF_RETURN_IF_ERROR(gpu_.Check(
        cu.cuLaunchKernel(functions_[k], unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2]),
                          unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2]),
                          unsigned(l.dynamic_shared_bytes), nullptr, args.empty() ? nullptr : args.data(), nullptr),
        ("cuLaunchKernel(" + l.kernel + ")").c_str()));
  }
  return Status::OK();
}

Result<double> CudaProgram::TimeLaunches(int64_t number) {
  const Api& cu = gpu_.api();
  TF_RETURN_IF_ERROR(gpu_.Check(cu.cuEventRecord(start_, nullptr), "cuEventRecord"));
  for (int64_t i = 0; i < number; ++i) TF_RETURN_IF_ERROR(Enqueue());
  TF_RETURN_IF_ERROR(gpu_.Check(cu.cuEventRecord(end_, nullptr), "cuEventRecord"));
  // A kernel's own failure (illegal address, ...) surfaces here.
  TF_RETURN_IF_ERROR(gpu_.Check(cu.cuEventSynchronize(end_), "cuEventSynchronize (after the launches)"));
  float ms = 0;
  TF_RETURN_IF_ERROR(gpu_.Check(cu.cuEventElapsedTime(&ms, start_, end_), "cuEventElapsedTime"));
  return double(ms) / 1e3;
}

Result<double> CudaProgram::RunOnce() {
  TF_ASSIGN_OR_RETURN(double seconds, TimeLaunches(1));
  // Everything queued is done, also what the events did not cover.
  TF_RETURN_IF_ERROR(gpu_.Check(gpu_.api().cuCtxSynchronize(), "cuCtxSynchronize"));
  return seconds;
}

Result<std::vector<double>> CudaProgram::Time(const MeasureOptions& options, double first_run_seconds) {
  // The flush is queued before the group's start event: it is not timed.
  return TimeGroups(
      options, first_run_seconds, [&](int64_t number) { return TimeLaunches(number); },
      [&] { return gpu_.FlushCache(); });
}

}  // namespace tunefarm::runner
