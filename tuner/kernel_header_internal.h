// Private to tuner/: what the kernel headers of the target kinds and the
// model header share (kernel_header.cpp, kernel_header_cuda.cpp,
// model_header.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm::tuner::detail {

// The <stdint.h> type of a buffer element: float, double, uint16_t for f16
// (its bits), uint8_t for bool, int8_t..uint64_t.
const char* HeaderCType(ir::DataType t);

// `int32_t name(const float* A /* input f32[..] */, ...);` for an llvm
// kernel's entry -- params from `packed_from` on (when > 0) are packed
// buffers, read-only (the prepacked entry's tail).
std::string Prototype(const ir::PrimFunc& f, size_t packed_from);

// "TUNEFARM_KERNEL_MM_H_" for "mm", "TUNEFARM_CUDA_KERNEL_MM_H_" with `kind` "CUDA_".
std::string HeaderGuard(const std::string& kind, const std::string& name);

// The cuda branch of KernelHeaderFor: lowers and generates `program`'s
// module again, checks `cubin` against it, and prints CudaLauncherHeaderText.
Result<std::string> CudaKernelHeader(const Workload& workload, const ir::PrimFunc& program, const Target& target,
                                     const std::string& cubin, const std::string& schedule_description,
                                     int64_t record_id);

}  // namespace tunefarm::tuner::detail
