// Private to tuner/: what the kernel headers of the target kinds share
// (kernel_header.cpp, kernel_header_cuda.cpp).
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

// "TUNEFARM_KERNEL_MM_H_" for "mm", "TUNEFARM_CUDA_KERNEL_MM_H_" with `kind` "CUDA_".
std::string HeaderGuard(const std::string& kind, const std::string& name);

// The cuda branch of KernelHeaderFor: lowers and generates `program`'s
// module again, checks `cubin` against it, and prints CudaLauncherHeaderText.
Result<std::string> CudaKernelHeader(const Workload& workload, const ir::PrimFunc& program, const Target& target,
                                     const std::string& cubin, const std::string& schedule_description,
                                     int64_t record_id);

}  // namespace tunefarm::tuner::detail
