// Neighbour decisions for the evolutionary search's mutation: see mutation.h.
#include "tunefarm/tuner/mutation.h"

#include <string>

namespace tunefarm::tuner {

namespace {

// The integer keyword argument `key` of a trace instruction, or nullopt.
std::optional<int64_t> IntArg(const Instruction& inst, const std::string& key) {
  for (const TraceArg& a : inst.args) {
    if (a.key == key && a.kind == TraceArg::Kind::kInt) return a.value;
  }
  return std::nullopt;
}

std::vector<int64_t> DivisorsAboveOne(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    if (d > 1) out.push_back(d);
    if (d * d != n) out.push_back(n / d);
  }
  return out;
}

// Moves one divisor between two levels, drawn uniformly among every move
// that keeps the innermost level within its limits (at most 8 levels, so the
// list stays short).
std::optional<std::vector<int64_t>> MoveTileFactor(const std::vector<int64_t>& factors, int64_t min_innermost,
                                                   int64_t max_innermost, std::mt19937_64& rng) {
  struct Move {
    size_t from, to;
    int64_t divisor;
  };
  std::vector<Move> moves;
  const size_t innermost = factors.size() - 1;
  for (size_t from = 0; from < factors.size(); ++from) {
    for (int64_t d : DivisorsAboveOne(factors[from])) {
      for (size_t to = 0; to < factors.size(); ++to) {
        if (to == from || (to == innermost && factors[to] > max_innermost / d)) continue;
        if (from == innermost && factors[from] / d < min_innermost) continue;
        moves.push_back({from, to, d});
      }
    }
  }
  if (moves.empty()) return std::nullopt;
  const Move& m = moves[rng() % moves.size()];
  std::vector<int64_t> out = factors;
  out[m.from] /= m.divisor;
  out[m.to] *= m.divisor;
  return out;
}

// The weights of a categorical's candidates (millionths, as the trace holds
// them), or empty when the instruction has none.
std::vector<int64_t> Weights(const Instruction& inst) {
  std::vector<int64_t> out;
  for (const TraceArg& a : inst.args) {
    if (a.key != "probs_micro" || a.kind != TraceArg::Kind::kList) continue;
    for (const TraceArg& w : a.list) out.push_back(w.kind == TraceArg::Kind::kInt ? w.value : 0);
  }
  return out;
}

std::optional<std::vector<int64_t>> OtherCandidate(const Instruction& inst, std::mt19937_64& rng) {
  const std::vector<int64_t> weights = Weights(inst);
  if (inst.decision.size() != 1) return std::nullopt;
  const int64_t current = inst.decision[0];
  auto eligible = [&](size_t i) { return int64_t(i) != current && weights[i] > 0; };
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (eligible(i)) total += double(weights[i]);
  }
  if (total <= 0) return std::nullopt;
  double x = std::uniform_real_distribution<double>(0, total)(rng);
  int64_t last = -1;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!eligible(i)) continue;
    last = int64_t(i);
    if (x < double(weights[i])) break;
    x -= double(weights[i]);
  }
  return std::vector<int64_t>{last};
}

}  // namespace

std::optional<std::vector<int64_t>> NeighbourDecision(const Instruction& inst, std::mt19937_64& rng) {
  if (!inst.has_decision) return std::nullopt;
  if (inst.kind == InstructionKind::kSamplePerfectTile) {
    std::optional<int64_t> max_innermost = IntArg(inst, "max_innermost");
    if (!max_innermost) return std::nullopt;
    return MoveTileFactor(inst.decision, IntArg(inst, "min_innermost").value_or(1), *max_innermost, rng);
  }
  if (inst.kind == InstructionKind::kSampleCategorical) return OtherCandidate(inst, rng);
  return std::nullopt;
}

}  // namespace tunefarm::tuner
