#include "tunefarm/compiler/workload/workload_shrink.h"

#include <algorithm>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {

Result<Workload> ShrinkWorkload(std::string_view text, const std::string& source_name,
                                std::map<std::string, int64_t> overrides, double flop_budget) {
  ParseOptions options;
  options.source_name = source_name;
  options.param_overrides = overrides;
  TF_ASSIGN_OR_RETURN(Workload current, ParseWorkload(text, options));
  // Each step halves one parameter; 64 steps shrink any 64-bit shape to 1.
  for (int step = 0; step < 256 && current.Flops() > flop_budget; ++step) {
    std::vector<std::pair<std::string, int64_t>> params = current.params;
    std::stable_sort(params.begin(), params.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    bool progressed = false;
    for (const auto& [name, value] : params) {
      if (value <= 1) continue;
      auto trial = overrides;
      trial[name] = (value + 1) / 2;
      options.param_overrides = trial;
      auto smaller = ParseWorkload(text, options);
      if (smaller.ok() && smaller->Flops() < current.Flops()) {
        overrides = std::move(trial);
        current = std::move(smaller).value();
        progressed = true;
        break;
      }
    }
    if (!progressed) break;
  }
  if (current.Flops() > flop_budget) {
    return Status::FailedPrecondition(source_name + ": cannot shrink " + current.name + " below " +
                                      std::to_string(flop_budget) + " FLOP for the reference interpreter");
  }
  return current;
}

}  // namespace tunefarm
