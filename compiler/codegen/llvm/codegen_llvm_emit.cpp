// Target machines, the optimisation pipeline, and the text/object outputs:
// EmitObject, EmitCombinedObject, EmitAssembly, EmitLLVMIR. JitCompile (codegen_llvm_jit.cpp)
// reuses LowerAndGenerate and EmitMachineCode so that JIT-ed and AOT code are
// the same machine code.
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>
#include <set>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/split_prepack.h"

namespace tunefarm {
namespace codegen {

void InitializeLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

Result<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const Target& t, int opt_level) {
  if (t.kind != "llvm") {
    return Status::InvalidArgument("the LLVM CPU code generator cannot compile for target kind '" + t.kind + "' (" +
                                   t.ToString() + ")");
  }
  InitializeLLVMTargets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, error);
  if (target == nullptr) {
    return Status::InvalidArgument("LLVM has no code generator for triple '" + t.triple + "': " + error);
  }
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // fp-contract=fast
  llvm::CodeGenOpt::Level level = opt_level <= 0   ? llvm::CodeGenOpt::None
                                  : opt_level == 1 ? llvm::CodeGenOpt::Less
                                  : opt_level == 2 ? llvm::CodeGenOpt::Default
                                                   : llvm::CodeGenOpt::Aggressive;
  // PIC: objects go into shared libraries (worker runners, `tunefarm compile` users).
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      t.triple, t.cpu.empty() ? "generic" : t.cpu, t.features, options, llvm::Reloc::PIC_, std::nullopt, level));
  if (tm == nullptr) return Status::Internal("LLVM could not create a target machine for " + t.ToString());
  return tm;
}

namespace {

void Optimize(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0 ? pb.buildO0DefaultPipeline(level)
                                                                      : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

}  // namespace

Result<CompiledModule> LowerAndGenerate(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  if (f.name.empty()) return Status::InvalidArgument("codegen: PrimFunc has no name");
  return LowerAndGenerateAll({f}, {}, f.name, t, options);
}

Result<CompiledModule> LowerAndGenerateAll(const std::vector<ir::PrimFunc>& funcs,
                                           const std::vector<SequenceEntry>& sequences,
                                           const std::string& module_name, const Target& t,
                                           const CodegenOptions& options) {
  // Per PrimFunc: the whole function, then the prepack split's two entries
  // when there is one. Every entry and its _packed twin is an external
  // symbol; a name taken twice would make LLVM rename one of them quietly.
  std::vector<ir::PrimFunc> generated;
  std::set<std::string> entries;
  auto claim = [&entries](const std::string& name) -> Status {
    if (!entries.insert(name).second) {
      return Status::InvalidArgument("codegen: two entries of one object are named '" + name + "'");
    }
    return Status::OK();
  };
  for (const ir::PrimFunc& f : funcs) {
    if (f.name.empty()) return Status::InvalidArgument("codegen: PrimFunc has no name");
    std::optional<PrepackSplit> split = SplitPrepack(f);
    if (!split || options.whole_entry) generated.push_back(f);
    if (split) {
      generated.push_back(split->prepack);
      generated.push_back(split->prepacked);
    }
  }
  for (const ir::PrimFunc& one : generated) {
    TF_RETURN_IF_ERROR(claim(one.name));
    TF_RETURN_IF_ERROR(claim(one.name + "_packed"));
  }
  for (const SequenceEntry& sequence : sequences) TF_RETURN_IF_ERROR(claim(sequence.name));
  CompiledModule m;
  TF_ASSIGN_OR_RETURN(m.machine, CreateTargetMachine(t, options.opt_level));
  m.context = std::make_unique<llvm::LLVMContext>();
  m.module = std::make_unique<llvm::Module>(module_name, *m.context);
  m.module->setTargetTriple(t.triple);
  m.module->setDataLayout(m.machine->createDataLayout());
  m.entry_name = module_name;
  for (const ir::PrimFunc& one : generated) {
    TF_ASSIGN_OR_RETURN(ir::PrimFunc lowered, LowerForCodegen(one));
    CodeGenLLVM codegen(*m.context, *m.module, t, options);
    TF_RETURN_IF_ERROR(codegen.Generate(lowered));
  }
  // Internal helpers (outlined parallel bodies) are named after their
  // function; one of them holding an entry's name would have pushed the entry
  // aside.
  for (const ir::PrimFunc& one : generated) {
    for (const std::string& name : {one.name, one.name + "_packed"}) {
      llvm::Function* fn = m.module->getFunction(name);
      if (fn == nullptr || fn->hasLocalLinkage()) {
        return Status::Internal("codegen: entry '" + name + "' of '" + module_name + "' lost its name to a helper");
      }
    }
  }
  for (const SequenceEntry& sequence : sequences) {
    TF_RETURN_IF_ERROR(GenerateSequence(*m.module, sequence, entries, t));
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*m.module, &os)) {
    return Status::Internal("codegen produced invalid LLVM IR for '" + module_name + "': " + os.str());
  }
  Optimize(*m.module, *m.machine, options.opt_level);
  return m;
}

Result<std::string> EmitMachineCode(CompiledModule& m, llvm::CodeGenFileType type) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (m.machine->addPassesToEmitFile(pm, os, nullptr, type)) {
    return Status::Internal("LLVM target " + m.machine->getTargetTriple().str() + " cannot emit this file type");
  }
  pm.run(*m.module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace codegen

Result<std::string> EmitObject(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  return codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile);
}

Result<std::string> EmitCombinedObject(const std::vector<ir::PrimFunc>& funcs,
                                       const std::vector<SequenceEntry>& sequences, const Target& t,
                                       const CodegenOptions& options) {
  if (funcs.empty()) return Status::InvalidArgument("codegen: a combined object needs at least one PrimFunc");
  const std::string module_name = sequences.empty() ? funcs.front().name : sequences.front().name;
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerateAll(funcs, sequences, module_name, t, options));
  return codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile);
}

Result<std::string> EmitAssembly(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  return codegen::EmitMachineCode(m, llvm::CGFT_AssemblyFile);
}

Result<std::string> EmitLLVMIR(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->print(os, nullptr);
  return os.str();
}

}  // namespace tunefarm
