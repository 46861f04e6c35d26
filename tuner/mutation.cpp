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
  for (int64_t d = 2; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// Moves one divisor between two levels. Tries a few (from, to, divisor)
// draws because a draw can break the innermost limit; every accepted move is
// a valid decision by construction, so replay never rejects it.
std::optional<std::vector<int64_t>> MoveTileFactor(const std::vector<int64_t>& factors, int64_t max_innermost,
                                                   std::mt19937_64& rng) {
  const size_t n = factors.size();
  if (n < 2) return std::nullopt;
  std::vector<size_t> sources;
  for (size_t i = 0; i < n; ++i) {
    if (factors[i] > 1) sources.push_back(i);
  }
  if (sources.empty()) return std::nullopt;
  constexpr int kDraws = 8;
  for (int attempt = 0; attempt < kDraws; ++attempt) {
    size_t from = sources[rng() % sources.size()];
    size_t to = rng() % (n - 1);
    if (to >= from) ++to;
    std::vector<int64_t> divisors = DivisorsAboveOne(factors[from]);
    int64_t d = divisors[rng() % divisors.size()];
    std::vector<int64_t> out = factors;
    out[from] /= d;
    out[to] *= d;
    if (out.back() <= max_innermost) return out;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> OtherCandidate(const Instruction& inst, std::mt19937_64& rng) {
  if (inst.decision.size() != 1 || inst.args.size() < 2 || inst.args[1].kind != TraceArg::Kind::kList) {
    return std::nullopt;
  }
  const std::vector<TraceArg>& probs = inst.args[1].list;
  const int64_t current = inst.decision[0];
  double total = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (int64_t(i) != current) total += double(probs[i].value);
  }
  if (total <= 0) return std::nullopt;
  double x = std::uniform_real_distribution<double>(0, total)(rng);
  int64_t last = -1;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (int64_t(i) == current || probs[i].value <= 0) continue;
    last = int64_t(i);
    if (x < double(probs[i].value)) return std::vector<int64_t>{last};
    x -= double(probs[i].value);
  }
  return std::vector<int64_t>{last};
}

}  // namespace

std::optional<std::vector<int64_t>> NeighbourDecision(const Instruction& inst, std::mt19937_64& rng) {
  if (!inst.has_decision) return std::nullopt;
  if (inst.name == "sample_perfect_tile") {
    std::optional<int64_t> max_innermost = IntArg(inst, "max_innermost");
    if (!max_innermost) return std::nullopt;
    return MoveTileFactor(inst.decision, *max_innermost, rng);
  }
  if (inst.name == "sample_categorical") return OtherCandidate(inst, rng);
  return std::nullopt;
}

}  // namespace tunefarm::tuner
