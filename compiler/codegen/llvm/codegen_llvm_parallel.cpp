// CodeGenLLVM: parallel loops. The loop body is outlined into
//   i32 <f>_parallel_<n>(i64 begin, i64 end, ptr closure)
// which unpacks a closure struct (the buffer pointers and the values of the
// free variables the body uses, plus the loop's min) and calls
//   i32 <f>_parallel_<n>_impl(i64 begin, i64 end, ptr noalias bufs..., scalars..., min)
// The impl is alwaysinline: after inlining, its noalias parameters become
// scoped alias metadata, so the body keeps the no-aliasing facts that the
// top-level function's parameters carry (the closure load alone would lose them).
// The parent fills the closure on its stack and calls tunefarm_parallel_for;
// a non-zero return from any chunk is returned from the parent.
#include <llvm/IR/Constants.h>

#include <algorithm>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::codegen {

void CodeGenLLVM::EmitParallelFor(const ir::For* op) {
  // Free variables and buffers of the body, in first-use order (deterministic output).
  std::vector<const ir::Variable*> captured_vars;
  std::vector<const ir::BufferNode*> captured_buffers;
  ir::PostOrderVisit(op->body, [&](const ir::IRNode* node) {
    const ir::BufferNode* buffer = nullptr;
    if (node->kind == ir::IRNodeKind::kVariable) {
      auto* v = static_cast<const ir::Variable*>(node);
      if (vars_.count(v) != 0 && std::find(captured_vars.begin(), captured_vars.end(), v) == captured_vars.end()) {
        captured_vars.push_back(v);
      }
      return;
    }
    if (node->kind == ir::IRNodeKind::kLoad) buffer = static_cast<const ir::Load*>(node)->buffer.get();
    if (node->kind == ir::IRNodeKind::kStore) buffer = static_cast<const ir::Store*>(node)->buffer.get();
    if (buffer != nullptr && buffers_.count(buffer) != 0 &&
        std::find(captured_buffers.begin(), captured_buffers.end(), buffer) == captured_buffers.end()) {
      captured_buffers.push_back(buffer);
    }
  });

  llvm::Type* var_type = LLVMType(op->loop_var.dtype());
  llvm::Value* min = builder_.CreateIntCast(EmitExpr(op->min), var_type, true);
  llvm::Value* extent = ToI64(EmitExpr(op->extent), true);

  // Closure layout: buffers, then captured scalars, then the loop's min.
  std::vector<llvm::Value*> fields;
  for (const auto* b : captured_buffers) fields.push_back(buffers_.at(b));
  for (const auto* v : captured_vars) fields.push_back(vars_.at(v));
  fields.push_back(min);
  std::vector<llvm::Type*> field_types;
  for (llvm::Value* f : fields) field_types.push_back(f->getType());
  llvm::StructType* closure_type = llvm::StructType::get(ctx_, field_types);
  llvm::AllocaInst* closure = llvm::IRBuilder<>(fn_.entry, fn_.entry->begin()).CreateAlloca(closure_type, nullptr, "closure");
  for (size_t i = 0; i < fields.size(); ++i) {
    builder_.CreateStore(fields[i], builder_.CreateStructGEP(closure_type, closure, i));
  }

  std::string name = func_name_ + "_parallel_" + std::to_string(outlined_count_++);
  llvm::Type* i64 = builder_.getInt64Ty();
  std::vector<llvm::Type*> impl_params{i64, i64};
  impl_params.insert(impl_params.end(), field_types.begin(), field_types.end());
  llvm::Function* impl =
      NewFunction(name + "_impl", llvm::FunctionType::get(builder_.getInt32Ty(), impl_params, false), true);
  impl->addFnAttr(llvm::Attribute::AlwaysInline);
  llvm::Function* wrapper = NewFunction(
      name, llvm::FunctionType::get(builder_.getInt32Ty(), {i64, i64, builder_.getPtrTy()}, false), true);

  // Emit the impl with a fresh function state and only the captured bindings.
  FunctionState saved_fn = fn_;
  llvm::IRBuilderBase::InsertPoint saved_ip = builder_.saveIP();
  auto saved_vars = std::move(vars_);
  auto saved_buffers = std::move(buffers_);
  vars_.clear();
  buffers_.clear();

  StartFunction(impl);
  size_t arg = 2;
  for (const auto* b : captured_buffers) {
    llvm::Argument* a = impl->getArg(arg++);
    a->setName(b->name);
    a->addAttr(llvm::Attribute::NoAlias);
    // Buffers this kernel allocates are 64-byte aligned; the caller's are not.
    if (param_buffers_.count(b) == 0) a->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    buffers_[b] = a;
  }
  for (const auto* v : captured_vars) {
    llvm::Argument* a = impl->getArg(arg++);
    a->setName(v->name);
    vars_[v] = a;
  }
  llvm::Value* impl_min = impl->getArg(arg);
  llvm::Value* lo = builder_.CreateAdd(impl_min, builder_.CreateIntCast(impl->getArg(0), var_type, true));
  llvm::Value* hi = builder_.CreateAdd(impl_min, builder_.CreateIntCast(impl->getArg(1), var_type, true));
  EmitSerialLoop(op->loop_var, lo, hi, op->body, nullptr);
  builder_.CreateRet(builder_.getInt32(0));

  StartFunction(wrapper);
  std::vector<llvm::Value*> call_args{wrapper->getArg(0), wrapper->getArg(1)};
  for (size_t i = 0; i < fields.size(); ++i) {
    call_args.push_back(
        builder_.CreateLoad(field_types[i], builder_.CreateStructGEP(closure_type, wrapper->getArg(2), i)));
  }
  builder_.CreateRet(builder_.CreateCall(impl, call_args));

  fn_ = saved_fn;
  builder_.restoreIP(saved_ip);
  vars_ = std::move(saved_vars);
  buffers_ = std::move(saved_buffers);

  llvm::Value* rc = builder_.CreateCall(RuntimeFunction("tunefarm_parallel_for"), {extent, wrapper, closure});
  ReturnOnError(rc);
}

}  // namespace tunefarm::codegen
