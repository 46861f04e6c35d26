// The header of a cuda kernel (kernel_header.h): the cubin embedded, the
// launch shapes as #defines, and a host launcher on the CUDA driver API.
//
// The launcher is what the cuda runner does to time a candidate
// (worker/runner_cuda.cpp): load the module from the cubin, get each
// launch's function, opt the ones with dynamic shared memory in to it, and
// cuLaunchKernel each launch in order with the address of each buffer's
// device pointer as its arguments (the kernels take one pointer per buffer,
// in CudaLaunch::buffers order). It is C99 and C++ alike, so one text serves
// nvcc, g++ and cc; its functions are static, so the header is all a user
// needs besides <cuda.h> and -lcuda.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "kernel_header_internal.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/kernel_header.h"

namespace tunefarm::tuner {

namespace {

// Workspaces start at multiples of this in the one workspace allocation
// (cuMemAlloc's own alignment; the kernels need 16 for vector accesses).
constexpr int64_t kWorkspaceAlignment = 256;

std::string Upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = std::isalnum(static_cast<unsigned char>(c)) ? char(std::toupper(static_cast<unsigned char>(c))) : '_';
  return out;
}

// C names for the launcher's params: the buffer names, made valid and kept
// clear of C keywords, of `stream` and `workspace` (the launcher's own
// params) and of each other.
std::vector<std::string> ParamNames(const ir::PrimFunc& f) {
  static const std::set<std::string> kTaken = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
      "class", "delete", "new", "this", "true", "false", "template", "typename", "namespace", "operator", "private",
      "public", "protected", "virtual", "friend", "using", "stream", "workspace", "r", "buffers", "args"};
  std::set<std::string> used(kTaken);
  std::vector<std::string> names;
  for (const ir::Buffer& b : f.params) {
    std::string name;
    for (char c : b->name) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "p_" + name;
    while (used.count(name) > 0) name += "_";
    used.insert(name);
    names.push_back(name);
  }
  return names;
}

std::string ParamList(const std::vector<std::string>& params) {
  std::string s;
  for (const std::string& p : params) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::string ShapeText(const ir::Buffer& b) {
  std::string shape;
  for (size_t d = 0; d < b->shape.size(); ++d) shape += (d ? "][" : "[") + std::to_string(b->shape[d]);
  return b->dtype.ToString() + shape + "]";
}

// " *   cuMemAlloc(&A, 8192); cuMemAlloc(&B, 6144);\n" ...: each buffer's
// allocation for the usage note, a few a line.
std::string AllocLines(const ir::PrimFunc& f, const std::vector<std::string>& params, const std::string& workspace) {
  std::vector<std::string> calls;
  for (size_t i = 0; i < f.params.size(); ++i) {
    calls.push_back("cuMemAlloc(&" + params[i] + ", " + std::to_string(f.params[i]->size_bytes()) + ");");
  }
  if (!workspace.empty()) calls.push_back("cuMemAlloc(&workspace, " + workspace + ");");
  std::string s, line;
  for (const std::string& call : calls) {
    if (!line.empty() && line.size() + call.size() > 90) {
      s += " *  " + line + "\n";
      line.clear();
    }
    line += " " + call;
  }
  return s + " *  " + line + "\n";
}

// ", (const float*)A, (const float*)B, (float*)C[, (void*)workspace]": a
// call with CUdeviceptr variables named as the params, for the usage note.
std::string CallArgs(const ir::PrimFunc& f, const std::vector<std::string>& params, bool has_workspace) {
  std::string s;
  for (size_t i = 0; i < f.params.size(); ++i) {
    s += std::string(", (") + (i < f.num_inputs ? "const " : "") + detail::HeaderCType(f.params[i]->dtype) + "*)" + params[i];
  }
  return s + (has_workspace ? ", (void*)workspace" : "");
}

// `static const unsigned char mm_cubin[N] = {...};`, 16 bytes a line.
std::string CubinArray(const std::string& name, std::string_view cubin) {
  std::string s = "static const unsigned char " + name + "_cubin[" + std::to_string(cubin.size()) +
                  "] __attribute__((aligned(16))) = {";
  char byte[8];
  for (size_t i = 0; i < cubin.size(); ++i) {
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(cubin[i]));
    s += (i % 16 == 0 ? "\n    " : " ") + std::string(byte) + (i + 1 < cubin.size() ? "," : "");
  }
  return s + "\n};\n";
}

