// A GPU-bound PrimFunc as CUDA C: the source, its kernels in launch order and
// the buffers they take. What the CUDA code generator (codegen_cuda.h) makes,
// what NVRTC compiles (nvrtc.h) and what a CUDA device loads and launches.
//
// A PrimFunc for a GPU is a sequence of kernels: each top-level loop nest
// whose outer loops are bound to blockIdx.* (and, inside them, threadIdx.*)
// is one __global__ function, launched in program order on one stream.
// Intermediate buffers that live in global memory between kernels (a padded
// copy of an input, say) are workspaces the launcher allocates.
//
// Plain values; copying is cheap enough (the source is a few KiB).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/dtype.h"

namespace tunefarm::cuda {

// One buffer a module's kernels take, in global memory.
struct CudaBuffer {
  std::string name;
  ir::DataType dtype;
  int64_t elements = 0;
  // Index of the PrimFunc param this buffer is, or -1 for a workspace the
  // launcher allocates (and may leave uninitialised: the kernels that read it
  // write it first).
  int param_index = -1;
  int64_t bytes() const { return elements * ((dtype.bits * dtype.lanes + 7) / 8); }
};

// One kernel launch, in the order the module's launches run.
struct CudaLaunch {
  std::string kernel;                       // the __global__ function's name
  std::array<int64_t, 3> grid = {1, 1, 1};  // blockIdx.x/y/z extents
  std::array<int64_t, 3> block = {1, 1, 1}; // threadIdx.x/y/z extents
  int64_t dynamic_shared_bytes = 0;         // 0: the kernel's shared memory is static
  std::vector<int> buffers;                 // indices into CudaModule::buffers, in parameter order
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
};

struct CudaModule {
  std::string name;     // the PrimFunc's name
  std::string source;   // CUDA C, self-contained (no includes beyond what NVRTC provides)
  std::vector<CudaBuffer> buffers;   // the PrimFunc's params in order, then the workspaces
  std::vector<CudaLaunch> launches;  // at least one
  int64_t static_shared_bytes = 0;   // the largest of the kernels' static shared memory
};

}  // namespace tunefarm::cuda
