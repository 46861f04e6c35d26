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
// LLVM headers stay out of this file: callers compile fast.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm {

// A PrimFunc compiled in process with ORC LLJIT. Thread-compatible: Run may be
// called from several threads at once on different buffers.
class JitKernel {
 public:
  virtual ~JitKernel() = default;
  // args: one data pointer per PrimFunc param, in order.
  // Fails when the kernel was compiled without its whole entry
  // (CodegenOptions::whole_entry).
  virtual Status Run(const std::vector<void*>& args) const = 0;
  virtual const std::string& name() const = 0;
  // The prepack split's entries (split_prepack.h), present together or not
  // at all. args: one pointer per param of the split's prepack / prepacked
  // PrimFunc. Call them through PreparedCall (prepared_call.h).
  virtual bool has_prepack() const = 0;
  virtual Status RunPrepack(const std::vector<void*>& args) const = 0;
  virtual Status RunPrepacked(const std::vector<void*>& args) const = 0;
};

struct CodegenOptions {
  int opt_level = 3;
  // With a prepack split, also emit the whole function (packing inside every
  // call). Measurement only calls the split entries and skips it: it would
  // double the compile of every such candidate.
  bool whole_entry = true;
};

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
// The optimized LLVM IR (text) and the assembly, for inspection.
Result<std::string> EmitLLVMIR(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options = {});
Result<std::string> EmitAssembly(const ir::PrimFunc& f, const Target& t, const CodegenOptions& options = {});

}  // namespace tunefarm
