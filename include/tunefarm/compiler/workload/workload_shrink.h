// Shrinking a workload so the reference interpreter can afford it.
//
// The interpreter is exact but slow, so large workloads are checked on a
// copy with smaller shape parameters: the same stages, bodies and index
// arithmetic at a size the interpreter runs in a moment.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/workload/workload.h"

namespace tunefarm {

// Re-parses `text` with shape parameters halved, largest first, until the
// workload's Flops() is at most `flop_budget`. Halvings the workload rejects
// (a shape that becomes invalid, an index that leaves its tensor) are skipped.
// `overrides` are applied first, as the starting shape; they are halved like
// any other parameter when the budget needs it (a caller that must keep a
// parameter, a convolution's stride, passes the shrunk result's value back
// or checks it). Fails if no valid shrink fits.
Result<Workload> ShrinkWorkload(std::string_view text, const std::string& source_name,
                                std::map<std::string, int64_t> overrides, double flop_budget);

}  // namespace tunefarm
