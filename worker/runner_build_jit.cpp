// How the runner builds a candidate that came without an object (runner.h,
// CompileCandidate): the code generator of the target's kind compiles it in
// this process. The lean worker's runner defines these in runner_lean.cpp.
#include "runner.h"

namespace tunefarm::runner {

Result<std::unique_ptr<JitKernel>> CompileCandidate(const ir::PrimFunc& f, const Target& target,
                                                    const CodegenOptions& options) {
  TF_ASSIGN_OR_RETURN(const CodeGenerator* generator, CodeGeneratorFor(target));
  return generator->JitCompile(f, target, options);
}

bool BuildsCode() { return true; }

}  // namespace tunefarm::runner
