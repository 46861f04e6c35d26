// JitCompile: compile a PrimFunc to machine code in memory and load it with
// ORC LLJIT.
//
// The object is produced by our own TargetMachine (exact CPU and features,
// same pipeline as EmitObject) and handed to LLJIT as an object file, so the
// JIT only links. Every symbol the generated code may call is given to the JIT
// explicitly (absoluteSymbols): the runtime, libm, memset/memcpy. The process
// search generator is only a fallback for compiler helper routines, so the JIT
// never depends on the executable being linked with -rdynamic.
//
// One LLJIT per kernel: destroying the JitKernel frees its code. Creating an
// LLJIT costs well under a millisecond next to tens of milliseconds of O3 and
// instruction selection, so a shared JIT with per-kernel JITDylibs is not worth
// its lifetime bookkeeping yet.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include <cmath>
#include <cstring>

#include "codegen_llvm_internal.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm {
namespace {

using PackedFn = int32_t (*)(void**);

std::string ErrorText(llvm::Error e) { return llvm::toString(std::move(e)); }

class LLJitKernel final : public JitKernel {
 public:
  LLJitKernel(std::unique_ptr<llvm::orc::LLJIT> jit, PackedFn fn, std::string name, size_t num_params)
      : jit_(std::move(jit)), fn_(fn), name_(std::move(name)), num_params_(num_params) {}

  Status Run(const std::vector<void*>& args) const override {
    if (args.size() != num_params_) {
      return Status::InvalidArgument("kernel '" + name_ + "' takes " + std::to_string(num_params_) +
                                     " buffers, got " + std::to_string(args.size()));
    }
    int32_t rc = fn_(const_cast<void**>(args.data()));
    if (rc == 0) return Status::OK();
    std::string why = rc == codegen::kErrorOutOfMemory ? " (out of memory)" : "";
    return Status::Internal("kernel '" + name_ + "' returned error code " + std::to_string(rc) + why);
  }
  const std::string& name() const override { return name_; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  PackedFn fn_;
  std::string name_;
  size_t num_params_;
};

template <typename Fn>
void AddSymbol(llvm::orc::LLJIT& jit, llvm::orc::SymbolMap& map, const char* name, Fn* fn) {
  map[jit.mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
      llvm::pointerToJITTargetAddress(reinterpret_cast<void*>(fn)),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
}

llvm::orc::SymbolMap KnownSymbols(llvm::orc::LLJIT& jit) {
  llvm::orc::SymbolMap map;
  AddSymbol(jit, map, "tunefarm_parallel_for", &tunefarm_parallel_for);
  AddSymbol(jit, map, "tunefarm_alloc", &tunefarm_alloc);
  AddSymbol(jit, map, "tunefarm_free", &tunefarm_free);
  using F = float(float);
  using D = double(double);
  using F2 = float(float, float);
  using D2 = double(double, double);
  AddSymbol<F>(jit, map, "expf", &::expf);
  AddSymbol<D>(jit, map, "exp", &::exp);
  AddSymbol<F>(jit, map, "logf", &::logf);
  AddSymbol<D>(jit, map, "log", &::log);
  AddSymbol<F>(jit, map, "sqrtf", &::sqrtf);
  AddSymbol<D>(jit, map, "sqrt", &::sqrt);
  AddSymbol<F>(jit, map, "tanhf", &::tanhf);
  AddSymbol<D>(jit, map, "tanh", &::tanh);
  AddSymbol<F>(jit, map, "erff", &::erff);
  AddSymbol<D>(jit, map, "erf", &::erf);
  AddSymbol<F>(jit, map, "floorf", &::floorf);
  AddSymbol<D>(jit, map, "floor", &::floor);
  AddSymbol<F>(jit, map, "ceilf", &::ceilf);
  AddSymbol<D>(jit, map, "ceil", &::ceil);
  AddSymbol<F>(jit, map, "fabsf", &::fabsf);
  AddSymbol<D>(jit, map, "fabs", &::fabs);
  AddSymbol<F2>(jit, map, "powf", &::powf);
  AddSymbol<D2>(jit, map, "pow", &::pow);
  AddSymbol<F2>(jit, map, "fmodf", &::fmodf);
  AddSymbol<D2>(jit, map, "fmod", &::fmod);
  AddSymbol<void*(void*, int, size_t)>(jit, map, "memset", &::memset);
  AddSymbol<void*(void*, const void*, size_t)>(jit, map, "memcpy", &::memcpy);
  AddSymbol<void*(void*, const void*, size_t)>(jit, map, "memmove", &::memmove);
  return map;
}

}  // namespace

Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  if (!t.is_host()) {
    return Status::InvalidArgument("JitCompile runs code in this process, so the target must be this host (" +
                                   Target::Host().triple + "); got " + t.ToString());
  }
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  TF_ASSIGN_OR_RETURN(std::string object, codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile));

  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(t.triple)};
  jtmb.setCPU(t.cpu);
  auto jit_or = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit_or) return Status::Internal("cannot create LLJIT: " + ErrorText(jit_or.takeError()));
  std::unique_ptr<llvm::orc::LLJIT> jit = std::move(*jit_or);
  llvm::orc::JITDylib& dylib = jit->getMainJITDylib();
  if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(KnownSymbols(*jit)))) {
    return Status::Internal("cannot define runtime symbols in the JIT: " + ErrorText(std::move(e)));
  }
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit->getDataLayout().getGlobalPrefix());
  if (!generator) return Status::Internal("cannot search this process's symbols: " + ErrorText(generator.takeError()));
  dylib.addGenerator(std::move(*generator));

  if (llvm::Error e = jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, f.name + ".o"))) {
    return Status::Internal("JIT cannot load the object for '" + f.name + "': " + ErrorText(std::move(e)));
  }
  auto address = jit->lookup(f.name + "_packed");
  if (!address) {
    return Status::Internal("JIT cannot link '" + f.name + "': " + ErrorText(address.takeError()));
  }
  auto fn = address->toPtr<PackedFn>();
  return std::unique_ptr<JitKernel>(new LLJitKernel(std::move(jit), fn, f.name, f.params.size()));
}

}  // namespace tunefarm
