// LoadKernelObject: a kernel from a relocatable object that EmitObject made
// for this machine (here, or elsewhere: the tuner builds candidates for
// boards that should not compile), loaded with the runtime's own ELF loader
// (runtime/object_loader.h) -- no LLVM. JitCompile loads its objects the same
// way, so a kernel runs from the same loader wherever it was built.
//
// The entries the object must hold follow from `f` (codegen_llvm.h):
// `<f.name>_packed`, or, when f has a prepack split (split_prepack.h), the
// split's two, the whole one then optional (measurement objects omit it).
// Calls are checked against f's parameter counts.
//
// Errors: bytes that are not a relocatable object for this machine, or that
// do not link (an unknown relocation, an undefined symbol nothing resolves),
// are InvalidArgument as LoadObject words them; an object without an entry f
// needs is InvalidArgument naming the entry. The bytes are copied. The
// kernel owns its code: destroying it unmaps the code.
#pragma once

#include <memory>
#include <string_view>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

Result<std::unique_ptr<JitKernel>> LoadKernelObject(std::string_view object_bytes, const ir::PrimFunc& f);

}  // namespace tunefarm
