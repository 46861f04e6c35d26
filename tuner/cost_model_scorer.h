// CostModelScorer: a CostModel as the search's CandidateScorer (the tuning
// loop's). Internal to the tuner.
#pragma once

#include <cstdint>
#include <vector>

#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/tuner/search_strategy.h"

namespace tunefarm::tuner {

// Scores with the model, reading each candidate's features from the
// candidate (Candidate::features: extracted once, then kept for its copies
// scored in later generations and for the model learning from it once
// measured). Without a model, or when the model cannot score (not trained,
// an error), scores at random: a model must not stop tuning.
class CostModelScorer : public CandidateScorer {
 public:
  // `model` may be null (random search) and must outlive the scorer.
  CostModelScorer(costmodel::CostModel* model, uint64_t seed) : model_(model), fallback_(seed) {}
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override;

 private:
  costmodel::CostModel* model_;
  RandomScorer fallback_;
};

}  // namespace tunefarm::tuner
