// The GPU sketch rules' layout of staged operands (sketch_cuda.h, rule 2).
//
// In a tiled reduction each thread owns a run of consecutive outputs along
// every spatial axis (its virtual threads times its register tile). Where a
// shared-memory copy is indexed along one of its outer dimensions by such an
// axis -- the rows of A in C = A x B, the output channels of a convolution's
// weights -- a thread reads one element per row of its run at every
// reduction step, each a separate load from a different bank row. Packed so
// that the run's rows sit side by side in a new innermost dimension
// ([64, 32] -> [16, 32, 4]), the same elements are one 16-byte load. Whether
// that pays (it costs the cooperative fetch contiguous stores) is a sampled
// decision the search and the cost model settle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm::tuner {

// Each spatial axis's run of consecutive outputs per thread: the product of
// the extents of its vthread, inner and innermost tiles (parts 1, 3 and 4 of
// the rule's five spatial tiles; `spatial_tiles[level][axis]`). Read before
// the tiles are fused.
Result<std::vector<int64_t>> ThreadRuns(const Schedule& sch, const std::vector<std::vector<LoopRV>>& spatial_tiles);

// For the tiled reduction block `block` whose inputs are staged by `copies`
// (shared-memory copies placed under its outer reduction tile), with
// `runs` from ThreadRuns: a dimension of a copy is packable when it is not
// the copy's last, the block indexes it by exactly one of its spatial
// iteration variables (and no reduction one), and that axis's run divides by
// 4 or 2. Where some dimension is packable, samples whether to pack (one
// decision in the trace for the block) and, if so, packs each packable
// dimension by 4 (else 2) into a new innermost dimension (PackLayout at the
// dimension's own position). Nothing is sampled where nothing is packable,
// so a block the rule cannot help draws as before. The names of the
// buffers packed go to *packed (if not null).
Status PackSharedOperands(Schedule& sch, const std::string& block, const std::vector<BlockRV>& copies,
                          const std::vector<int64_t>& runs, std::vector<std::string>* packed = nullptr);

// The spatial axis (its position among `block`'s spatial iteration
// variables) that alone indexes dimension `dim` of every load of `buffer`
// in `block`, or -1 (none, several, or a reduction variable among them).
int IndexingSpatialAxis(const ir::Block& block, const std::string& buffer, size_t dim);

}  // namespace tunefarm::tuner
