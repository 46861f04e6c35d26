// Memory sharing for a compiled model's intermediates: buffers whose
// lifetimes do not overlap share bytes of one workspace arena.
//
// A buffer's lifetime is the closed range of steps [first, last] in which it
// is used (for a model, the calls of its run: the call writing it .. the last
// call reading it). Two buffers whose ranges share a step never share a byte;
// a buffer used in the same step as another (a kernel reading one and writing
// the other) therefore keeps its own memory.
//
// The planner is the greedy one of TVM's and ONNX Runtime's memory planners:
// buffers by size, largest first (ties: earlier first step, then index);
// each goes into the smallest gap between the already placed buffers whose
// lifetimes overlap its own that holds it (best fit), else after the last of
// them. Every offset is a multiple of the alignment. A plain function; no
// state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tunefarm::tuner {

struct BufferLifetime {
  int64_t bytes = 0;  // >= 0; a buffer of 0 bytes takes no memory (offset 0)
  size_t first = 0;   // first step using it
  size_t last = 0;    // last step using it, >= first
};

struct WorkspacePlan {
  std::vector<int64_t> offsets;  // per buffer, a multiple of the alignment
  int64_t bytes = 0;             // the arena: every buffer ends within it; a multiple of the alignment
};

// Places `buffers` in one arena. `alignment` is a power of two.
WorkspacePlan PlanWorkspace(const std::vector<BufferLifetime>& buffers, int64_t alignment = 64);

// Whether two lifetimes share a step.
bool LifetimesOverlap(const BufferLifetime& a, const BufferLifetime& b);

}  // namespace tunefarm::tuner