// What the sections of one header share.
struct LauncherText {
  const ir::PrimFunc& f;
  const cuda::CudaModule& module;
  std::string name;                // the PrimFunc's: prefix of every C name
  std::string macro;               // NAME: prefix of every #define
  std::vector<std::string> params; // the launcher's buffer params (ParamNames)
  std::vector<int64_t> offsets;    // per module buffer: its offset in the workspace, -1 for params
  int64_t workspace_bytes = 0;
  bool has_workspace = false;

  LauncherText(const ir::PrimFunc& func, const cuda::CudaModule& m)
      : f(func), module(m), name(func.name), macro(Upper(func.name)), params(ParamNames(func)),
        offsets(m.buffers.size(), -1) {
    for (size_t i = 0; i < module.buffers.size(); ++i) {
      if (module.buffers[i].param_index >= 0) continue;
      has_workspace = true;
      offsets[i] = workspace_bytes;
      workspace_bytes += (module.buffers[i].bytes() + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
    }
  }
  std::string Launch(size_t k) const { return macro + "_LAUNCH" + std::to_string(k) + "_"; }
  size_t FunctionCount() const { return std::max<size_t>(module.launches.size(), 1); }

  // `CUresult mm_launch(CUstream stream, const float* A /* input f32[..] */, ...)`
  std::string Signature() const {
    std::string s = "CUresult " + name + "_launch(CUstream stream";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const ir::Buffer& b = f.params[i];
      const bool in = i < f.num_inputs;
      s += std::string(",\n    ") + (in ? "const " : "") + detail::HeaderCType(b->dtype) + "* " + params[i] +
           (b->constant ? "  /* constant input " : in ? "  /* input " : "  /* output ") + ShapeText(b) + " */";
    }
    if (has_workspace) s += ",\n    void* workspace  /* " + name + "_workspace_bytes of device memory */";
    return s + ")";
  }

  // The opening comment: what was built, what the launcher does, how to call and link it.
  std::string Comment(const Workload& w, const Target& t, const std::string& schedule_description,
                      int64_t record_id) const {
    std::string s = "/* Generated by tunefarm compile. Do not edit.\n";
    s += " * workload: " + w.name + " (structural hash " + StructuralHashHex(w) + ")\n";
    s += " * target:   " + t.ToString() + "\n";
    s += " * schedule: " + schedule_description + "\n";
    if (record_id > 0) s += " * record id: " + std::to_string(record_id) + "\n";
    s += " *\n * The kernels for " + t.arch + " GPUs (the cubin `tunefarm compile -o` wrote; a copy is below) and a\n";
    s += " * host launcher on the CUDA driver API:\n *\n *   " + name + "_launch(stream, " + ParamList(params) +
         (has_workspace ? ", workspace)" : ")");
    s += "\n *\n * enqueues the program's " + std::to_string(module.launches.size()) +
         " kernel launch(es) on `stream` (0: the default stream) and returns the first\n"
         " * error, CUDA_SUCCESS when all were enqueued (a kernel's own failure shows at the next\n"
         " * synchronization). Buffers are device memory (cuMemAlloc, cudaMalloc), dense and row-major,\n"
         " * 16-byte aligned at least (those allocators give 256).";
    if (has_workspace) {
      s += " `workspace` is " + name + "_workspace_bytes of\n"
           " * device memory the kernels use as scratch (written before read): one per launch in flight.";
    }
    s += "\n *\n * The first call loads the module into the context current on the calling thread; use the\n"
         " * launcher from that context only. " + name + "_load() loads it ahead (do so before calling from\n"
         " * several threads: loading is not thread-safe), " + name + "_unload() unloads it.\n"
         " *\n * Use (C or C++; include this header in one translation unit: it holds the cubin and the\n"
         " * launcher's state):\n"
         " *   #include \"kernel.h\"  (this header, named as tunefarm compile wrote it)\n"
         " *   cuInit(0); CUdevice dev; cuDeviceGet(&dev, 0);\n"
         " *   CUcontext ctx; cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);\n"
         " *   CUdeviceptr " + ParamList(params) + (has_workspace ? ", workspace" : "") + ";\n" +
         AllocLines(f, params, has_workspace ? name + "_workspace_bytes" : "") +
         " *   cuMemcpyHtoD(...) the inputs;\n"
         " *   CUresult r = " + name + "_launch(0" + CallArgs(f, params, has_workspace) + ");\n"
         " *   cuCtxSynchronize();\n"
         " * Build: nvcc app.cu -lcuda, or cc -I/usr/local/cuda/include app.c -lcuda (libcuda comes with\n"
         " * the NVIDIA driver; to link where there is none: -L/usr/local/cuda/lib64/stubs). No CUDA runtime\n"
         " * library is needed. */\n";
    return s;
  }

