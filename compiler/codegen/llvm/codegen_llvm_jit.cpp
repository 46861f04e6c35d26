// JitCompile: compile a PrimFunc to machine code in memory and run it in this
// process. JitLoadObject: load an object EmitObject made elsewhere (the tuner
// daemon builds candidates for some workers).
//
// Both go through LoadKernelObject (object_kernel.h), the runtime's own ELF
// loader: the object is produced by our own TargetMachine (exact CPU and
// features, same pipeline as EmitObject), so loading only links, and a kernel
// runs from the same loader here as on a board whose worker links no LLVM.
// What LLVM adds here is the check of foreign bytes: JitLoadObject parses
// them with LLVM's object reader first, so that a buffer that is not an
// object, or an object for another architecture, gets LLVM's plain words.
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Triple.h>

#include <memory>
#include <string>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/codegen/object_kernel.h"

namespace tunefarm {
namespace {

std::string ErrorText(llvm::Error e) { return llvm::toString(std::move(e)); }

}  // namespace

Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options) {
  if (!t.is_host()) {
    return Status::InvalidArgument("JitCompile runs code in this process, so the target must be this host (" +
                                   Target::Host().triple + "); got " + t.ToString());
  }
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m, codegen::LowerAndGenerate(f, t, options));
  TF_ASSIGN_OR_RETURN(std::string object, codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile));
  auto kernel = LoadKernelObject(object, f);
  // Our own object for this host that does not load is our bug, not the caller's.
  if (!kernel.ok()) return Status::Internal("JitCompile: " + kernel.status().message());
  return kernel;
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
  return LoadKernelObject(object_bytes, f);
}

}  // namespace tunefarm
