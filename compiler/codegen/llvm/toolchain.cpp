#include "tunefarm/compiler/codegen/llvm/toolchain.h"

#include <llvm/Config/llvm-config.h>

namespace tunefarm {

std::string CodegenToolchain() {
  // The major version only: LLVM's point releases fix bugs and do not change
  // the code our passes hand it in ways worth a separate set of records.
  return "llvm-" + std::to_string(LLVM_VERSION_MAJOR) + " lowering-r" + std::to_string(kLoweringRevision);
}

}  // namespace tunefarm
