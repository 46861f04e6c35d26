// JitCompile: compile a PrimFunc to machine code in memory and load it with
// ORC LLJIT. JitLoadObject: load an object EmitObject made elsewhere (the
// tuner daemon builds candidates for some workers) the same way.
//
// The object is produced by our own TargetMachine (exact CPU and features,
// same pipeline as EmitObject) and handed to LLJIT as an object file, so the
// JIT only links. Both entry points share that linking step (LoadKernel), so a
// loaded object finds the same runtime symbols and entry as a JIT-ed one.
// Every symbol the generated code may call is given to the JIT explicitly
// (absoluteSymbols): the runtime, libm, memset/memcpy. The process
// search generator is only a fallback for compiler helper routines, so the JIT
// never depends on the executable being linked with -rdynamic.
//
// One LLJIT per kernel: destroying the JitKernel frees its code. Creating an
// LLJIT costs well under a millisecond next to tens of milliseconds of O3 and
// instruction selection, so a shared JIT with per-kernel JITDylibs is not worth
// its lifetime bookkeeping yet.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Triple.h>

#include <cmath>
#include <cstring>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/runtime/runtime.h"

namespace tunefarm {
namespace {

using PackedFn = int32_t (*)(void**);

std::string ErrorText(llvm::Error e) { return llvm::toString(std::move(e)); }

// The entries a kernel object may hold (null when absent) and their
// parameter counts.
struct Entries {
  PackedFn whole = nullptr, prepack = nullptr, prepacked = nullptr;
  size_t whole_params = 0, prepack_params = 0, prepacked_params = 0;
};

// What the object made from `f` must hold: the split's entries when f has a
// prepack split (the whole one optional), else the whole one.
struct Expected {
  Entries counts;
  bool split = false;
};

Expected ExpectedEntries(const ir::PrimFunc& f) {
  Expected e;
  e.counts.whole_params = f.params.size();
  if (std::optional<PrepackSplit> split = SplitPrepack(f)) {
    e.split = true;
    e.counts.prepack_params = split->prepack.params.size();
    e.counts.prepacked_params = split->prepacked.params.size();
  }
  return e;
}

class LLJitKernel final : public JitKernel {
 public:
  LLJitKernel(std::unique_ptr<llvm::orc::LLJIT> jit, Entries entries, std::string name)
      : jit_(std::move(jit)), entries_(entries), name_(std::move(name)) {}

  Status Run(const std::vector<void*>& args) const override {
    if (entries_.whole == nullptr) {
      return Status::FailedPrecondition("kernel '" + name_ +
                                        "' was compiled with its prepack entries only (CodegenOptions::whole_entry): "
                                        "call it through PreparedCall");
    }
    return Call(entries_.whole, entries_.whole_params, name_, args);
  }
  const std::string& name() const override { return name_; }
  bool has_prepack() const override { return entries_.prepack != nullptr; }
  Status RunPrepack(const std::vector<void*>& args) const override {
    if (!has_prepack()) return Status::FailedPrecondition("kernel '" + name_ + "' has no prepack entry");
    return Call(entries_.prepack, entries_.prepack_params, name_ + kPrepackSuffix, args);
  }
  Status RunPrepacked(const std::vector<void*>& args) const override {
    if (!has_prepack()) return Status::FailedPrecondition("kernel '" + name_ + "' has no prepacked entry");
    return Call(entries_.prepacked, entries_.prepacked_params, name_ + kPrepackedSuffix, args);
  }

 private:
  static Status Call(PackedFn fn, size_t num_params, const std::string& name, const std::vector<void*>& args) {
    if (args.size() != num_params) {
      return Status::InvalidArgument("kernel '" + name + "' takes " + std::to_string(num_params) + " buffers, got " +
                                     std::to_string(args.size()));
    }
    int32_t rc = fn(const_cast<void**>(args.data()));
    if (rc == 0) return Status::OK();
    std::string why = rc == codegen::kErrorOutOfMemory ? " (out of memory)" : "";
    return Status::Internal("kernel '" + name + "' returned error code " + std::to_string(rc) + why);
  }

