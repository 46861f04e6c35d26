// The GPU sketch rules' padding of staged operands' rows (sketch_cuda.h,
// rule 2): storage_align on shared-memory copies against bank conflicts.
//
// Shared memory has 32 banks of 4 bytes; the words a warp reads in one load
// that fall in the same bank but are different words are served one after
// the other. In a tiled GEMM the threads of a warp read a shared copy of A
// [64, 32] in rows 4 apart at the same column: rows of 32 floats start in
// bank 0 each, so the two rows warp 0 reads are a 2-way conflict. Padded to
// rows of 36 floats (stride 4 modulo 32), row 4 starts in bank 16. Whether
// the padding pays (it costs shared memory, hence occupancy) is a sampled
// decision the search and the cost model settle.
//
// Padding must keep the vectors that touch the copy aligned: a float4 fetch
// store or a 16-byte shared load (which nvcc makes of four adjacent reads it
// can prove 16-byte aligned) needs every row to start at a multiple of 4
// floats. A packed copy ([16, 32, 4], sketch_cuda_operand_layout.h) has rows
// of the pack's 4 floats: padding its innermost dimension would pad every
// element group, never move its outer rows apart, so it is not padded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm::tuner {

// A shared-memory copy of a tiled reduction, placed and fetched by the rule.
struct StagedCopy {
  BlockRV copy;
  int64_t fetch_lanes = 1;  // the width of its vectorized cooperative fetch (1: scalar)
  // The vectorized fetch's rounds do not divide its threads x lanes: a guard
  // per lane, so the code generator keeps scalar stores, which nvcc merges
  // into vectors only where it sees the unpadded index is aligned.
  bool fetch_guarded = false;
};

// The vector width (1, 2 or 4 elements) a padded row stride of `copy_buffer`
// must keep a multiple of, or 0 where no padding keeps the vectors: rows of
// fewer than 4 elements (several share a bank row already, and vectors may
// run across them), rows of `row_elements` the cooperative fetch's
// vectors of `fetch_lanes` run across, or a guarded vectorized fetch
// (`fetch_guarded`: its vectors are nvcc's, and a padded row's index
// (f / W) * W' + f % W hides their alignment from it). Otherwise the widest vector the fetch
// or the reduction `block` reads along the rows, the latter bounded by what
// the unpadded rows' alignment allowed: along an index that is one spatial
// axis with run r per thread (`runs`, ThreadRuns), the power of two dividing
// r (at most 4); along an index with a reduction variable, conservatively 4
// (an unrolled reduction reads adjacent columns, which nvcc may merge).
int64_t PaddingVectorWidth(const ir::Block& block, const std::string& copy_buffer, size_t rank, int64_t row_elements,
                           int64_t fetch_lanes, bool fetch_guarded, const std::vector<int64_t>& runs);

// The offsets among `offsets` a row of `row_elements` elements, read in
// vectors of `vector_width`, may be aligned to modulo `factor`: multiples of
// the vector width that need a padding of at least one element.
std::vector<int64_t> ValidRowOffsets(int64_t row_elements, int64_t vector_width, int64_t factor,
                                     const std::vector<int64_t>& offsets);

// For each copy whose buffer is shared, of 4-byte elements, of rank 2 or
// more with more than one row, with a nonzero PaddingVectorWidth, and not
// among `packed` (the buffers
// PackSharedOperands packed): where some offset is valid, samples one
// decision in the trace -- no padding (even odds) or one of the valid
// offsets, evenly -- and applies StorageAlign(copy, rank - 2, factor,
// offset): its rows padded so that their stride is `offset` modulo
// `factor`. A copy with no valid offset draws nothing.
Status PadSharedRows(Schedule& sch, const std::string& block, const std::vector<StagedCopy>& copies,
                     const std::vector<std::string>& packed, const std::vector<int64_t>& runs, int64_t factor,
                     const std::vector<int64_t>& offsets);

}  // namespace tunefarm::tuner
