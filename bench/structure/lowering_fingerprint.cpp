// Prints, for every workload file given, a fingerprint of what the tuner and
// the compiler make of it: the default program and a fixed set of sampled and
// mutated schedules (seeded), each as FNV-1a hashes of its trace text, its
// scheduled loop IR, the IR after LowerForCodegen and the LLVM IR emitted for
// a fixed target. Two builds that print the same lines make bit-identical
// kernels for these schedules: run it before and after a change that must not
// alter code generation and diff the outputs.
//   tunefarm_lowering_fingerprint configs/workloads/*.tf > before.txt
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace {

using namespace tunefarm;

constexpr int kSamples = 12;
constexpr uint64_t kSeed = 11;
// A fixed target, not the host's: the fingerprint must not depend on where it runs.
constexpr std::string_view kTarget = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4";

uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// One line: label, then the four hashes (0 where a stage failed, with the error).
void PrintProgram(const std::string& label, const std::string& trace_text, const ir::PrimFunc& func,
                  const Target& target) {
  auto lowered = LowerForCodegen(func);
  auto llvm_ir = EmitLLVMIR(func, target);
  std::printf("%-40s trace %016llx ir %016llx lowered %016llx llvm %016llx%s\n", label.c_str(),
              static_cast<unsigned long long>(Fnv1a(trace_text)),
              static_cast<unsigned long long>(Fnv1a(ir::ToString(func))),
              static_cast<unsigned long long>(lowered.ok() ? Fnv1a(ir::ToString(*lowered)) : 0),
              static_cast<unsigned long long>(llvm_ir.ok() ? Fnv1a(*llvm_ir) : 0),
              llvm_ir.ok() ? "" : (" " + llvm_ir.status().ToString()).c_str());
}

int FingerprintWorkload(const std::string& path, const Target& target) {
  auto workload = ParseWorkloadFile(path);
  if (!workload.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), workload.status().ToString().c_str());
    return 1;
  }
  auto func = LowerToPrimFunc(*workload);
  if (!func.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), func.status().ToString().c_str());
    return 1;
  }
  std::string name = path.substr(path.find_last_of('/') + 1);
  PrintProgram(name + " default", "", *func, target);
  auto policy = tuner::MakeCpuSketchPolicy();
  tuner::EvolutionarySearch search(*func, policy.get(), tuner::SearchOptions{}, kSeed);
  for (int i = 0; i < kSamples; ++i) {
    auto sampled = search.Sample();
    if (!sampled.ok()) {
      std::printf("%s sample %d: %s\n", name.c_str(), i, sampled.status().ToString().c_str());
      continue;
    }
    PrintProgram(name + " sample " + std::to_string(i), sampled->trace.ToText(), sampled->func, target);
    auto mutated = search.Mutate(*sampled);
    if (mutated.ok()) {
      PrintProgram(name + " mutant " + std::to_string(i), mutated->trace.ToText(), mutated->func, target);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s WORKLOAD.tf...\n", argv[0]);
    return 2;
  }
  auto target = Target::Parse(kTarget);
  if (!target.ok()) {
    std::fprintf(stderr, "%s\n", target.status().ToString().c_str());
    return 1;
  }
  int failures = 0;
  for (int i = 1; i < argc; ++i) failures += FingerprintWorkload(argv[i], *target);
  return failures == 0 ? 0 : 1;
}