  std::unique_ptr<llvm::orc::LLJIT> jit_;
  Entries entries_;
  std::string name_;
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

// Links `object` into a fresh LLJIT and finds in it the entries `expected`
// names (required ones first, so that a link failure is reported against
// the entry the caller needs).
Result<std::unique_ptr<JitKernel>> LoadKernel(const std::string& object, const std::string& name,
                                              const Expected& expected, const Target& t) {
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

  if (llvm::Error e = jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, name + ".o"))) {
    return Status::Internal("JIT cannot load the object for '" + name + "': " + ErrorText(std::move(e)));
  }
  auto find = [&](const std::string& symbol) -> Result<PackedFn> {
    auto address = jit->lookup(symbol + "_packed");
    if (!address) return Status::Internal("JIT cannot link '" + symbol + "': " + ErrorText(address.takeError()));
    return address->toPtr<PackedFn>();
  };
  Entries e = expected.counts;
  if (expected.split) {
    TF_ASSIGN_OR_RETURN(e.prepack, find(name + kPrepackSuffix));
    TF_ASSIGN_OR_RETURN(e.prepacked, find(name + kPrepackedSuffix));
    // Optional: measurement builds omit the whole entry. The object is linked
    // by now, so a failure here can only be the symbol's absence.
    auto whole = find(name);
    e.whole = whole.ok() ? *whole : nullptr;
  } else {
    TF_ASSIGN_OR_RETURN(e.whole, find(name));
  }
  return std::unique_ptr<JitKernel>(new LLJitKernel(std::move(jit), e, name));
}

}  // namespace

Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  if (!t.is_host()) {
    return Status::InvalidArgument("JitCompile runs code in this process, so the target must be this host (" +
                                   Target::Host().triple + "); got " + t.ToString());
  }
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  TF_ASSIGN_OR_RETURN(std::string object, codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile));
  return LoadKernel(object, f.name, ExpectedEntries(f), t);
}

Result<std::unique_ptr<JitKernel>> JitLoadObject(const std::string& object_bytes, const ir::PrimFunc& f,
                                                 const Target& t) {
  const std::string& symbol = f.name;
  if (!t.is_host()) {
    return Status::InvalidArgument("JitLoadObject runs code in this process, so the target must be this host (" +
                                   Target::Host().triple + "); got " + t.ToString());
  }
  if (symbol.empty()) return Status::InvalidArgument("JitLoadObject: the PrimFunc has no name (the entry symbol)");
  if (object_bytes.empty()) return Status::InvalidArgument("JitLoadObject: the object for '" + symbol + "' is empty");
  // Parse it before the JIT does: a buffer that is not an object, or an
  // object for another architecture, gets a plain error here rather than
  // whatever the JIT linker makes of it.
  auto parsed = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(object_bytes, symbol + ".o"));
  if (!parsed) {
    return Status::InvalidArgument("the object for '" + symbol + "' is not a valid object file: " +
                                   ErrorText(parsed.takeError()));
  }
  const llvm::object::ObjectFile& obj = **parsed;
  if (!obj.isRelocatableObject()) {
    return Status::InvalidArgument("the object for '" + symbol + "' is not a relocatable object (" +
                                   obj.getFileFormatName().str() + ")");
  }
  llvm::Triple host(t.triple);
  if (obj.getArch() != host.getArch()) {
    return Status::InvalidArgument("the object for '" + symbol + "' is for " +
                                   llvm::Triple::getArchTypeName(obj.getArch()).str() + ", this host is " +
                                   llvm::Triple::getArchTypeName(host.getArch()).str());
  }
  return LoadKernel(object_bytes, symbol, ExpectedEntries(f), t);
}

}  // namespace tunefarm
