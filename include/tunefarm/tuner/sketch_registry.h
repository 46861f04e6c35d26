// Which sketch rules each target kind gets: a table from target kind to a
// rule set -- the name of its knobs' file under configs/sketch/ and the
// constructor of its SketchPolicy. MakeSketchPolicy (sketch.h) asks the
// built-in table, where the CPU rules (sketch_cpu.cpp, configs/sketch/
// cpu.toml) are registered for `llvm`. Rules for another kind (CUDA) are one
// more entry of that table and files of their own; no other kind's entry
// changes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {

struct SketchRuleSet {
  // Its knobs' file under <config_dir>/sketch/, e.g. "cpu.toml".
  std::string config_file;
  // The policy for a target, from the knobs' file (its path; empty when
  // there is none: the built-in defaults, some of them the target's) and the
  // instructions every measuring worker replays (null: any; a rule whose
  // instruction some worker lacks is off).
  std::function<Result<std::unique_ptr<SketchPolicy>>(const Target& target, const std::string& config_path,
                                                       const std::set<std::string>* replayable)>
      make;
};

class SketchRegistry {
 public:
  // AlreadyExists when `kind` has rules already.
  Status Register(const std::string& kind, SketchRuleSet rules);

  // The policy of `target.kind`'s rules, with <config_dir>/sketch/<config_file>
  // when `config_dir` is set and holds it. InvalidArgument naming the kind
  // and the registered ones when the kind has no rules.
  Result<std::unique_ptr<SketchPolicy>> Make(const Target& target, const std::string& config_dir,
                                             const std::set<std::string>* replayable) const;

  // The kinds with rules, sorted.
  std::vector<std::string> Kinds() const;

  // The built-in table: `llvm` -> CpuSketchRules(), `cuda` -> CudaSketchRules()
  // (sketch_cuda.h). Built on first use, never destroyed.
  static const SketchRegistry& BuiltIn();

 private:
  std::map<std::string, SketchRuleSet> rules_;
};

// The CPU rules (sketch_cpu.cpp) as a rule set: configs/sketch/cpu.toml; the
// padding rule is off where a worker cannot replay pad_input.
SketchRuleSet CpuSketchRules();

}  // namespace tunefarm::tuner
