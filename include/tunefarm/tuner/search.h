// Evolutionary search over a design space, guided by a cost model.
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
#include <functional>
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

struct SearchOptions {
  // Programs per generation, and generations per round (tune --population,
  // --generations). 512 x 4 reached 90 % of the best sooner on GMM 1024 but
  // found DEP kernels half as fast as 128 x 3 (worse than random search) over
  // seeds 1-3 of the six suite workloads; 128 x 3 had the best geometric mean
  // of best-found over reference, 0.91 against 0.83 (docs/tuning-benchmarks.md,
  // search pool).
  int population = 128;
  int generations = 3;
  double elite_fraction = 0.25;
  // Share of each batch picked at random among the round's random samples
  // the model ranked lower. Higher than Ansor's 0.05: the search's picks
  // cluster, and a quarter drawn at random reached 90 % of the best more
  // often (docs/tuning-benchmarks.md, epsilon). Drawn among random samples
  // rather than the whole pool once the sketch kept depthwise channels out
  // of the register tile: before that, DEP's random samples were too slow
  // to be worth a pick (docs/tuning-benchmarks.md, register-tile reuse).
  double epsilon = 0.25;
  // Share of mutations that step a tile decision; the rest step the other
  // decisions (unroll, packing, accumulator level). Ansor's and
  // MetaSchedule's CPU mutators give tile sizes 0.9 too; with every decision
  // alike, DEP's kernels were slower (docs/tuning-benchmarks.md, mutation).
  double tile_mutation_share = 0.9;
  // Seeds of each round besides the log's 16 fastest records: the fastest
  // record of each value a categorical decision (padding, vector axis,
  // unroll depth...) has taken that those lack, at most this many
  // (seed_selection.h). With 8, DEP's runs of 300 trials over seeds 1-8
  // ended at 0.96 of the best found against 0.85 with the fastest alone
  // (docs/tuning-benchmarks.md, seeds per structural choice).
  int choice_seeds = 8;
  // How many of those seeds one value may have: its fastest records, up to
  // this many, when the 16 fastest lack it. With 4, DEP's runs of 300 trials
  // left the padded kernels for the guarded ones more often (5 of 8 seeds
  // against 3), but at 1,000 trials 2 of 4 never did, where all 4 runs with
  // 1 had: 1 stays the default (docs/tuning-benchmarks.md, "Seeds per choice
  // value").
  int seeds_per_choice = 1;
  // Places of each batch kept for those values: the best-scored unmeasured
  // program of each missing value (NextBatch's wanted_choices), in order, up
  // to this many and to half of the batch's places not drawn at random,
  // whatever its rank in the pool. The seeds alone give a value
  // parents, but a model trained on the other value ranks their children low
  // and the batch never measures them. DEP, 300 trials, seeds 1-14, the two
  // alternating with one binary: 95 % of the best known kernel within 300
  // trials in 10 runs with 2 against 5 with none, the other workloads level;
  // at 1,000 trials 3 of 11 runs ended 4-14 % short of the best, where runs
  // without ended within 1.3 % (docs/tuning-benchmarks.md, "Two batch places
  // for missing choices").
  int choice_picks = 2;
  int max_attempts_factor = 8;  // attempts per wanted candidate before giving up
};

class EvolutionarySearch {
 public:
  // `policy` must outlive the search.
  EvolutionarySearch(ir::PrimFunc default_func, const SketchPolicy* policy, SearchOptions options, uint64_t seed);

  // Up to batch_size new candidates, none of whose hashes is in `measured`.
  // `wanted_choices` (MissingChoices, seed_selection.h): categorical values
  // the log's fastest records lack; options.choice_picks places go to them.
  Result<std::vector<Candidate>> NextBatch(int batch_size, const std::vector<Trace>& seeds,
                                           const std::set<uint64_t>& measured, CandidateScorer& scorer,
                                           const std::vector<std::string>& wanted_choices = {});

  // Replays a trace on the default program (nullopt-like error if it does not fit).
  Result<Candidate> Replay(const Trace& trace, const std::map<size_t, std::vector<int64_t>>& decisions = {});
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
  int realigned_seeds() const { return realigned_seeds_; }
  int unaligned_seeds() const { return unaligned_seeds_; }

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
