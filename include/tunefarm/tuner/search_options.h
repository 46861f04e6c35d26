// The knobs of a task's search: which strategy (MakeSearchStrategy,
// search_strategy.h) and, for the evolutionary search (search.h), the pool,
// its generations and how a batch is picked from it. Each default is the
// one docs/tuning-benchmarks.md measured best; `tunefarm tune` exposes most.
#pragma once

#include <string>

namespace tunefarm::tuner {

struct SearchOptions {
  // The SearchStrategy that searches (MakeSearchStrategy): "evolutionary".
  std::string strategy = "evolutionary";
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

}  // namespace tunefarm::tuner
