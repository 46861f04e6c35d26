// Evolutionary search: see search.h for the phases.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/tuner/mutation.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/seed_selection.h"

namespace tunefarm::tuner {

std::vector<double> RandomScorer::Score(const std::vector<const Candidate*>& candidates) {
  std::uniform_real_distribution<double> d(0, 1);
  std::vector<double> out;
  for (size_t i = 0; i < candidates.size(); ++i) out.push_back(d(rng_));
  return out;
}

EvolutionarySearch::EvolutionarySearch(ir::PrimFunc default_func, const SketchPolicy* policy, SearchOptions options,
                                       uint64_t seed)
    : default_func_(std::move(default_func)), policy_(policy), options_(options), rng_(seed) {}

namespace {
Result<Candidate> Finish(const Schedule& sch) {
  Candidate c;
  c.trace = sch.trace();
  c.func = sch.func();
  TF_ASSIGN_OR_RETURN(c.lowered, LowerMeasuredCall(c.func));
  c.hash = std::hash<std::string>()(ir::ToString(c.lowered));
  return c;
}
}  // namespace

Result<Candidate> EvolutionarySearch::Replay(const Trace& trace, const std::map<size_t, std::vector<int64_t>>& decisions) {
  Schedule sch(default_func_, rng_());
  TF_RETURN_IF_ERROR(trace.ApplyTo(sch, decisions));
  return Finish(sch);
}

Result<Candidate> EvolutionarySearch::Sample() {
  Schedule sch(default_func_, rng_());
  TF_RETURN_IF_ERROR(policy_->Apply(sch));
  return Finish(sch);
}

std::vector<size_t> EvolutionarySearch::MutationOrder(const Trace& trace, const std::vector<size_t>& decisions) {
  // Tiles take tile_mutation_share of the draws and the other decisions
  // (unroll depth, packing, accumulator level, vector axis) the rest, alike
  // within each kind. A step of one of the others rebuilds much of the
  // program; with every decision alike, DEP's kernels after 300 trials were
  // 125-154 GFLOP/s against 157-232 with tile steps alone
  // (docs/tuning-benchmarks.md, mutation). A weighted order without
  // replacement (keys u^(1/w), compared as log(u)/w), so a decision that
  // cannot step hands its turn to the next.
  auto is_tile = [&](size_t index) { return trace.instructions()[index].kind == InstructionKind::kSamplePerfectTile; };
  const double tiles = double(std::count_if(decisions.begin(), decisions.end(), is_tile));
  const double others = double(decisions.size()) - tiles;
  std::uniform_real_distribution<double> unit(std::numeric_limits<double>::min(), 1.0);
  std::vector<std::pair<double, size_t>> keyed;
  for (size_t k = 0; k < decisions.size(); ++k) {
    double weight = is_tile(decisions[k]) ? options_.tile_mutation_share / tiles
                                          : (1.0 - options_.tile_mutation_share) / others;
    keyed.push_back({weight > 0 ? std::log(unit(rng_)) / weight : -std::numeric_limits<double>::infinity(), k});
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<size_t> order;
  for (const auto& [key, k] : keyed) order.push_back(k);
  return order;
}

Result<Candidate> EvolutionarySearch::Mutate(const Candidate& parent) {
  std::vector<size_t> decisions = parent.trace.DecisionIndices();
  if (decisions.empty()) return Status::FailedPrecondition("the trace has no decisions to mutate");
  std::vector<std::vector<int64_t>> parent_decisions;
  for (size_t index : decisions) parent_decisions.push_back(parent.trace.instructions()[index].decision);
  // The sketch runs again with the parent's decisions as hints and one of
  // them changed, rather than the parent's trace replayed with one decision
  // changed: what the sketch decided from a decision (which copies to pack,
  // the unroll annotation, whether a loop is vectorized) is written into the
  // trace as fixed instructions, so a replay would keep the parent's choices
  // and an unroll or packing step would give the parent back.
  std::vector<size_t> order = MutationOrder(parent.trace, decisions);
  // Some decisions have one value (the [outputs, 1] tile of a reduction's
  // fused loop) and some steps come back to the same program; a few tries
  // keep such draws from costing the whole mutation.
  constexpr size_t kTries = 4;
  size_t tries = 0;
  for (size_t k : order) {
    const Instruction& inst = parent.trace.instructions()[decisions[k]];
    std::vector<int64_t> changed;  // empty: drawn anew (compute locations)
    if (inst.kind != InstructionKind::kSampleComputeLocation) {
      std::optional<std::vector<int64_t>> neighbour = NeighbourDecision(inst, rng_);
      if (!neighbour) continue;
      changed = std::move(*neighbour);
    }
    if (tries++ == kTries) break;
    std::vector<std::vector<int64_t>> hints = parent_decisions;
    hints[k] = std::move(changed);
    Schedule sch(default_func_, rng_());
    sch.SetDecisionHints(std::move(hints));
    TF_RETURN_IF_ERROR(policy_->Apply(sch));
    TF_ASSIGN_OR_RETURN(Candidate child, Finish(sch));
    if (child.hash != parent.hash) return child;
  }
  return Status::FailedPrecondition("no neighbouring decision of the trace changes its program");
}

Candidate EvolutionarySearch::Realign(Candidate seed) {
  std::vector<std::vector<int64_t>> decisions;
  for (size_t k : seed.trace.DecisionIndices()) decisions.push_back(seed.trace.instructions()[k].decision);
  if (decisions.empty()) return seed;  // the default schedule: nothing to mutate
  auto known = realigned_.find(seed.hash);
  if (known == realigned_.end()) {
    const std::string program = ir::ToString(seed.func);
    // The sketch's random generator only draws where a hint does not fit,
    // and such a run is a failed try: a fixed seed keeps the search's own
    // generator, and so its runs, as they were without this step.
    auto sketch_with = [&](std::vector<std::vector<int64_t>> hints) -> std::optional<Trace> {
      Schedule sch(default_func_, seed.hash);
      sch.SetDecisionHints(std::move(hints));
      if (!policy_->Apply(sch).ok() || ir::ToString(sch.func()) != program) return std::nullopt;
      return sch.trace();
    };
    // The common case first: a record of this sketch gives itself back.
    std::optional<Trace> found = sketch_with(decisions);
    const bool as_written = found.has_value();
    for (size_t p = 0; !found && p <= decisions.size(); ++p) {
      for (int64_t index : {0, 1}) {
        std::vector<std::vector<int64_t>> hints = decisions;
        hints.insert(hints.begin() + std::ptrdiff_t(p), std::vector<int64_t>{index});
        if ((found = sketch_with(std::move(hints)))) break;
      }
      if (!found && p < decisions.size()) {
        std::vector<std::vector<int64_t>> hints = decisions;
        hints.erase(hints.begin() + std::ptrdiff_t(p));
        found = sketch_with(std::move(hints));
      }
    }
    if (!found) ++unaligned_seeds_;
    if (found && !as_written) ++realigned_seeds_;
    known = realigned_.emplace(seed.hash, std::move(found)).first;
  }
  if (known->second) seed.trace = *known->second;
  return seed;
}

std::vector<Candidate> EvolutionarySearch::SampleInitPopulation(const std::vector<Trace>& seeds) {
  std::vector<Candidate> population;
  std::unordered_set<uint64_t> seen;
  for (const Trace& t : seeds) {
    auto c = Replay(t);
    if (c.ok() && seen.insert(c->hash).second) population.push_back(Realign(std::move(c).value()));
  }
  int attempts = options_.population * options_.max_attempts_factor;
  while (int(population.size()) < options_.population && attempts-- > 0) {
    auto c = Sample();
    if (!c.ok() || !seen.insert(c->hash).second) continue;
    random_samples_.insert(c->hash);
    population.push_back(std::move(c).value());
  }
  return population;
}

std::vector<Candidate> EvolutionarySearch::Evolve(std::vector<Candidate> population, CandidateScorer& scorer) {
  std::vector<Candidate> everything = population;
  std::unordered_set<uint64_t> seen;
  for (const Candidate& c : population) seen.insert(c.hash);
  for (int g = 0; g < options_.generations && !population.empty(); ++g) {
    std::vector<const Candidate*> ptrs;
    for (const Candidate& c : population) ptrs.push_back(&c);
    std::vector<double> scores = scorer.Score(ptrs);
    std::vector<size_t> order(population.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
    size_t elites = std::max<size_t>(1, size_t(double(population.size()) * options_.elite_fraction));
    std::vector<Candidate> next;
    for (size_t i = 0; i < elites && i < order.size(); ++i) next.push_back(population[order[i]]);
    // Children of tournament winners; a failed mutation just costs an attempt.
    int attempts = options_.population * options_.max_attempts_factor;
    while (int(next.size()) < options_.population && attempts-- > 0) {
      size_t a = rng_() % population.size(), b = rng_() % population.size();
      const Candidate& parent = population[scores[a] >= scores[b] ? a : b];
      auto child = Mutate(parent);
      if (!child.ok() || !seen.insert(child->hash).second) continue;
      everything.push_back(*child);
      next.push_back(std::move(child).value());
    }
    population = std::move(next);
  }
  return everything;
}

std::vector<Candidate> EvolutionarySearch::PickBatch(std::vector<Candidate> pool, int batch_size,
                                                     const std::set<uint64_t>& measured, CandidateScorer& scorer,
                                                     const std::vector<std::string>& wanted_choices) {
  std::vector<Candidate> fresh;
  std::unordered_set<uint64_t> seen;
  for (Candidate& c : pool) {
    if (!measured.count(c.hash) && seen.insert(c.hash).second) fresh.push_back(std::move(c));
  }
  std::vector<const Candidate*> ptrs;
  for (const Candidate& c : fresh) ptrs.push_back(&c);
  std::vector<double> scores = scorer.Score(ptrs);
  std::vector<size_t> order(fresh.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  int random_picks = int(double(batch_size) * options_.epsilon + 0.5);
  std::vector<Candidate> batch;
  std::vector<bool> taken(fresh.size(), false);
  // Values the fastest records lack first: the model, taught mostly by the
  // other value's programs, would rank their best children out of the batch.
  // At most half of the model's places, so that a small batch (the last of a
  // budget, a small --batch-size) still measures the model's own favourites.
  const int choice_places = std::min(options_.choice_picks, (batch_size - random_picks) / 2);
  for (const std::string& key : wanted_choices) {
    if (int(batch.size()) >= choice_places) break;
    for (size_t i : order) {
      if (taken[i]) continue;
      std::vector<std::string> keys = ChoiceKeys(fresh[i].trace);
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
      batch.push_back(fresh[i]);
      taken[i] = true;
      break;
    }
  }
  for (size_t i = 0; i < order.size() && int(batch.size()) < batch_size - random_picks; ++i) {
    if (taken[order[i]]) continue;
    batch.push_back(fresh[order[i]]);
    taken[order[i]] = true;
  }
  // Epsilon-greedy: the rest drawn uniformly from this round's random
  // samples the model ranked lower, as Ansor and MetaSchedule draw theirs,
  // rather than from the whole pool, which is mostly mutations of what the
  // model already favours; other candidates only when those run out.
  std::vector<size_t> samples, others;
  for (size_t i = 0; i < fresh.size(); ++i) {
    if (!taken[i]) (random_samples_.count(fresh[i].hash) ? samples : others).push_back(i);
  }
  std::shuffle(samples.begin(), samples.end(), rng_);
  std::shuffle(others.begin(), others.end(), rng_);
  samples.insert(samples.end(), others.begin(), others.end());
  for (size_t i = 0; i < samples.size() && int(batch.size()) < batch_size; ++i) batch.push_back(fresh[samples[i]]);
  return batch;
}

Result<std::vector<Candidate>> EvolutionarySearch::NextBatch(int batch_size, const std::vector<Trace>& seeds,
                                                             const std::set<uint64_t>& measured, CandidateScorer& scorer,
                                                             const std::vector<std::string>& wanted_choices) {
  random_samples_.clear();
  std::vector<Candidate> population = SampleInitPopulation(seeds);
  if (population.empty()) {
    return Status::FailedPrecondition("the design space produced no valid program for " + default_func_.name);
  }
  std::vector<Candidate> pool = Evolve(std::move(population), scorer);
  return PickBatch(std::move(pool), batch_size, measured, scorer, wanted_choices);
}

}  // namespace tunefarm::tuner
