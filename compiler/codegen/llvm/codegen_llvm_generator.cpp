// The LLVM code generator as the registry's generator for target kind `llvm`
// (codegen.h): CPU targets of any triple LLVM 16 was built with.
#include "codegen/llvm/codegen_llvm_generator.h"

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"

namespace tunefarm {
namespace {

class LLVMCodeGenerator final : public CodeGenerator {
 public:
  std::string_view kind() const override { return "llvm"; }

  Result<std::string> EmitObject(const ir::PrimFunc& f, const Target& t,
                                 const CodegenOptions& options) const override {
    return tunefarm::EmitObject(f, t, options);
  }

  Result<std::string> EmitCombinedObject(const std::vector<ir::PrimFunc>& funcs,
                                         const std::vector<SequenceEntry>& sequences, const Target& t,
                                         const CodegenOptions& options) const override {
    return tunefarm::EmitCombinedObject(funcs, sequences, t, options);
  }

  bool can_jit() const override { return true; }

  Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc& f, const Target& t,
                                                const CodegenOptions& options) const override {
    return tunefarm::JitCompile(f, t, options);
  }
};

}  // namespace

std::unique_ptr<CodeGenerator> MakeLLVMCodeGenerator() { return std::make_unique<LLVMCodeGenerator>(); }

}  // namespace tunefarm
