// Private to compiler/: the LLVM code generator as a CodeGenerator
// (codegen.h), which the registry (codegen/codegen_registry.cpp) serves
// target kind `llvm` with.
#pragma once

#include <memory>

#include "tunefarm/compiler/codegen/codegen.h"

namespace tunefarm {

// A new generator for kind `llvm`: EmitObject and JitCompile of codegen_llvm.h.
std::unique_ptr<CodeGenerator> MakeLLVMCodeGenerator();

}  // namespace tunefarm
