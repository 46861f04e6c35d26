// CostModelScorer (cost_model_scorer.h).
#include "cost_model_scorer.h"

#include <utility>

namespace tunefarm::tuner {

std::vector<double> CostModelScorer::Score(const std::vector<const Candidate*>& candidates) {
  if (!model_) return fallback_.Score(candidates);
  std::vector<costmodel::CostModel::CachedProgram> programs;
  for (const Candidate* c : candidates) programs.push_back({&c->lowered, c->features.get()});
  auto scores = model_->PredictCached(programs);
  if (!scores.ok()) return fallback_.Score(candidates);
  return std::move(scores).value();
}

}  // namespace tunefarm::tuner
