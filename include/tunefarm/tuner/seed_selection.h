// Which measured programs seed a search round's first generation.
//
// The log's fastest records alone keep every round in one basin of the
// design space: the first good kernels a run finds decide where all later
// rounds mutate. A structural choice of the sketch (pad an input or keep its
// guards, which axis is vectorized) leads to kernels whose good tilings are
// many steps apart, so a run whose early luck fell on one value of such a
// choice stays there (DEP: with lowering revision 1, runs among padded
// kernels plateau at 0.82-0.87 of the guarded ones, the other way round
// before it; docs/tuning-benchmarks.md, seeds per structural choice). PickSeeds
// therefore adds, after the fastest records, the fastest record of each value
// every categorical decision has taken in the log, so each alternative keeps
// its best program among the parents.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm::tuner {

// `measured` holds (seconds, trace) sorted fastest first. Returns the first
// `fastest` traces, then, in order of speed, the traces that bring a
// (categorical instruction, value) pair those lack, up to `per_value` traces
// for each such pair, at most `per_choice_limit` of them in all. A
// categorical instruction is identified by its position in the trace, its
// name and its arguments, so two traces whose sketch took different paths do
// not mix their decisions. Each entry of `measured` is returned at most once.
// One key per (categorical instruction, value) of `trace`: the instruction's
// position and text without its decision, then the value.
std::vector<std::string> ChoiceKeys(const Trace& trace);

// The keys (ChoiceKeys) of PickSeeds' choice seeds, seeds[fastest..], that
// its fastest ones, seeds[0..fastest), lack: in seed order (fastest record
// first), each once. What EvolutionarySearch::NextBatch may give places to.
std::vector<std::string> MissingChoices(const std::vector<Trace>& seeds, size_t fastest);

std::vector<Trace> PickSeeds(const std::vector<std::pair<double, Trace>>& measured, size_t fastest,
                             size_t per_choice_limit, size_t per_value = 1);

}  // namespace tunefarm::tuner
