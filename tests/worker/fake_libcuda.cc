// A stand-in for the NVIDIA driver (libcuda.so.1) for tests on machines
// without a GPU: one "sm_90" device whose memory is host memory and whose
// kernels do nothing, each launch taking 10 simulated microseconds on the
// events' clock. A launch of the runner's test-fault kernel
// (tunefarm_test_fault_null_write) sets CUDA_ERROR_ILLEGAL_ADDRESS, which,
// as on a real GPU, every later call returns (a sticky error).
//
// Loaded by the runner through TUNEFARM_LIBCUDA (worker/cuda_driver.h); built
// as its own shared library (tests/CMakeLists.txt), never linked. Lets the
// tests drive the runner's whole CUDA path -- open, load, copy, launch, time,
// fail, exit, restart -- which only the outputs' values cannot check.
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kInvalidDevice = 101, kInvalidImage = 200,
                   kIllegalAddress = 700;
struct Function {
  std::string name;
};
struct Event {
  double micros = 0;
};

CUresult sticky = kSuccess;  // the context's sticky error, once a kernel faulted
double clock_micros = 0;     // the simulated GPU clock
int context_tag = 0;         // what the primary context's handle points to
int module_tag = 0;

int Attribute(int attribute) {
  switch (attribute) {
    case 1: return 1024;                // max threads per block
    case 2: case 3: return 1024;        // max block x, y
    case 4: return 64;                  // max block z
    case 5: return 2147483647;          // max grid x
    case 6: case 7: return 65535;       // max grid y, z
    case 8: return 48 * 1024;           // shared per block
    case 12: return 65536;              // registers per block
    case 13: return 1980000;            // clock, kHz
    case 16: return 132;                // SMs
    case 36: return 2619000;            // memory clock, kHz
    case 37: return 5120;               // bus bits
    case 38: return 50 * 1024 * 1024;   // L2
    case 75: return 9;                  // compute capability
    case 76: return 0;
    case 82: return 65536;              // registers per SM
    case 97: return 227 * 1024;         // opt-in shared per block
    default: return 0;
  }
}

}  // namespace

extern "C" {

CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case kSuccess: *name = "CUDA_SUCCESS"; return kSuccess;
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; return kSuccess;
    case kInvalidDevice: *name = "CUDA_ERROR_INVALID_DEVICE"; return kSuccess;
    case kInvalidImage: *name = "CUDA_ERROR_INVALID_IMAGE"; return kSuccess;
    case kIllegalAddress: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return kSuccess;
    default: *name = nullptr; return kInvalidValue;
  }
}
CUresult cuGetErrorString(CUresult error, const char** text) {
  *text = error == kIllegalAddress ? "an illegal memory access was encountered" : "fake driver error";
  return kSuccess;
}
CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDriverGetVersion(int* version) { *version = 12040; return kSuccess; }
CUresult cuDeviceGetCount(int* count) { *count = 1; return kSuccess; }
CUresult cuDeviceGet(int* device, int ordinal) {
  if (ordinal != 0) return kInvalidDevice;
  *device = 0;
  return kSuccess;
}
CUresult cuDeviceGetName(char* name, int len, int) {
  std::strncpy(name, "Fake GPU for tests", size_t(len));
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int) { *value = Attribute(attribute); return kSuccess; }
CUresult cuDeviceTotalMem_v2(size_t* bytes, int) { *bytes = size_t(80) << 30; return kSuccess; }
CUresult cuDevicePrimaryCtxRetain(void** context, int) { *context = &context_tag; return kSuccess; }
CUresult cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
CUresult cuCtxSetCurrent(void*) { return sticky; }
CUresult cuCtxSynchronize() { return sticky; }
CUresult cuStreamSynchronize(void*) { return sticky; }
CUresult cuModuleLoadData(void** module, const void* image) {
  if (sticky != kSuccess) return sticky;
  if (std::memcmp(image, "\x7f" "ELF", 4) != 0) return kInvalidImage;  // a cubin is an ELF image
  *module = &module_tag;
  return kSuccess;
}
CUresult cuModuleGetFunction(Function** function, void*, const char* name) {
  if (sticky != kSuccess) return sticky;
  *function = new Function{name};  // leaked: a test process loads a handful
  return kSuccess;
}
CUresult cuModuleUnload(void*) { return sticky; }
CUresult cuFuncGetAttribute(int* value, int attribute, Function*) {
  *value = attribute == 0 ? 1024 : attribute == 4 ? 32 : 0;  // max threads per block; registers
  return sticky;
}
CUresult cuFuncSetAttribute(Function*, int, int) { return sticky; }
CUresult cuLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, void*, void** params, void**) {
  if (sticky != kSuccess) return sticky;
  if (gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) return kInvalidValue;
  if (f->name == "tunefarm_test_fault_null_write") {
    // A write through the kernel's first argument: a null pointer faults.
    unsigned long long pointer = 0;
    std::memcpy(&pointer, params[0], sizeof pointer);
    if (pointer == 0) sticky = kIllegalAddress;  // reported by later calls, as a real launch is asynchronous
  }
  clock_micros += 10;
  return kSuccess;
}
CUresult cuMemAlloc_v2(unsigned long long* pointer, size_t bytes) {
  if (sticky != kSuccess) return sticky;
  *pointer = reinterpret_cast<unsigned long long>(std::calloc(bytes, 1));
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long pointer) {
  std::free(reinterpret_cast<void*>(pointer));
  return sticky;
}
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t bytes) {
  if (sticky != kSuccess) return sticky;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t bytes) {
  if (sticky != kSuccess) return sticky;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long dst, unsigned char value, size_t count) {
  if (sticky != kSuccess) return sticky;
  std::memset(reinterpret_cast<void*>(dst), value, count);
  return kSuccess;
}
CUresult cuEventCreate(Event** event, unsigned) { *event = new Event; return sticky; }
CUresult cuEventRecord(Event* event, void*) { event->micros = clock_micros; return sticky; }
CUresult cuEventSynchronize(Event*) { return sticky; }
CUresult cuEventElapsedTime_v2(float* ms, Event* start, Event* end) {
  *ms = float((end->micros - start->micros) / 1e3);
  return sticky;
}
CUresult cuEventDestroy_v2(Event* event) { delete event; return kSuccess; }

}  // extern "C"
