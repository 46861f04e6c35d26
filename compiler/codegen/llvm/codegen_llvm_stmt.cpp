// CodeGenLLVM: statements -- loops (dispatching on the loop kind), stores,
// allocations, lets, ifs and sequences.
#include <llvm/IR/Constants.h>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::codegen {

using K = ir::IRNodeKind;

namespace {
// Unrolled loops up to this many iterations are replicated by the code generator
// itself; longer ones get llvm.loop.unroll.full and LLVM's own size limits.
constexpr int64_t kMaxCodegenUnroll = 64;
// Allocations up to this size live on the stack; larger ones on the heap.
constexpr int64_t kMaxStackAllocationBytes = 64 * 1024;
}  // namespace

void CodeGenLLVM::EmitStmt(const ir::Stmt& s) {
  if (!s.defined() || !status_.ok()) return;
  switch (s.kind()) {
    case K::kFor: return EmitFor(s.as<ir::For>());
    case K::kStore: return EmitStore(s.as<ir::Store>());
    case K::kAllocate: return EmitAllocate(s.as<ir::Allocate>());
    case K::kLetStmt: {
      auto* let = s.as<ir::LetStmt>();
      llvm::Value* v = EmitExpr(let->value);
      if (lanes_ > 0 && v->getType()->isVectorTy()) strides_[let->var.get()] = Stride(let->value);
      vars_[let->var.get()] = v;
      EmitStmt(let->body);
      vars_.erase(let->var.get());
      strides_.erase(let->var.get());
      return;
    }
    case K::kIfThenElse: return EmitIfThenElse(s.as<ir::IfThenElse>());
    case K::kSeqStmt:
      for (const auto& item : s.as<ir::SeqStmt>()->seq) EmitStmt(item);
      return;
    case K::kEvaluate: EmitExpr(s.as<ir::Evaluate>()->value); return;
    case K::kBarrier:
      Fail(Status::InvalidArgument("codegen: a GPU thread barrier cannot be compiled for a CPU target"));
      return;
    case K::kBlock:
      Fail(Status::Internal("codegen: Block '" + s.as<ir::Block>()->name +
                            "' reached code generation; LowerForCodegen must remove blocks first"));
      return;
    TF_EXPR_KIND_CASES  // not statements
      Fail(Status::Internal(std::string("codegen: unexpected statement node ") + ir::IRNodeKindName(s.kind())));
      return;
  }
}

void CodeGenLLVM::EmitFor(const ir::For* op) {
  const int64_t* const_extent = ir::AsConstInt(op->extent);
  if (op->kind == ir::ForKind::kThreadBinding) {
    Fail(Status::Unimplemented("codegen: loop '" + op->loop_var.name() + "' is bound to " + op->thread_tag +
                               ", which CPU target " + target_.ToString() + " cannot run"));
    return;
  }
  if (lanes_ > 0) {  // VectorizeBlocker rejects nested loops; this is a bug if reached
    Fail(Status::Internal("codegen: loop '" + op->loop_var.name() + "' inside a widened loop body"));
    return;
  }
  if (op->kind == ir::ForKind::kParallel) return EmitParallelFor(op);
  if (HasMatrixMultiplyAnnotation(op)) {
    MatrixMultiply mm;
    const std::string mmla_blocker = MatchMatrixMultiply(op, &mm);
    if (mmla_blocker.empty()) return EmitMatrixMultiply(mm);
    mmla_blockers_[op->body.as<ir::For>()->body.as<ir::For>()] = mmla_blocker;
  }

  llvm::Type* var_type = LLVMType(op->loop_var.dtype());
  llvm::Value* begin = builder_.CreateIntCast(EmitExpr(op->min), var_type, true);
  if (op->kind == ir::ForKind::kUnrolled && const_extent != nullptr && *const_extent <= kMaxCodegenUnroll) {
    for (int64_t k = 0; k < *const_extent; ++k) {
      vars_[op->loop_var.get()] = builder_.CreateAdd(begin, llvm::ConstantInt::get(var_type, k));
      EmitStmt(op->body);
    }
    vars_.erase(op->loop_var.get());
    return;
  }
  llvm::Value* end = builder_.CreateAdd(begin, builder_.CreateIntCast(EmitExpr(op->extent), var_type, true));
  llvm::MDNode* md = nullptr;
  if (op->kind == ir::ForKind::kUnrolled) {
    md = LoopMetadata({LoopProperty("llvm.loop.unroll.full")});
  } else if (op->kind == ir::ForKind::kVectorized) {
    std::string dot_blocker;
    if (HasDotProductAnnotation(op)) {
      DotProduct dot;
      dot_blocker = MatchDotProduct(op, &dot);
      if (dot_blocker.empty()) return EmitDotProduct(dot);
    }
    std::string blocker = const_extent == nullptr ? "extent is not a constant" : VectorizeBlocker(op, *const_extent);
    if (blocker.empty()) return EmitVectorizedFor(op, *const_extent);
    // Not widenable (a reduction into a fixed address, a nested loop, ...): keep the
    // scalar loop and ask LLVM's loop vectorizer to do what it can; record why.
    std::vector<llvm::Metadata*> props{
        LoopProperty("llvm.loop.vectorize.enable", 1),
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "tunefarm.vectorize.fallback"),
                                 llvm::MDString::get(ctx_, blocker)})};
    if (!dot_blocker.empty()) {
      props.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "tunefarm.dot_product.fallback"),
                                               llvm::MDString::get(ctx_, dot_blocker)}));
    }
    if (const_extent != nullptr && *const_extent > 1 && *const_extent <= 64) {
      props.push_back(LoopProperty("llvm.loop.vectorize.width", static_cast<int>(*const_extent)));
    }
    md = LoopMetadata(props);
  }
  if (md == nullptr && op->annotations.count(ir::kMatrixMultiplyAnnotation) > 0) {
    md = LoopMetadata({MatrixMultiplyFallback(op)});
  }
  EmitSerialLoop(op->loop_var, begin, end, op->body, md);
}

