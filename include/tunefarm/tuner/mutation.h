// Local mutation of one sampling decision: the neighbour of a trace.
//
// Resampling a decision from scratch (what replay with an empty override
// does) jumps anywhere in that decision's range: a 3-level tile of 1,024 has
// hundreds of values, and a well-scored parent's child is then no closer to
// it than a random program is. The neighbour moves one step instead, as
// Ansor's and MetaSchedule's tile-size mutators do:
//   - sample_perfect_tile: one divisor d > 1 of one level's factor moves to
//     another level (the product stays the loop's extent; the innermost
//     level stays within max_innermost);
//   - sample_categorical: another candidate, drawn by the candidates'
//     probabilities among the others.
// Other sampling instructions (sample_compute_location, whose range depends
// on the replayed program) have no neighbour here: callers resample them.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "tunefarm/compiler/trace.h"

namespace tunefarm::tuner {

// A decision next to `inst`'s own, different from it; nullopt when `inst`
// is not a sampling instruction this knows, or no different neighbour exists
// (a tile of a prime extent with one free level, a single candidate).
std::optional<std::vector<int64_t>> NeighbourDecision(const Instruction& inst, std::mt19937_64& rng);

}  // namespace tunefarm::tuner
