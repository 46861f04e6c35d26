// SearchStrategy: how the tuning loop asks a task's design space for
// programs to measure (as TVM MetaSchedule's SearchStrategy).
//
// The loop owns one strategy per task and knows it only through this
// interface: it asks for the next batch (given the log's best traces as
// seeds, every program measured so far and a scorer that wraps the cost
// model) and rebuilds candidates from stored traces (Replay: resumed records,
// the untuned default, confirmations, the final round). Measurements come
// back to the strategy through `measured` and the seeds of the next call;
// none needs telling otherwise today. MakeSearchStrategy builds the one
// SearchOptions::strategy names: "evolutionary" (EvolutionarySearch,
// search.h), the only one so far; another is an entry in its table.
//
// Candidate and CandidateScorer are what every strategy works with.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/costmodel/cached_features.h"
#include "tunefarm/tuner/search_options.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

// One point of the design space, replayed and lowered.
struct Candidate {
  Trace trace;
  ir::PrimFunc func;     // scheduled, block form
  // LowerForCodegen of what one measured call runs (func, or its prepacked
  // entry when constant inputs are packed ahead: split_prepack.h); what cost
  // models read.
  ir::PrimFunc lowered;
  uint64_t hash = 0;     // hash of the lowered program's text
  // The cost model's features of `lowered`, extracted when it is first
  // scored (CostModel::PredictCached) and shared by the candidate's copies:
  // a program scored in several generations, then learned from once
  // measured, is extracted once. Never null for a candidate of a strategy.
  std::shared_ptr<costmodel::CachedFeatures> features = std::make_shared<costmodel::CachedFeatures>();
};

// Higher score = predicted faster. Implementations wrap a cost model.
class CandidateScorer {
 public:
  virtual ~CandidateScorer() = default;
  virtual std::vector<double> Score(const std::vector<const Candidate*>& candidates) = 0;
};

// Scores uniformly at random: the baseline "random search".
class RandomScorer : public CandidateScorer {
 public:
  explicit RandomScorer(uint64_t seed) : rng_(seed) {}
  std::vector<double> Score(const std::vector<const Candidate*>& candidates) override;

 private:
  std::mt19937_64 rng_;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;

  // Up to batch_size new candidates, none of whose programs (Candidate::hash)
  // is in `measured`. `seeds`: traces of the log, fastest first (PickSeeds,
  // seed_selection.h), that the strategy may start from. `wanted_choices`
  // (MissingChoices, seed_selection.h): categorical values the log's fastest
  // records lack, which a strategy may give places of the batch to. Empty
  // when the space has nothing new left; an error when it gives no valid
  // program at all.
  virtual Result<std::vector<Candidate>> NextBatch(int batch_size, const std::vector<Trace>& seeds,
                                                   const std::set<uint64_t>& measured, CandidateScorer& scorer,
                                                   const std::vector<std::string>& wanted_choices) = 0;

  // A stored trace replayed on the task's default program; an error when it
  // does not fit. Trace() gives the untuned default.
  virtual Result<Candidate> Replay(const Trace& trace) = 0;

  // Distinct seed programs written by an older sketch that the strategy gave
  // the current sketch's trace (realigned), and those it found none for
  // (mutated as written): TaskStatus::realigned_seeds, unaligned_seeds.
  virtual int realigned_seeds() const = 0;
  virtual int unaligned_seeds() const = 0;
};

// What a strategy is built from. `policy` (the target's sketch rules) must
// outlive the strategy.
struct SearchStrategyArgs {
  ir::PrimFunc default_func;  // the task's untuned program
  const SketchPolicy* policy = nullptr;
  SearchOptions options;
  uint64_t seed = 0;
};

// The strategy args.options.strategy names. InvalidArgument naming it and
// the known strategies when there is none of that name.
Result<std::unique_ptr<SearchStrategy>> MakeSearchStrategy(SearchStrategyArgs args);

// The names MakeSearchStrategy knows, sorted.
std::vector<std::string> SearchStrategyNames();

}  // namespace tunefarm::tuner