void CodeGenLLVM::EmitSerialLoop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, const ir::Stmt& body,
                                 llvm::MDNode* loop_md) {
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = builder_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, var.name() + ".loop", fn);
  auto* exit = llvm::BasicBlock::Create(ctx_, var.name() + ".end", fn);
  // Rotated form: guard once, then a bottom-tested loop (what LLVM's passes expect).
  builder_.CreateCondBr(builder_.CreateICmpSLT(begin, end), header, exit);
  builder_.SetInsertPoint(header);
  llvm::PHINode* iv = builder_.CreatePHI(begin->getType(), 2, var.name());
  iv->addIncoming(begin, preheader);
  vars_[var.get()] = iv;
  EmitStmt(body);
  vars_.erase(var.get());
  llvm::Value* next = builder_.CreateNSWAdd(iv, llvm::ConstantInt::get(begin->getType(), 1));
  iv->addIncoming(next, builder_.GetInsertBlock());
  llvm::BranchInst* latch = builder_.CreateCondBr(builder_.CreateICmpSLT(next, end), header, exit);
  if (loop_md != nullptr) latch->setMetadata(llvm::LLVMContext::MD_loop, loop_md);
  builder_.SetInsertPoint(exit);
}

void CodeGenLLVM::EmitStore(const ir::Store* op) {
  llvm::Value* value = EmitCast(op->buffer->dtype, op->value.dtype(), EmitExpr(op->value));
  llvm::Value* base = BufferPointer(op->buffer);
  llvm::Value* flat = FlatIndex(op->buffer, op->indices);
  if (lanes_ > 0) return VectorStore(op, value, base, flat);
  llvm::Type* elem = StorageType(op->buffer->dtype);
  if (op->buffer->dtype.is_bool()) value = builder_.CreateZExt(value, elem);
  llvm::Value* ptr = builder_.CreateInBoundsGEP(elem, base, flat);
  builder_.CreateAlignedStore(value, ptr, llvm::Align(op->buffer->dtype.bytes()));
}

void CodeGenLLVM::EmitAllocate(const ir::Allocate* op) {
  const ir::Buffer& buffer = op->buffer;
  int64_t bytes = buffer->size_bytes();
  uint64_t align = static_cast<uint64_t>(std::max<int64_t>(64, buffer->alignment));
  if (bytes <= kMaxStackAllocationBytes) {
    // Static alloca in the entry block: one slot per function, never grows the stack in loops.
    llvm::IRBuilder<> entry(fn_.entry, fn_.entry->begin());
    llvm::AllocaInst* slot =
        entry.CreateAlloca(llvm::ArrayType::get(builder_.getInt8Ty(), std::max<int64_t>(bytes, 1)), nullptr,
                           buffer->name);
    slot->setAlignment(llvm::Align(align));
    buffers_[buffer.get()] = slot;
    EmitStmt(op->body);
    buffers_.erase(buffer.get());
    return;
  }
  llvm::Value* ptr = builder_.CreateCall(RuntimeFunction("tunefarm_alloc"),
                                         {ConstI64(bytes), ConstI64(static_cast<int64_t>(align))}, buffer->name);
  llvm::Value* is_null = builder_.CreateICmpEQ(ptr, llvm::ConstantPointerNull::get(builder_.getPtrTy()));
  ReturnOnError(builder_.CreateSelect(is_null, builder_.getInt32(kErrorOutOfMemory), builder_.getInt32(0)));
  fn_.heap_buffers.push_back(ptr);
  buffers_[buffer.get()] = ptr;
  EmitStmt(op->body);
  buffers_.erase(buffer.get());
  fn_.heap_buffers.pop_back();
  builder_.CreateCall(RuntimeFunction("tunefarm_free"), {ptr});
}

void CodeGenLLVM::EmitIfThenElse(const ir::IfThenElse* op) {
  llvm::Value* cond = EmitExpr(op->condition);
  if (cond->getType()->isVectorTy()) {
    // Varying condition inside a widened loop: both sides run, each with its lanes live.
    llvm::Value* saved = mask_;
    mask_ = CombineMask(cond);
    EmitStmt(op->then_case);
    mask_ = saved;
    if (op->else_case.defined()) {
      mask_ = CombineMask(builder_.CreateNot(cond));
      EmitStmt(op->else_case);
      mask_ = saved;
    }
    return;
  }
  EmitBranch(cond, op->then_case, op->else_case);
}

void CodeGenLLVM::EmitBranch(llvm::Value* cond, const ir::Stmt& then_case, const ir::Stmt& else_case) {
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
  auto* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", fn);
  llvm::BasicBlock* else_bb = else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : end_bb;
  builder_.CreateCondBr(cond, then_bb, else_bb);
  builder_.SetInsertPoint(then_bb);
  EmitStmt(then_case);
  builder_.CreateBr(end_bb);
  if (else_case.defined()) {
    builder_.SetInsertPoint(else_bb);
    EmitStmt(else_case);
    builder_.CreateBr(end_bb);
  }
  builder_.SetInsertPoint(end_bb);
}

}  // namespace tunefarm::codegen
