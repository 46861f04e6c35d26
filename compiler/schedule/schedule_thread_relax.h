// GPU memory scopes in compute_at: the thread loops a producer's region must
// cover (private to compiler/schedule/).
//
// A producer computed at a loop normally fills what its consumers read in one
// iteration of that loop, for the values the enclosing loop variables have
// there. On a GPU a kShared buffer is one per thread block: every thread of
// the block reads it, so the region must cover what all of them read -- the
// enclosing threadIdx.* and vthread loops range over their whole extent
// ("relaxed"), as TVM relaxes thread variables by storage scope. kLocal
// buffers are one per thread and kGlobal ones keep the per-iteration region
// (see RelaxedThreadLoops).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "schedule_utils.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::sched {

// The loops whose variables a producer writing a buffer of `scope`, computed
// at `loop`, must relax: for kShared the threadIdx.* and vthread loops among
// `loop` and the loops enclosing it, with their extents; none for kLocal and
// kGlobal. Fails when such a loop has no constant extent.
Result<std::map<const ir::Variable*, int64_t>> RelaxedThreadLoops(const ir::Stmt& root, const ir::For* loop,
                                                                  ir::MemoryScope scope);

// `region` (mins over the enclosing loop variables) widened so that each
// relaxed variable takes every value in [0, extent): each additive term of a
// min that uses only relaxed variables is replaced by its lower bound and its
// span added to the extent. A dimension whose min mixes relaxed and other
// variables in one term (or whose bound cannot be derived) becomes the whole
// dimension, [0, shape[d]) -- safe, only larger.
Region RelaxRegion(const Region& region, const std::map<const ir::Variable*, int64_t>& relaxed,
                   const std::vector<int64_t>& shape);

// The outermost of the relaxed loops that encloses (or is) `loop`: where the
// compacted buffer is allocated so that all threads of a block share it;
// null when nothing is relaxed.
const ir::For* OutermostRelaxedLoop(const ir::Stmt& root, const ir::For* loop,
                                    const std::map<const ir::Variable*, int64_t>& relaxed);

}  // namespace tunefarm::sched
