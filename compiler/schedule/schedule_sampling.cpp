// Sampling instructions: sample_perfect_tile and sample_categorical.
#include <algorithm>
#include <numeric>

#include "tunefarm/compiler/schedule/schedule.h"

namespace tunefarm {

namespace {

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
      if (d * d != n) out.push_back(n / d);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> PrimeFactors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  }
  if (n > 1) out.push_back(n);
  return out;
}

}  // namespace

Result<std::vector<ValueRV>> Schedule::SamplePerfectTile(LoopRV loop, int n, int64_t max_innermost,
                                                         std::optional<std::vector<int64_t>> decision,
                                                         int64_t min_innermost) {
  TF_ASSIGN_OR_RETURN(int64_t extent, LoopExtent(loop));
  if (n < 1 || n > 8) return Status::InvalidArgument("sample_perfect_tile: n must be in [1, 8], got " + std::to_string(n));
  if (max_innermost < 1) return Status::InvalidArgument("sample_perfect_tile: max_innermost must be positive");
  std::vector<int64_t> inner_choices;
  for (int64_t d : Divisors(extent)) {
    if (d >= min_innermost && d <= max_innermost) inner_choices.push_back(d);
  }
  if (inner_choices.empty()) {
    return Status::InvalidArgument("sample_perfect_tile: no divisor of " + std::to_string(extent) + " lies in [" +
                                   std::to_string(min_innermost) + ", " + std::to_string(max_innermost) +
                                   "] (min_innermost, max_innermost)");
  }
  auto valid = [&](const std::vector<int64_t>& factors) {
    int64_t product = 1;
    for (int64_t f : factors) {
      // product <= extent throughout, so this cannot overflow on any input.
      if (f <= 0 || f > extent / product) return false;
      product *= f;
    }
    return int(factors.size()) == n && product == extent && factors.back() <= max_innermost &&
           factors.back() >= min_innermost;
  };
  std::vector<int64_t> factors;
  const std::vector<int64_t>* hint = decision ? nullptr : NextHint();
  if (decision) {
    factors = *decision;
    if (!valid(factors)) {
      std::string text;
      for (int64_t f : factors) text += (text.empty() ? "" : ", ") + std::to_string(f);
      return Status::InvalidArgument("sample_perfect_tile: decision [" + text + "] is not " + std::to_string(n) +
                                     " positive factors of " + std::to_string(extent) + " with innermost in [" +
                                     std::to_string(min_innermost) + ", " + std::to_string(max_innermost) + "]");
    }
  } else if (hint && valid(*hint)) {
    factors = *hint;
  } else {
    factors.assign(size_t(n), 1);
    int64_t inner = inner_choices[rng_() % inner_choices.size()];
    factors.back() = inner;
    // Distribute the remaining prime factors over the outer positions at random.
    for (int64_t p : PrimeFactors(extent / inner)) {
      int slot = n == 1 ? 0 : int(rng_() % uint64_t(n - 1));
      factors[size_t(slot)] *= p;
    }
    if (n == 1) factors[0] = extent;
  }
  std::vector<ValueRV> out;
  Instruction inst{InstructionKind::kSamplePerfectTile,
                   {TraceArg::Ref(Name(loop)), TraceArg::Int(n).Named("n"), TraceArg::Int(max_innermost).Named("max_innermost")},
                   {}, factors, true};
  // Printed only when it binds, so traces without it read as before.
  if (min_innermost > 1) inst.args.push_back(TraceArg::Int(min_innermost).Named("min_innermost"));
  for (int64_t f : factors) {
    out.push_back(NewValueRV(f));
    inst.outputs.push_back(Name(out.back()));
  }
  Record(std::move(inst));
  return out;
}

Result<ValueRV> Schedule::SampleCategorical(const std::vector<int64_t>& candidates, const std::vector<double>& probs,
                                            std::optional<int64_t> decision) {
  if (candidates.empty() || candidates.size() != probs.size()) {
    return Status::InvalidArgument("sample_categorical: needs as many probabilities as candidates (and at least one)");
  }
  int64_t index;
  const std::vector<int64_t>* hint = decision ? nullptr : NextHint();
  if (decision) {
    index = *decision;
    if (index < 0 || size_t(index) >= candidates.size()) {
      return Status::InvalidArgument("sample_categorical: decision " + std::to_string(index) + " is not an index into " +
                                     std::to_string(candidates.size()) + " candidates");
    }
  } else if (hint && hint->size() == 1 && (*hint)[0] >= 0 && size_t((*hint)[0]) < candidates.size() &&
             probs[size_t((*hint)[0])] > 0) {
    index = (*hint)[0];
  } else {
    double total = std::accumulate(probs.begin(), probs.end(), 0.0);
    double x = std::uniform_real_distribution<double>(0, total)(rng_);
    index = int64_t(candidates.size()) - 1;
    for (size_t i = 0; i < probs.size(); ++i) {
      if (x < probs[i]) {
        index = int64_t(i);
        break;
      }
      x -= probs[i];
    }
  }
  ValueRV out = NewValueRV(candidates[size_t(index)]);
  std::vector<TraceArg> cands, ps;
  for (int64_t c : candidates) cands.push_back(TraceArg::Int(c));
  // Probabilities are stored in millionths so the trace stays integer text.
  for (double p : probs) ps.push_back(TraceArg::Int(int64_t(p * 1e6 + 0.5)));
  Record({InstructionKind::kSampleCategorical, {TraceArg::List(cands), TraceArg::List(ps).Named("probs_micro")},
          {Name(out)}, {index}, true});
  return out;
}

}  // namespace tunefarm
