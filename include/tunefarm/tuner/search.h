// Evolutionary search over a design space, guided by a cost model: the
// SearchStrategy "evolutionary" (search_strategy.h).
//
// One call to NextBatch runs the named phases of a search round:
//   1. SampleInitPopulation: the seeds the caller picked from the log (its
//      fastest traces for this task and the fastest of each sketch choice:
//      seed_selection.h), replayed (and realigned with the current sketch's
//      decisions: Realign), plus random samples of the sketch policy;
//   2. Evolve: generations of cost-model scoring, elitism and mutation (a
//      mutation re-runs the sketch with one of a parent's decisions moved
//      to a neighbouring value; invalid results are dropped, and a bounded
//      number of attempts means the search cannot stall on them);
//   3. PickBatch: the best-scored unmeasured candidates, with an epsilon share
//      drawn among the round's random samples of the sketch (epsilon-greedy;
//      other candidates only when those run out), never a program measured before
//      (programs are deduplicated by the hash of their lowered IR).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/tuner/search_options.h"
#include "tunefarm/tuner/search_strategy.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

class EvolutionarySearch : public SearchStrategy {
 public:
  // `policy` must outlive the search.
  EvolutionarySearch(ir::PrimFunc default_func, const SketchPolicy* policy, SearchOptions options, uint64_t seed);

  // Up to batch_size new candidates, none of whose hashes is in `measured`.
  // `wanted_choices` (MissingChoices, seed_selection.h): categorical values
  // the log's fastest records lack; options.choice_picks places go to them.
  Result<std::vector<Candidate>> NextBatch(int batch_size, const std::vector<Trace>& seeds,
                                           const std::set<uint64_t>& measured, CandidateScorer& scorer,
                                           const std::vector<std::string>& wanted_choices) override;

  // Replays a trace on the default program (an error if it does not fit).
  Result<Candidate> Replay(const Trace& trace) override { return Replay(trace, {}); }
  // With `decisions` overriding those of the instructions at their indices
  // (Trace::ApplyTo).
  Result<Candidate> Replay(const Trace& trace, const std::map<size_t, std::vector<int64_t>>& decisions);
  // A random point of the design space.
  Result<Candidate> Sample();
  // A program next to `parent`: the sketch re-run with the parent's
  // decisions but one, moved to a neighbouring value (mutation.h; a compute
  // location drawn anew). Never the parent's own program: FailedPrecondition
  // when a few tried decisions give nothing else; the sketch's error when a
  // step makes it fail.
  Result<Candidate> Mutate(const Candidate& parent);
  // `seed` with the trace the current sketch writes for its program, so
  // that Mutate, which re-runs the sketch with a parent's decisions as hints
  // in call order, steps it to a neighbour. A record of an older sketch can
  // hold one decision fewer or more (the padding rule added one per guarded
  // input): its decisions would meet the wrong sampling calls, and each
  // mutation would give an unrelated program. The single missing decision
  // (index 0 or 1) or extra one that gives the seed's program back is
  // found by re-running the sketch; when none does, `seed` comes back
  // unchanged, as does a trace without decisions (the default schedule). At
  // most 3 * decisions + 3 sketch runs per program, once per search
  // (remembered by program hash).
  Candidate Realign(Candidate seed);
  // Distinct seed programs Realign gave another trace (written by an older
  // sketch), and those it found no single edit for (mutated as written).
  int realigned_seeds() const override { return realigned_seeds_; }
  int unaligned_seeds() const override { return unaligned_seeds_; }

 private:
  // Positions into `decisions` (the trace's sampling instructions) in the
  // order Mutate tries them: a random order weighted by tile_mutation_share.
  std::vector<size_t> MutationOrder(const Trace& trace, const std::vector<size_t>& decisions);
  std::vector<Candidate> SampleInitPopulation(const std::vector<Trace>& seeds);
  std::vector<Candidate> Evolve(std::vector<Candidate> population, CandidateScorer& scorer);
  std::vector<Candidate> PickBatch(std::vector<Candidate> pool, int batch_size, const std::set<uint64_t>& measured,
                                   CandidateScorer& scorer, const std::vector<std::string>& wanted_choices);

  ir::PrimFunc default_func_;
  const SketchPolicy* policy_;
  SearchOptions options_;
  std::mt19937_64 rng_;
  // Hashes of this round's random samples of the sketch (not the log's
  // seeds, not mutations): where PickBatch draws its epsilon share.
  std::unordered_set<uint64_t> random_samples_;
  // Realign's outcome per program hash: the sketch's trace, or nullopt
  // when no single edit of the decisions gives the program back.
  std::unordered_map<uint64_t, std::optional<Trace>> realigned_;
  int realigned_seeds_ = 0;
  int unaligned_seeds_ = 0;
};

}  // namespace tunefarm::tuner
