// A compiled model's bind entry and embedded constants (bind_entry.h).
//
// The constants are LLVM constant data arrays in the module rather than a
// section added to the emitted ELF afterwards: the object stays one module's
// output for every triple LLVM builds (no ELF writer of our own, no `ld -r`
// for cross targets), and the linker sees ordinary read-only symbols. The
// bytes are copied once into the LLVMContext (ConstantDataArray uniques its
// data), once into the assembler's fragments and once into the object bytes;
// nothing else holds them. They are added after the kernels are optimized:
// the optimizer has nothing to fold in them (only the bind entry takes their
// address), and a 100 MB array is not walked by every pass.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/codegen/llvm/bind_entry.h"

namespace tunefarm {

namespace {

constexpr uint64_t kConstantAlignment = 64;

Status GenerateBind(llvm::Module& module, const BindEntry& bind, const Target& target) {
  if (module.getNamedValue(bind.name) != nullptr) {
    return Status::InvalidArgument("codegen: two entries of one object are named '" + bind.name + "'");
  }
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> builder(ctx);
  llvm::Type* ptr = builder.getPtrTy();
  auto* type = llvm::FunctionType::get(builder.getInt32Ty(), {ptr, ptr}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, bind.name, module);
  codegen::AddTargetAttributes(fn, target);
  llvm::Argument* slots = fn->getArg(0);
  llvm::Argument* workspace = fn->getArg(1);
  slots->setName("slots");
  workspace->setName("workspace");
  builder.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  auto store = [&](size_t slot, llvm::Value* address) {
    builder.CreateStore(address, builder.CreateConstInBoundsGEP1_64(ptr, slots, slot));
  };
  for (const BindEntry::Constant& c : bind.constants) {
    const std::string& bytes = c.bytes ? *c.bytes : std::string();
    llvm::Constant* data = llvm::ConstantDataArray::getRaw(llvm::StringRef(bytes.data(), bytes.size()),
                                                           bytes.size(), builder.getInt8Ty());
    auto* global = new llvm::GlobalVariable(module, data->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, data,
                                            bind.name + ".constant." + std::to_string(c.slot));
    global->setAlignment(llvm::Align(kConstantAlignment));
    store(c.slot, global);
  }
  for (const BindEntry::WorkspaceSlot& w : bind.workspace) {
    store(w.slot, builder.CreateConstInBoundsGEP1_64(builder.getInt8Ty(), workspace, uint64_t(w.offset)));
  }
  builder.CreateRet(builder.getInt32(0));
  return Status::OK();
}

}  // namespace

Result<std::string> EmitCombinedObjectWithBind(const std::vector<ir::PrimFunc>& funcs,
                                               const std::vector<SequenceEntry>& sequences, const BindEntry& bind,
                                               const Target& t, const CodegenOptions& options) {
  if (funcs.empty()) return Status::InvalidArgument("codegen: a combined object needs at least one PrimFunc");
  const std::string module_name = sequences.empty() ? funcs.front().name : sequences.front().name;
  TF_ASSIGN_OR_RETURN(codegen::CompiledModule m,
                      codegen::LowerAndGenerateAll(funcs, sequences, module_name, t, options));
  TF_RETURN_IF_ERROR(GenerateBind(*m.module, bind, t));
  return codegen::EmitMachineCode(m, llvm::CGFT_ObjectFile);
}

}  // namespace tunefarm
