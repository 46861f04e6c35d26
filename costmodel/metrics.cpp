// TenSet ranking metrics (metrics.h).
#include "tunefarm/costmodel/metrics.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace tunefarm::costmodel {

PairCounts CountAgreeingPairs(const std::vector<double>& predicted, const std::vector<double>& truth) {
  const size_t n = std::min(predicted.size(), truth.size());
  PairCounts c;
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = i + 1; j < n; ++j) {
      if (truth[i] == truth[j]) continue;
      ++c.pairs;
      const double dt = truth[i] - truth[j], dp = predicted[i] - predicted[j];
      if (dp == 0) {
        c.agree += 0.5;
      } else if ((dt > 0) == (dp > 0)) {
        c.agree += 1;
      }
    }
  }
  return c;
}

double PairwiseAccuracy(const std::vector<double>& predicted, const std::vector<double>& truth) {
  const PairCounts c = CountAgreeingPairs(predicted, truth);
  return c.pairs == 0 ? 0.5 : c.agree / static_cast<double>(c.pairs);
}

double TopKScore(const std::vector<double>& predicted, const std::vector<double>& truth, size_t k) {
  const size_t n = std::min(predicted.size(), truth.size());
  if (n == 0 || k == 0) return 0;
  const double best = *std::max_element(truth.begin(), truth.begin() + static_cast<long>(n));
  if (best <= 0) return 0;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  k = std::min(k, n);
  // Stable on equal scores: ties go to the earlier candidate, deterministically.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return predicted[a] > predicted[b]; });
  double top = 0;
  for (size_t i = 0; i < k; ++i) top = std::max(top, truth[order[i]]);
  return top / best;
}

RankingReport EvaluateRanking(const std::vector<double>& predicted, const std::vector<double>& truth,
                              const std::vector<std::string>& groups) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_group;
  const size_t n = std::min({predicted.size(), truth.size(), groups.size()});
  for (size_t i = 0; i < n; ++i) {
    auto& g = by_group[groups[i]];
    g.first.push_back(predicted[i]);
    g.second.push_back(truth[i]);
  }
  RankingReport r;
  r.num_candidates = n;
  for (const auto& [key, g] : by_group) {
    r.pairwise += PairwiseAccuracy(g.first, g.second);
    r.top1 += TopKScore(g.first, g.second, 1);
    r.top5 += TopKScore(g.first, g.second, 5);
    ++r.num_groups;
  }
  if (r.num_groups > 0) {
    const double k = static_cast<double>(r.num_groups);
    r.pairwise /= k;
    r.top1 /= k;
    r.top5 /= k;
  }
  return r;
}

}  // namespace tunefarm::costmodel
