// The table of sketch rule sets per target kind (sketch_registry.h), and
// MakeSketchPolicy (sketch.h), which asks it.
#include "tunefarm/tuner/sketch_registry.h"

#include <filesystem>

#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {

Status SketchRegistry::Register(const std::string& kind, SketchRuleSet rules) {
  if (!rules_.try_emplace(kind, std::move(rules)).second) {
    return Status::AlreadyExists("sketch rules for target kind '" + kind + "' are registered already");
  }
  return Status::OK();
}

std::vector<std::string> SketchRegistry::Kinds() const {
  std::vector<std::string> kinds;
  for (const auto& [kind, rules] : rules_) kinds.push_back(kind);
  return kinds;
}

Result<std::unique_ptr<SketchPolicy>> SketchRegistry::Make(const Target& target, const std::string& config_dir,
                                                           const std::set<std::string>* replayable) const {
  auto it = rules_.find(target.kind);
  if (it == rules_.end()) {
    std::string kinds;
    for (const std::string& kind : Kinds()) kinds += (kinds.empty() ? "" : ", ") + kind;
    return Status::InvalidArgument("no sketch rules for target kind '" + target.kind + "' yet (registered: " +
                                   (kinds.empty() ? "none" : kinds) + ")");
  }
  const SketchRuleSet& rules = it->second;
  std::string path;
  if (!config_dir.empty() && std::filesystem::exists(config_dir + "/sketch/" + rules.config_file)) {
    path = config_dir + "/sketch/" + rules.config_file;
  }
  return rules.make(target, path, replayable);
}

const SketchRegistry& SketchRegistry::BuiltIn() {
  // One entry per target kind.
  static const SketchRegistry* registry = [] {
    auto* r = new SketchRegistry();
    (void)r->Register("llvm", CpuSketchRules());
    (void)r->Register("cuda", CudaSketchRules());
    return r;
  }();
  return *registry;
}

Result<std::unique_ptr<SketchPolicy>> MakeSketchPolicy(const Target& target, const std::string& config_dir,
                                                       const std::set<std::string>* replayable) {
  return SketchRegistry::BuiltIn().Make(target, config_dir, replayable);
}

}  // namespace tunefarm::tuner
