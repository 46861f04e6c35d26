// Local mutation of one sampling decision: the neighbour of a decision.
//
// Drawing a decision anew jumps anywhere in its range (a 4-level tile of
// 1,024 has 286 values), so a well-scored parent's child is as likely to
// be far from it as near. The neighbour moves one step instead, as Ansor's
// and MetaSchedule's tile-size mutators do:
//   - sample_perfect_tile: one divisor d > 1 of one level's factor moves to
//     another level, drawn uniformly among the moves that keep the innermost
//     level within max_innermost (the product stays the loop's extent);
//   - sample_categorical: another candidate, drawn by the candidates'
//     weights among the others.
// Other sampling instructions (sample_compute_location, whose range depends
// on the program) have no neighbour here: callers draw them anew. The search
// re-runs the sketch with the changed decision (EvolutionarySearch::Mutate),
// so what the sketch builds from a decision follows it.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm::tuner {

// A decision next to `inst`'s own, different from it, that passes the
// sampling instruction's own check; nullopt when `inst` is not a sampling
// instruction this knows or none exists: a tile whose levels are all 1, or
// whose only moves would break the innermost limit ([7, 1] with limit 1); a
// categorical whose other candidates all have weight 0 (or has no other).
std::optional<std::vector<int64_t>> NeighbourDecision(const Instruction& inst, std::mt19937_64& rng);

}  // namespace tunefarm::tuner
