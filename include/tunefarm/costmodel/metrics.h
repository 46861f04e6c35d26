// Ranking metrics of a cost model (TenSet's): how well predicted scores
// order candidates whose true throughput is known.
//
// All functions take parallel vectors: `predicted` scores (higher = predicted
// faster) and `truth` throughputs (higher = faster; 0 for failed candidates).
// Only the order of scores matters, so any monotone score scale works.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tunefarm::costmodel {

// Fraction of pairs with different true throughput that the scores order the
// same way; a tie in the scores counts half. 0.5 is chance. Returns 0.5 when
// no pair has different truths.
double PairwiseAccuracy(const std::vector<double>& predicted, const std::vector<double>& truth);

// The counts behind PairwiseAccuracy, for sums over several groups or
// batches: `agree` pairs (ties in the scores count half) of `pairs`.
struct PairCounts {
  double agree = 0;
  size_t pairs = 0;
};
PairCounts CountAgreeingPairs(const std::vector<double>& predicted, const std::vector<double>& truth);

// Best true throughput among the k highest-scored candidates, divided by
// the best true throughput overall (1 = the model's top k contain the best).
// Returns 0 when every truth is 0 or the inputs are empty.
double TopKScore(const std::vector<double>& predicted, const std::vector<double>& truth, size_t k);

// The metrics per workload group (`groups[i]` names candidate i's workload),
// averaged over groups with equal weight, as TenSet reports them.
struct RankingReport {
  double pairwise = 0;
  double top1 = 0;
  double top5 = 0;
  size_t num_groups = 0;
  size_t num_candidates = 0;
};
RankingReport EvaluateRanking(const std::vector<double>& predicted, const std::vector<double>& truth,
                              const std::vector<std::string>& groups);

}  // namespace tunefarm::costmodel