  // The launch shapes, for users to see (and size their own checks by), and the workspace size.
  std::string Defines(const Target& t) const {
    std::string s = "#define " + macro + "_CUDA_ARCH \"" + t.arch + "\"\n";
    s += "#define " + macro + "_NUM_LAUNCHES " + std::to_string(module.launches.size()) + "\n";
    for (size_t k = 0; k < module.launches.size(); ++k) {
      const cuda::CudaLaunch& l = module.launches[k];
      const std::string p = Launch(k);
      s += "\n/* launch " + std::to_string(k) + ": " + l.kernel + ", " + std::to_string(l.threads_per_block()) +
           " threads per block */\n";
      s += "#define " + p + "KERNEL \"" + l.kernel + "\"\n";
      const char* axes[] = {"X", "Y", "Z"};
      for (size_t a = 0; a < 3; ++a) s += "#define " + p + "GRID_" + axes[a] + " " + std::to_string(l.grid[a]) + "\n";
      for (size_t a = 0; a < 3; ++a) s += "#define " + p + "BLOCK_" + axes[a] + " " + std::to_string(l.block[a]) + "\n";
      s += "#define " + p + "DYNAMIC_SHARED_BYTES " + std::to_string(l.dynamic_shared_bytes) + "\n";
    }
    if (has_workspace) {
      s += "\n#define " + macro + "_WORKSPACE_BYTES ((size_t)" + std::to_string(workspace_bytes) + ")\n";
      s += "static const size_t " + name + "_workspace_bytes = " + macro + "_WORKSPACE_BYTES;\n";
    }
    return s;
  }

  // <name>_load: the module and each launch's function, the ones with
  // dynamic shared memory opted in to it; <name>_unload.
  std::string LoadAndUnload() const {
    std::string s = "\n/* Loads the module into the current context (once; later calls return CUDA_SUCCESS). */\n";
    s += "static inline CUresult " + name + "_load(void) {\n  CUmodule module;\n  CUresult r;\n";
    s += "  if (" + name + "_module_ != NULL) return CUDA_SUCCESS;\n";
    s += "  r = cuModuleLoadData(&module, " + name + "_cubin);\n  if (r != CUDA_SUCCESS) return r;\n";
    for (size_t k = 0; k < module.launches.size(); ++k) {
      const std::string fn = name + "_functions_[" + std::to_string(k) + "]";
      s += "  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(&" + fn + ", module, " + Launch(k) + "KERNEL);\n";
      if (module.launches[k].dynamic_shared_bytes > 0) {
        s += "  if (r == CUDA_SUCCESS) r = cuFuncSetAttribute(" + fn +
             ", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, " + Launch(k) + "DYNAMIC_SHARED_BYTES);\n";
      }
    }
    s += "  if (r != CUDA_SUCCESS) {\n    cuModuleUnload(module);\n    return r;\n  }\n";
    s += "  " + name + "_module_ = module;\n  return CUDA_SUCCESS;\n}\n";
    s += "\n/* Unloads the module " + name + "_load loaded, if any. */\n";
    s += "static inline CUresult " + name + "_unload(void) {\n  CUmodule module = " + name + "_module_;\n";
    s += "  if (module == NULL) return CUDA_SUCCESS;\n  " + name + "_module_ = NULL;\n  return cuModuleUnload(module);\n}\n";
    return s;
  }

