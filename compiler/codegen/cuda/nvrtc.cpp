// NVRTC through dlopen: the library is found and bound once (a function-local
// static, so concurrent first calls wait for one load), then each compile
// makes and destroys its own program.
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <regex>

namespace tunefarm::cuda {

namespace {

// The NVRTC C API, declared here: tunefarm builds without CUDA's headers.
using NvrtcResult = int;
using NvrtcProgram = struct NvrtcProgramOpaque*;
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcInvalidOption = 5;
constexpr NvrtcResult kNvrtcCompilation = 6;

struct NvrtcApi {
  std::string path;   // the library loaded, when it was
  std::string error;  // why none was, when none was
  NvrtcResult (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  NvrtcResult (*destroy)(NvrtcProgram*) = nullptr;
  NvrtcResult (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  NvrtcResult (*log_size)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*log)(NvrtcProgram, char*) = nullptr;
  NvrtcResult (*cubin_size)(NvrtcProgram, size_t*) = nullptr;
  NvrtcResult (*cubin)(NvrtcProgram, char*) = nullptr;
  const char* (*error_string)(NvrtcResult) = nullptr;
  bool ok() const { return error.empty(); }
};

template <typename F>
bool Bind(void* handle, const char* symbol, F* out, std::string* error) {
  *out = reinterpret_cast<F>(dlsym(handle, symbol));
  if (*out == nullptr) *error += std::string(error->empty() ? "" : "; ") + "no symbol " + symbol;
  return *out != nullptr;
}

NvrtcApi LoadNvrtc() {
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    dirs.push_back(std::string(home) + "/lib64/");
  }
  dirs.push_back("/usr/local/cuda/lib64/");
  dirs.push_back("");  // the dynamic loader's search path
  NvrtcApi api;
  std::string tried;
  for (const std::string& dir : dirs) {
    for (const char* file : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) {
      std::string path = dir + file;
      // Never closed: the API stays bound until the process ends.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        const char* why = dlerror();
        tried += "\n  " + path + ": " + (why ? why : "not loadable");
        continue;
      }
      std::string missing;
      bool bound = Bind(handle, "nvrtcCreateProgram", &api.create, &missing) &
                   Bind(handle, "nvrtcDestroyProgram", &api.destroy, &missing) &
                   Bind(handle, "nvrtcCompileProgram", &api.compile, &missing) &
                   Bind(handle, "nvrtcGetProgramLogSize", &api.log_size, &missing) &
                   Bind(handle, "nvrtcGetProgramLog", &api.log, &missing) &
                   Bind(handle, "nvrtcGetCUBINSize", &api.cubin_size, &missing) &
                   Bind(handle, "nvrtcGetCUBIN", &api.cubin, &missing) &
                   Bind(handle, "nvrtcGetErrorString", &api.error_string, &missing);
      if (bound) {
        api.path = path;
        return api;
      }
      tried += "\n  " + path + ": " + missing;
    }
  }
  api.error = "NVRTC (libnvrtc.so, .so.13, .so.12) was not found; looked in $CUDA_HOME/lib64, /usr/local/cuda/lib64 "
              "and the loader's path:" + tried;
  return api;
}

const NvrtcApi& Nvrtc() {
  static const NvrtcApi api = LoadNvrtc();
  return api;
}

bool ValidArch(std::string_view arch) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_") return false;
  for (char c : arch.substr(3)) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// Destroys the program on every path out of CompileCudaSource.
struct ProgramGuard {
  const NvrtcApi& api;
  NvrtcProgram program = nullptr;
  ~ProgramGuard() {
    if (program != nullptr) api.destroy(&program);
  }
};

}  // namespace

bool NvrtcAvailable(std::string* why_not) {
  const NvrtcApi& api = Nvrtc();
  if (!api.ok() && why_not != nullptr) *why_not = api.error;
  return api.ok();
}

