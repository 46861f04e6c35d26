// The code generator registry (codegen.h), and what a generator does not
// override (CodeGenerator::EmitCombinedObject). The built-in generators are
// registered when the registry is first used, not by static initializers: a
// static library leaves out object files nothing refers to, and their
// registrations with them.
#include "tunefarm/compiler/codegen/codegen.h"

#include <map>
#include <mutex>
#include <utility>

#include "codegen/cuda/codegen_cuda_generator.h"
#include "codegen/llvm/codegen_llvm_generator.h"

namespace tunefarm {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<CodeGenerator>, std::less<>> by_kind;  // GUARDED_BY(mu)
};

Registry& TheRegistry() {
  // Never destroyed: a generator may be asked for until the process ends.
  static Registry* registry = [] {
    auto* r = new Registry;
    auto add = [r](std::unique_ptr<CodeGenerator> generator) {
      std::string kind(generator->kind());
      r->by_kind.emplace(std::move(kind), std::move(generator));
    };
    // The built-in generators, one line per target kind.
    add(MakeLLVMCodeGenerator());
    add(MakeCudaCodeGenerator());
    return r;
  }();
  return *registry;
}

// "llvm", "cuda, llvm": the registered kinds. Requires the registry's lock.
std::string KindListLocked(const Registry& registry) {
  std::string out;
  for (const auto& [kind, generator] : registry.by_kind) out += (out.empty() ? "" : ", ") + kind;
  return out;
}

}  // namespace

Result<const CodeGenerator*> CodeGeneratorFor(const Target& t) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  auto it = registry.by_kind.find(t.kind);
  if (it == registry.by_kind.end()) {
    return Status::InvalidArgument("no code generator for target kind '" + t.kind + "' (" + t.ToString() +
                                   "); code generators are registered for: " + KindListLocked(registry));
  }
  return static_cast<const CodeGenerator*>(it->second.get());
}

Status RegisterCodeGenerator(std::unique_ptr<CodeGenerator> generator) {
  if (generator == nullptr) return Status::InvalidArgument("RegisterCodeGenerator: no generator");
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::string kind(generator->kind());
  if (kind.empty()) return Status::InvalidArgument("RegisterCodeGenerator: the generator names no target kind");
  if (registry.by_kind.count(kind) > 0) {
    return Status::AlreadyExists("a code generator is already registered for target kind '" + kind + "'");
  }
  registry.by_kind.emplace(std::move(kind), std::move(generator));
  return Status::OK();
}

Result<std::string> CodeGenerator::EmitCombinedObject(const std::vector<ir::PrimFunc>&,
                                                      const std::vector<SequenceEntry>&, const Target& t,
                                                      const CodegenOptions&) const {
  return Status::Unimplemented("the code generator for target kind '" + std::string(kind()) + "' (" + t.ToString() +
                               ") builds one kernel per object; several kernels in one object are built for llvm "
                               "targets");
}

std::vector<std::string> RegisteredCodeGeneratorKinds() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mu);
  std::vector<std::string> kinds;
  for (const auto& [kind, generator] : registry.by_kind) kinds.push_back(kind);
  return kinds;
}

}  // namespace tunefarm