  // <name>_launch: each buffer's device address in module order, then each
  // launch with the addresses of its buffers' entries as kernel arguments.
  std::string Launcher() const {
    std::string s = "\n/* Enqueues every kernel of " + name + " on `stream`; returns the first error. */\n";
    s += "static inline " + Signature() + " {\n";
    s += "  void* buffers[" + std::to_string(std::max<size_t>(module.buffers.size(), 1)) + "];\n";
    s += "  CUresult r = " + name + "_load();\n  if (r != CUDA_SUCCESS) return r;\n";
    if (has_workspace) s += "  if (workspace == NULL && " + name + "_workspace_bytes > 0) return CUDA_ERROR_INVALID_VALUE;\n";
    if (module.buffers.empty()) s += "  buffers[0] = NULL;\n";
    for (size_t i = 0; i < module.buffers.size(); ++i) {
      const cuda::CudaBuffer& b = module.buffers[i];
      s += "  buffers[" + std::to_string(i) + "] = ";
      if (b.param_index >= 0 && size_t(b.param_index) < params.size()) {
        s += "(void*)" + params[size_t(b.param_index)];
      } else if (b.param_index < 0 && b.bytes() > 0) {
        s += "(char*)workspace + " + std::to_string(offsets[i]);
      } else {
        s += "NULL";  // no bytes: never dereferenced
      }
      s += ";  /* " + b.name + (b.param_index < 0 ? " (workspace)" : "") + " */\n";
    }
    for (size_t k = 0; k < module.launches.size(); ++k) {
      const cuda::CudaLaunch& l = module.launches[k];
      const std::string p = Launch(k);
      s += "  {\n";
      std::string args = "NULL";
      if (!l.buffers.empty()) {
        s += "    void* args[] = {";
        for (size_t j = 0; j < l.buffers.size(); ++j) s += (j ? ", &buffers[" : "&buffers[") + std::to_string(l.buffers[j]) + "]";
        s += "};\n";
        args = "args";
      }
      s += "    r = cuLaunchKernel(" + name + "_functions_[" + std::to_string(k) + "], " + p + "GRID_X, " + p +
           "GRID_Y, " + p + "GRID_Z, " + p + "BLOCK_X, " + p + "BLOCK_Y, " + p + "BLOCK_Z,\n                       " +
           p + "DYNAMIC_SHARED_BYTES, stream, " + args + ", NULL);\n";
      s += "    if (r != CUDA_SUCCESS) return r;\n  }\n";
    }
    return s + "  return CUDA_SUCCESS;\n}\n";
  }
};

}  // namespace

std::string CudaLauncherHeaderText(const Workload& w, const ir::PrimFunc& f, const cuda::CudaModule& module,
                                   std::string_view cubin, const Target& t, const std::string& schedule_description,
                                   int64_t record_id) {
  const LauncherText text(f, module);
  const std::string guard = detail::HeaderGuard("CUDA_", f.name);
  std::string s = text.Comment(w, t, schedule_description, record_id);
  s += "#ifndef " + guard + "\n#define " + guard + "\n\n#include <cuda.h>\n#include <stddef.h>\n#include <stdint.h>\n\n";
  s += text.Defines(t);
  s += "\n" + CubinArray(f.name, cubin);
  s += "\nstatic CUmodule " + f.name + "_module_ = NULL;\nstatic CUfunction " + f.name + "_functions_[" +
       std::to_string(text.FunctionCount()) + "];\n";
  s += text.LoadAndUnload();
  s += text.Launcher();
  return s + "\n#endif\n";
}

namespace detail {

Result<std::string> CudaKernelHeader(const Workload& workload, const ir::PrimFunc& program, const Target& target,
                                     const std::string& cubin, const std::string& schedule_description,
                                     int64_t record_id) {
  // The code generator compiled the module these passes make (it runs the
  // same two): printing them again gives the launches its cubin holds.
  TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, cuda::LowerForCuda(program));
  TF_ASSIGN_OR_RETURN(cuda::CudaModule module, cuda::GenerateCuda(lowered));
  if (cubin.compare(0, 4, "\x7f" "ELF") != 0) {
    return Status::Internal("the cuda code generator's output for " + program.name + " is not an ELF cubin");
  }
  for (const cuda::CudaLaunch& l : module.launches) {
    if (cubin.find(l.kernel) == std::string::npos) {
      return Status::Internal("the cubin of " + program.name + " has no kernel " + l.kernel +
                              ", which the launcher would launch");
    }
  }
  return CudaLauncherHeaderText(workload, lowered, module, cubin, target, schedule_description, record_id);
}

}  // namespace detail

}  // namespace tunefarm::tuner
