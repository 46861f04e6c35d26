// Static analysis of one shared-memory access of a GPU kernel (internal to
// costmodel/): how wide a vector the access is read as, and how many
// bank-conflict ways the first warp's request costs.
//
// The model is NVIDIA's since Kepler in 4-byte mode: shared memory is 32
// banks of 4-byte words, word w in bank w % 32. A warp's request is served
// in one pass per distinct word of the busiest bank; lanes that read the
// same word share it (broadcast). Accesses wider than 4 bytes are split into
// phases: 8-byte accesses by half-warps, 16-byte ones by quarter-warps, so a
// warp reading consecutive float4s costs 4 passes and no conflict.
//
// Lanes: the loops bound to threadIdx.x/y/z around the access number the
// threads x fastest, then y, then z (CUDA's warp numbering); the first warp
// is the first min(32, threads) of them. Every other loop sits at its first
// value. The buffer is taken to start at a 128-byte boundary.
//
// Everything here is a pure function of its arguments (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "features_index.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::costmodel::detail {

inline constexpr int kWarpSize = 32;
inline constexpr int kSharedBanks = 32;
inline constexpr int kBankBytes = 4;
// The widest access one lane issues (float4, int4, double2).
inline constexpr int kMaxAccessBytes = 16;

// Worst number of distinct 4-byte words one bank serves in one phase of a
// warp-wide access: lane i reads `access_bytes` bytes from byte address
// lane_bytes[i] (at most kWarpSize lanes). 1 is conflict-free; 0 for no lanes.
int BankConflictWays(std::span<const int64_t> lane_bytes, int64_t access_bytes);

// The value of integer index expression `e` with the variable of the loop at
// depth d equal to values[d] (values has loops.depth() entries). Handles
// constants, loop variables, + - * (floor) / % min max, comparisons, logic,
// select and casts between integers; std::nullopt for anything else (a
// load, a variable of no loop on the stack, a division by 0, an overflow).
std::optional<int64_t> EvalIndexAt(const ir::Expr& e, const LoopStack& loops, std::span<const int64_t> values);

struct SharedAccessEstimate {
  // Elements one lane reads at once: 4 or 2 where one loop of the
  // innermost run of unrolled or vectorized loops reads that many
  // consecutive elements (evaluated), its extent is a multiple of the
  // width, the width is at most 16 bytes, and every other loop
  // (thread-bound ones included) and the first address keep the run
  // aligned to it; else 1. Runs two loops make together do not count.
  int lanes = 1;
  // BankConflictWays of the first warp's addresses, each read `lanes` wide.
  int ways = 1;
  // The same with each lane reading one element (where the loads stay scalar).
  int scalar_ways = 1;
  int64_t warp_lanes = 0;  // lanes of the first warp (min(32, threads))
};

// Analyses the access buffer[indices] (row-major, flattened) under `loops`,
// the loops around it, outermost first. std::nullopt when no loop binds
// threadIdx (not a kernel's thread code), when two loops bind the same
// thread axis, or when an index cannot be evaluated.
std::optional<SharedAccessEstimate> AnalyzeSharedAccess(const ir::BufferNode& buffer,
                                                        const std::vector<ir::Expr>& indices,
                                                        const LoopStack& loops);

}  // namespace tunefarm::costmodel::detail
