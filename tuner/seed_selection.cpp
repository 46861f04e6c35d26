// Seeds of a search round: see seed_selection.h.
#include "tunefarm/tuner/seed_selection.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace tunefarm::tuner {

std::vector<std::string> ChoiceKeys(const Trace& trace) {
  std::vector<std::string> keys;
  for (size_t index : trace.DecisionIndices()) {
    const Instruction& inst = trace.instructions()[index];
    if (inst.kind != InstructionKind::kSampleCategorical || inst.decision.size() != 1) continue;
    Instruction bare = inst;
    bare.decision.clear();
    bare.has_decision = false;
    bare.outputs.clear();
    Trace one;
    one.Append(std::move(bare));
    keys.push_back(std::to_string(index) + "|" + one.ToText() + "|" + std::to_string(inst.decision[0]));
  }
  return keys;
}

std::vector<std::string> MissingChoices(const std::vector<Trace>& seeds, size_t fastest) {
  std::set<std::string> among_fastest;
  for (size_t i = 0; i < seeds.size() && i < fastest; ++i) {
    for (std::string& key : ChoiceKeys(seeds[i])) among_fastest.insert(std::move(key));
  }
  std::vector<std::string> missing;
  std::set<std::string> listed;
  for (size_t i = fastest; i < seeds.size(); ++i) {
    for (std::string& key : ChoiceKeys(seeds[i])) {
      if (!among_fastest.count(key) && listed.insert(key).second) missing.push_back(std::move(key));
    }
  }
  return missing;
}

std::vector<Trace> PickSeeds(const std::vector<std::pair<double, Trace>>& measured, size_t fastest,
                             size_t per_choice_limit, size_t per_value) {
  std::vector<Trace> seeds;
  std::set<std::string> among_fastest;
  const size_t first_count = std::min(fastest, measured.size());
  for (size_t i = 0; i < first_count; ++i) {
    seeds.push_back(measured[i].second);
    for (std::string& key : ChoiceKeys(measured[i].second)) among_fastest.insert(std::move(key));
  }
  // Values the fastest lack, and how many seeds each has been given since.
  std::map<std::string, size_t> added_for;
  size_t added = 0;
  for (size_t i = first_count; i < measured.size() && added < per_choice_limit; ++i) {
    std::vector<std::string> keys = ChoiceKeys(measured[i].second);
    bool wanted = false;
    for (const std::string& key : keys) wanted = wanted || (!among_fastest.count(key) && added_for[key] < per_value);
    if (!wanted) continue;
    for (const std::string& key : keys) {
      if (!among_fastest.count(key)) ++added_for[key];
    }
    seeds.push_back(measured[i].second);
    ++added;
  }
  return seeds;
}

}  // namespace tunefarm::tuner
