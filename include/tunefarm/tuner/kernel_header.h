// The header `tunefarm compile` (and the Compile service) hands out beside a
// kernel, one kind per target kind:
//
//  * llvm: a C header declaring the object's entry point
//    `int32_t <name>(inputs..., outputs...)` and, with a prepack split, its
//    prepack and prepacked entries (KernelHeaderText).
//  * cuda: a C/C++ header holding a copy of the cubin and a host launcher on
//    the CUDA driver API, `CUresult <name>_launch(CUstream, device
//    pointers..., [workspace])`, which loads the module once and enqueues
//    every kernel launch of the program in order (CudaLauncherHeaderText).
//
// KernelHeaderFor is the one place that picks by kind; BuildKernel
// (kernel_build.h) calls it. The texts are plain functions of their inputs;
// nothing here keeps state, and everything may run concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/cuda/cuda_module.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::tuner {

// The function a kernel's header declares for callers: the PrimFunc's name
// for llvm ("mm"), "<name>_launch" for cuda ("mm_launch").
std::string KernelEntrySymbol(const ir::PrimFunc& func, const Target& target);

// The header for a kernel of `program` (the PrimFunc the code generator
// compiled) for `target`, whose code generator returned `binary`:
// KernelHeaderText for llvm; for cuda, the program is lowered for CUDA and
// its module generated again (deterministic: the kernels and launches the
// cubin was compiled from), the cubin is checked to be an ELF image holding
// every kernel (Internal otherwise), and CudaLauncherHeaderText is returned.
// InvalidArgument for a kind with no header.
Result<std::string> KernelHeaderFor(const Workload& workload, const ir::PrimFunc& program, const Target& target,
                                    const std::string& binary, const std::string& schedule_description,
                                    int64_t record_id);

// The C header for an llvm kernel of `func`.
std::string KernelHeaderText(const Workload& workload, const ir::PrimFunc& func, const Target& target,
                             const std::string& schedule_description, int64_t record_id);

// The C/C++ header for a cuda kernel: `cubin` embedded as a static array,
// `#define`s of each launch's kernel name, grid, block and dynamic shared
// memory, and static functions <name>_load, <name>_unload and
// <name>_launch on <cuda.h> (link with -lcuda). The launcher takes one
// device pointer per param of `func` (typed by element, const for inputs)
// and, when `module` has workspaces (buffers with param_index -1), one
// pointer to <name>_workspace_bytes of device memory they are carved from
// (each at a 256-byte aligned offset). `func` is the PrimFunc `module` was
// generated from (its params name and shape the launcher's).
std::string CudaLauncherHeaderText(const Workload& workload, const ir::PrimFunc& func,
                                   const cuda::CudaModule& module, std::string_view cubin, const Target& target,
                                   const std::string& schedule_description, int64_t record_id);

}  // namespace tunefarm::tuner
