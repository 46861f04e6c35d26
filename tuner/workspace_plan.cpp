// Greedy best-fit placement of buffers by lifetime (workspace_plan.h).
// Largest first because a large buffer placed late finds no gap and grows the
// arena; small ones fill the gaps the large ones leave.
#include "tunefarm/tuner/workspace_plan.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tunefarm::tuner {

namespace {

int64_t AlignUp(int64_t n, int64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

}  // namespace

bool LifetimesOverlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

WorkspacePlan PlanWorkspace(const std::vector<BufferLifetime>& buffers, int64_t alignment) {
  WorkspacePlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const int64_t size = AlignUp(buffers[i].bytes, alignment);
    if (size == 0) continue;
    // The byte ranges taken, during i's lifetime, by the buffers already placed.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t p : placed) {
      if (LifetimesOverlap(buffers[i], buffers[p])) {
        taken.emplace_back(plan.offsets[p], plan.offsets[p] + AlignUp(buffers[p].bytes, alignment));
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max();
    int64_t free_from = 0;  // the end of the taken ranges seen so far
    for (const auto& [begin, end] : taken) {
      const int64_t gap = begin - free_from;
      if (gap >= size && gap < best_gap) {
        best = free_from;
        best_gap = gap;
      }
      free_from = std::max(free_from, end);
    }
    plan.offsets[i] = best >= 0 ? best : free_from;
    plan.bytes = std::max(plan.bytes, plan.offsets[i] + size);
    placed.push_back(i);
  }
  return plan;
}

}  // namespace tunefarm::tuner
