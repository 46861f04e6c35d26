// LLVM code generation: PrimFunc -> LLVM IR -> JIT-compiled function or object file.
//
// The generated function for PrimFunc `name` has the C signature
//     int32_t name(void* arg0, void* arg1, ...);   // one pointer per param, returns 0
// and a packed entry `name_packed(void** args)` with the same meaning, used
// by the JIT (JitCompile, and JitLoadObject for objects EmitObject made).
// When the PrimFunc has a prepack split (split_prepack.h: a constant input
// re-laid out at the root), the module also holds `name_prepack` and
// `name_prepacked` (each with its `_packed` entry); prepared_call.h calls them.
// Parallel loops call tunefarm_parallel_for from the runtime library
// (runtime.h); big allocations call tunefarm_alloc/tunefarm_free. Vectorized
// loops become LLVM vector operations.
//
// JitKernel and CodegenOptions are the code generators' (codegen.h): this is
// the generator the registry there serves target kind `llvm` with. Callers
// that build for a Target of any kind ask the registry (CodeGeneratorFor).
//
// LLVM headers stay out of this file: callers compile fast.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

// Lowers (LowerForCodegen) and compiles f for target t in this process. t must be
// runnable on this host (same triple).
Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t,
                                              const CodegenOptions& options = {});

// Loads a relocatable object made by EmitObject from `f` (possibly in another
// process or on another machine) into this process with ORC LLJIT, linked
// against the same runtime symbols as JitCompile's code. The entries it must
// hold follow from f: `<f.name>_packed`, or, when f has a prepack split, the
// split's two (the whole one is then optional: measurement objects omit it);
// calls are checked against f's parameter counts. t must be this host (the
// object's architecture is checked against it). Bytes that are not a
// relocatable object for this architecture are InvalidArgument; an object
// that does not link (a missing entry, unknown symbols) is Internal, naming
// the entry. The object is copied: the caller may free `object_bytes`.
Result<std::unique_ptr<JitKernel>> JitLoadObject(const std::string& object_bytes, const ir::PrimFunc& f,
                                                 const Target& t);

// Lowers and emits a relocatable object file (ELF bytes) for any triple LLVM was built with.
Result<std::string> EmitObject(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options = {});
// One object (one LLVM module, optimized as a whole) for several PrimFuncs,
// each with the entries EmitObject emits for it, plus sequence entries that
// call them (codegen.h: SequenceEntry). A sequence's calls are never inlined
// into it: each kernel's code appears once. Errors as
// CodeGenerator::EmitCombinedObject says.
Result<std::string> EmitCombinedObject(const std::vector<ir::PrimFunc>& funcs,
                                       const std::vector<SequenceEntry>& sequences, const Target& t,
                                       const CodegenOptions& options = {});
// The optimized LLVM IR (text) and the assembly, for inspection.
Result<std::string> EmitLLVMIR(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options = {});
Result<std::string> EmitAssembly(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options = {});

}  // namespace tunefarm
