// MakeSearchStrategy (search_strategy.h): the strategies by name.
#include "tunefarm/tuner/search_strategy.h"

#include <functional>
#include <map>

#include "tunefarm/tuner/search.h"

namespace tunefarm::tuner {

namespace {

using StrategyFactory = std::function<std::unique_ptr<SearchStrategy>(SearchStrategyArgs)>;

// A new strategy is one more entry here.
const std::map<std::string, StrategyFactory>& Strategies() {
  static const auto* strategies = new std::map<std::string, StrategyFactory>{
      {"evolutionary",
       [](SearchStrategyArgs a) {
         return std::make_unique<EvolutionarySearch>(std::move(a.default_func), a.policy, std::move(a.options), a.seed);
       }},
  };
  return *strategies;
}

}  // namespace

std::vector<std::string> SearchStrategyNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : Strategies()) names.push_back(name);
  return names;
}

Result<std::unique_ptr<SearchStrategy>> MakeSearchStrategy(SearchStrategyArgs args) {
  auto it = Strategies().find(args.options.strategy);
  if (it == Strategies().end()) {
    std::string known;
    for (const std::string& name : SearchStrategyNames()) known += (known.empty() ? "" : ", ") + name;
    return Status::InvalidArgument("no search strategy '" + args.options.strategy + "' (known: " + known + ")");
  }
  return it->second(std::move(args));
}

}  // namespace tunefarm::tuner