Result<CompiledCuda> CompileCudaSource(const std::string& source, std::string_view arch) {
  if (!ValidArch(arch)) {
    return Status::InvalidArgument("cuda: arch '" + std::string(arch) + "' is not sm_ followed by digits (e.g. sm_90)");
  }
  const NvrtcApi& api = Nvrtc();
  if (!api.ok()) return Status::FailedPrecondition(api.error);
  ProgramGuard guard{api};
  NvrtcResult rc = api.create(&guard.program, source.c_str(), "tunefarm.cu", 0, nullptr, nullptr);
  if (rc != kNvrtcSuccess) {
    guard.program = nullptr;
    return Status::Internal(std::string("nvrtcCreateProgram: ") + api.error_string(rc));
  }
  std::string arch_option = "--gpu-architecture=" + std::string(arch);
  // NVRTC optimizes by default and takes no -O3; ptxas' -v report is in the log.
  const char* options[] = {arch_option.c_str(), "-default-device", "--std=c++17", "--ptxas-options=-v"};
  NvrtcResult compiled = api.compile(guard.program, int(std::size(options)), options);
  CompiledCuda out;
  size_t log_size = 0;
  if (api.log_size(guard.program, &log_size) == kNvrtcSuccess && log_size > 1) {
    out.log.resize(log_size);
    if (api.log(guard.program, out.log.data()) != kNvrtcSuccess) out.log.clear();
    while (!out.log.empty() && out.log.back() == '\0') out.log.pop_back();
  }
  if (compiled == kNvrtcCompilation || compiled == kNvrtcInvalidOption) {
    return Status::InvalidArgument("cuda: NVRTC (" + api.path + ") cannot compile for " + std::string(arch) + ": " +
                                   api.error_string(compiled) + "\n" + out.log);
  }
  if (compiled != kNvrtcSuccess) {
    return Status::Internal(std::string("nvrtcCompileProgram: ") + api.error_string(compiled) + "\n" + out.log);
  }
  size_t cubin_size = 0;
  if ((rc = api.cubin_size(guard.program, &cubin_size)) != kNvrtcSuccess || cubin_size == 0) {
    return Status::Internal(std::string("nvrtcGetCUBINSize: ") + (rc != kNvrtcSuccess ? api.error_string(rc) : "empty"));
  }
  out.cubin.resize(cubin_size);
  if ((rc = api.cubin(guard.program, out.cubin.data())) != kNvrtcSuccess) {
    return Status::Internal(std::string("nvrtcGetCUBIN: ") + api.error_string(rc));
  }
  out.kernels = ParsePtxasReport(out.log);
  return out;
}

std::vector<CudaKernelResources> ParsePtxasReport(std::string_view log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kStack(R"((\d+) bytes stack frame, (\d+) bytes spill stores)");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kLmem(R"((\d+) bytes lmem)");
  std::vector<CudaKernelResources> kernels;
  std::map<std::string, size_t> by_name;
  std::string properties_of;  // the function the next stack-frame line describes
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string line(log.substr(start, end - start));
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      by_name[m[1]] = kernels.size();
      kernels.push_back(CudaKernelResources{m[1], 0, 0, 0, 0});
    } else if (std::regex_search(line, m, kProperties)) {
      properties_of = m[1];
    } else if (std::regex_search(line, m, kStack)) {
      auto it = by_name.find(properties_of);
      if (it != by_name.end()) {
        kernels[it->second].local_bytes = std::max(kernels[it->second].local_bytes, int64_t(std::stoll(m[1])));
        kernels[it->second].spill_bytes = int64_t(std::stoll(m[2]));
      }
    } else if (std::regex_search(line, m, kRegisters) && !kernels.empty()) {
      CudaKernelResources& k = kernels.back();
      k.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, kSmem)) k.shared_bytes = int64_t(std::stoll(m[1]));
      if (std::regex_search(line, m, kLmem)) k.local_bytes = std::max(k.local_bytes, int64_t(std::stoll(m[1])));
    }
  }
  return kernels;
}

}  // namespace tunefarm::cuda
