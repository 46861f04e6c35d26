// CodeGenLLVM: expressions. Every emitter works on scalars and, inside a
// vectorized loop, on <lanes x T> vectors (see the widened mode in the header).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen_llvm_internal.h"
#include "codegen_llvm_math.h"

namespace tunefarm::codegen {

using ir::DataType;
using K = ir::IRNodeKind;

llvm::Value* CodeGenLLVM::EmitExpr(const ir::Expr& e) {
  if (!e.defined()) return Fail(Status::Internal("codegen: undefined expression"));
  switch (e.kind()) {
    case K::kIntImm: {
      auto* imm = e.as<ir::IntImm>();
      if (e.dtype().is_bool()) return builder_.getInt1(imm->value != 0);
      if (e.dtype().is_float()) return llvm::ConstantFP::get(LLVMType(e.dtype()), static_cast<double>(imm->value));
      return llvm::ConstantInt::get(LLVMType(e.dtype()), static_cast<uint64_t>(imm->value), e.dtype().is_int());
    }
    case K::kFloatImm: {
      auto* imm = e.as<ir::FloatImm>();
      if (!e.dtype().is_float()) return EmitCast(e.dtype(), DataType::Float(64), llvm::ConstantFP::get(builder_.getDoubleTy(), imm->value));
      return llvm::ConstantFP::get(LLVMType(e.dtype()), imm->value);
    }
    case K::kVariable: {
      auto it = vars_.find(e.as<ir::Variable>());
      if (it == vars_.end()) {
        return Fail(Status::Internal("codegen: variable '" + e.as<ir::Variable>()->name + "' is not bound"),
                    LLVMType(e.dtype()));
      }
      return it->second;
    }
#define TF_BIN_CASE(name) \
    case K::k##name: return EmitBinary(e.get(), e.as<ir::name>()->a, e.as<ir::name>()->b);
    TF_BIN_CASE(Add) TF_BIN_CASE(Sub) TF_BIN_CASE(Mul) TF_BIN_CASE(Div) TF_BIN_CASE(Mod)
    TF_BIN_CASE(Min) TF_BIN_CASE(Max) TF_BIN_CASE(And) TF_BIN_CASE(Or)
#undef TF_BIN_CASE
#define TF_CMP_CASE(name) \
    case K::k##name: return EmitCompare(K::k##name, e.as<ir::name>()->a, e.as<ir::name>()->b);
    TF_CMP_CASE(EQ) TF_CMP_CASE(NE) TF_CMP_CASE(LT) TF_CMP_CASE(LE) TF_CMP_CASE(GT) TF_CMP_CASE(GE)
#undef TF_CMP_CASE
    case K::kNot: return builder_.CreateNot(EmitExpr(e.as<ir::Not>()->a));
    case K::kSelect: return EmitSelect(e.as<ir::Select>());
    case K::kCast: {
      auto* cast = e.as<ir::Cast>();
      return EmitCast(cast->dtype, cast->value.dtype(), EmitExpr(cast->value));
    }
    case K::kLoad: return EmitLoad(e.as<ir::Load>());
    case K::kCall: return EmitCall(e.as<ir::Call>());
    TF_STMT_KIND_CASES break;  // not expressions
  }
  return Fail(Status::Internal(std::string("codegen: unexpected expression node ") + ir::IRNodeKindName(e.kind())));
}

llvm::Value* CodeGenLLVM::EmitBinary(const ir::ExprNode* op, const ir::Expr& ea, const ir::Expr& eb) {
  DataType t = op->dtype;
  llvm::Value* a = EmitExpr(ea);
  llvm::Value* b = EmitExpr(eb);
  MatchLanes(a, b);
  bool is_float = t.is_float();
  switch (op->kind) {
    case K::kAdd: return is_float ? builder_.CreateFAdd(a, b) : builder_.CreateAdd(a, b);
    case K::kSub: return is_float ? builder_.CreateFSub(a, b) : builder_.CreateSub(a, b);
    case K::kMul: return is_float ? builder_.CreateFMul(a, b) : builder_.CreateMul(a, b);
    case K::kDiv:
      if (is_float) return builder_.CreateFDiv(a, b);
      return EmitDivMod(true, t, a, b);
    case K::kMod:
      if (is_float) {  // floor modulo, as for integers: a - floor(a / b) * b
        llvm::Value* q = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder_.CreateFDiv(a, b));
        return builder_.CreateFSub(a, builder_.CreateFMul(q, b));
      }
      return EmitDivMod(false, t, a, b);
    case K::kMin:
    case K::kMax: {
      // Floats: fmin/fmax semantics (a NaN operand yields the other), as the interpreter.
      bool is_min = op->kind == K::kMin;
      llvm::Intrinsic::ID id = is_float       ? (is_min ? llvm::Intrinsic::minnum : llvm::Intrinsic::maxnum)
                               : t.is_int()   ? (is_min ? llvm::Intrinsic::smin : llvm::Intrinsic::smax)
                                              : (is_min ? llvm::Intrinsic::umin : llvm::Intrinsic::umax);
      return builder_.CreateBinaryIntrinsic(id, a, b);
    }
    case K::kAnd: return builder_.CreateAnd(a, b);
    case K::kOr: return builder_.CreateOr(a, b);
    default: return Fail(Status::Internal("codegen: bad binary node"));
  }
}

llvm::Value* CodeGenLLVM::EmitDivMod(bool is_div, DataType t, llvm::Value* a, llvm::Value* b) {
  if (mask_ != nullptr && b->getType()->isVectorTy() && !llvm::isa<llvm::Constant>(b)) {
    // Dead lanes may hold a zero divisor; the serial program would never divide there.
    b = builder_.CreateSelect(mask_, b, llvm::ConstantInt::get(b->getType(), 1));
  }
  if (!t.is_int()) return is_div ? builder_.CreateUDiv(a, b) : builder_.CreateURem(a, b);
  // Floor semantics from truncating ones: adjust when the remainder is non-zero
  // and its sign differs from the divisor's.
  llvm::Value* q = builder_.CreateSDiv(a, b);
  llvm::Value* r = builder_.CreateSRem(a, b);
  llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
  llvm::Value* adjust = builder_.CreateAnd(builder_.CreateICmpNE(r, zero),
                                           builder_.CreateICmpSLT(builder_.CreateXor(r, b), zero));
  if (is_div) return builder_.CreateSub(q, builder_.CreateZExt(adjust, q->getType()));
  return builder_.CreateAdd(r, builder_.CreateSelect(adjust, b, zero));
}

llvm::Value* CodeGenLLVM::EmitCompare(K kind, const ir::Expr& ea, const ir::Expr& eb) {
  DataType t = ea.dtype();
  llvm::Value* a = EmitExpr(ea);
  llvm::Value* b = EmitExpr(eb);
  MatchLanes(a, b);
  using P = llvm::CmpInst::Predicate;
  P pred;
  if (t.is_float()) {
    switch (kind) {
      case K::kEQ: pred = P::FCMP_OEQ; break;
      case K::kNE: pred = P::FCMP_UNE; break;
      case K::kLT: pred = P::FCMP_OLT; break;
      case K::kLE: pred = P::FCMP_OLE; break;
      case K::kGT: pred = P::FCMP_OGT; break;
      default: pred = P::FCMP_OGE; break;
    }
    return builder_.CreateFCmp(pred, a, b);
  }
  bool is_signed = t.is_int();
  switch (kind) {
    case K::kEQ: pred = P::ICMP_EQ; break;
    case K::kNE: pred = P::ICMP_NE; break;
    case K::kLT: pred = is_signed ? P::ICMP_SLT : P::ICMP_ULT; break;
    case K::kLE: pred = is_signed ? P::ICMP_SLE : P::ICMP_ULE; break;
    case K::kGT: pred = is_signed ? P::ICMP_SGT : P::ICMP_UGT; break;
    default: pred = is_signed ? P::ICMP_SGE : P::ICMP_UGE; break;
  }
  return builder_.CreateICmp(pred, a, b);
}

llvm::Value* CodeGenLLVM::EmitSelect(const ir::Select* op) {
  llvm::Value* cond = EmitExpr(op->condition);
  bool guarded = MayFault(op->true_value) || MayFault(op->false_value);
  if (!guarded) {
    llvm::Value* t = EmitExpr(op->true_value);
    llvm::Value* f = EmitExpr(op->false_value);
    MatchLanes(t, f);
    if (cond->getType()->isVectorTy()) MatchLanes(cond, t), MatchLanes(t, f);
    return builder_.CreateSelect(cond, t, f);
  }
  if (cond->getType()->isVectorTy()) {
    // Varying condition: evaluate each side with only its lanes live (masked loads).
    llvm::Value* saved = mask_;
    mask_ = CombineMask(cond);
    llvm::Value* t = Splat(EmitExpr(op->true_value), lanes_);
    mask_ = saved;
    mask_ = CombineMask(builder_.CreateNot(cond));
    llvm::Value* f = Splat(EmitExpr(op->false_value), lanes_);
    mask_ = saved;
    return builder_.CreateSelect(cond, t, f);
  }
  // Uniform condition: real control flow, so the untaken side never runs.
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "select.true", fn);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "select.false", fn);
  auto* merge_bb = llvm::BasicBlock::Create(ctx_, "select.end", fn);
  builder_.CreateCondBr(cond, then_bb, else_bb);
  builder_.SetInsertPoint(then_bb);
  llvm::Value* t = EmitExpr(op->true_value);
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();
  builder_.SetInsertPoint(else_bb);
  llvm::Value* f = EmitExpr(op->false_value);
  llvm::BasicBlock* else_end = builder_.GetInsertBlock();
  // Bring both sides to one shape at the end of their own blocks.
  if (t->getType() != f->getType()) {
    if (t->getType()->isVectorTy()) {
      f = Splat(f, llvm::cast<llvm::FixedVectorType>(t->getType())->getNumElements());
    } else {
      builder_.SetInsertPoint(then_end);
      t = Splat(t, llvm::cast<llvm::FixedVectorType>(f->getType())->getNumElements());
    }
  }
  builder_.SetInsertPoint(then_end);
  builder_.CreateBr(merge_bb);
  builder_.SetInsertPoint(else_end);
  builder_.CreateBr(merge_bb);
  builder_.SetInsertPoint(merge_bb);
  llvm::PHINode* phi = builder_.CreatePHI(t->getType(), 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

llvm::Value* CodeGenLLVM::EmitCast(DataType to, DataType from, llvm::Value* v) {
  if (to.element_of() == from.element_of()) return v;
  llvm::Type* dst = LLVMType(to.element_of());
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
    dst = llvm::FixedVectorType::get(dst, vt->getNumElements());
  }
  if (to.is_handle() || from.is_handle()) {
    return Fail(Status::Unimplemented("codegen: cast between handle and " + to.ToString()), dst);
  }
  if (to.is_bool()) {
    if (from.is_float()) return builder_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_bool()) return to.is_float() ? builder_.CreateUIToFP(v, dst) : builder_.CreateZExt(v, dst);
  if (from.is_integer() && to.is_integer()) return builder_.CreateIntCast(v, dst, from.is_int());
  if (from.is_integer()) return from.is_int() ? builder_.CreateSIToFP(v, dst) : builder_.CreateUIToFP(v, dst);
  if (to.is_integer()) return to.is_int() ? builder_.CreateFPToSI(v, dst) : builder_.CreateFPToUI(v, dst);
  return builder_.CreateFPCast(v, dst);
}

llvm::Value* CodeGenLLVM::BufferPointer(const ir::Buffer& buffer) {
  auto it = buffers_.find(buffer.get());
  if (it == buffers_.end()) {
    return Fail(Status::Internal("codegen: buffer '" + buffer->name + "' is not a param or allocated here"),
                builder_.getPtrTy());
  }
  return it->second;
}

llvm::Value* CodeGenLLVM::FlatIndex(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
  if (indices.size() != buffer->shape.size()) {
    return Fail(Status::Internal("codegen: buffer '" + buffer->name + "' has " + std::to_string(buffer->shape.size()) +
                                 " dims but is indexed with " + std::to_string(indices.size())),
                builder_.getInt64Ty());
  }
  if (indices.empty()) return ConstI64(0);
  // Horner form: ((i0 * s1 + i1) * s2 + i2) ...; index arithmetic never wraps (nsw).
  llvm::Value* flat = nullptr;
  for (size_t k = 0; k < indices.size(); ++k) {
    llvm::Value* idx = ToI64(EmitExpr(indices[k]), !indices[k].dtype().is_uint() && !indices[k].dtype().is_bool());
    if (flat == nullptr) {
      flat = idx;
      continue;
    }
    llvm::Value* extent = ConstI64(buffer->shape[k]);
    MatchLanes(flat, extent);
    llvm::Value* scaled = builder_.CreateNSWMul(flat, extent);
    MatchLanes(scaled, idx);
    flat = builder_.CreateNSWAdd(scaled, idx);
  }
  return flat;
}

llvm::Value* CodeGenLLVM::EmitLoad(const ir::Load* op) {
  llvm::Value* base = BufferPointer(op->buffer);
  llvm::Value* flat = FlatIndex(op->buffer, op->indices);
  if (lanes_ > 0) return VectorLoad(op, base, flat);
  llvm::Type* elem = StorageType(op->dtype);
  llvm::Value* ptr = builder_.CreateInBoundsGEP(elem, base, flat);
  llvm::Value* v = builder_.CreateAlignedLoad(elem, ptr, llvm::Align(op->dtype.bytes()));
  if (op->dtype.is_bool()) return builder_.CreateICmpNE(v, builder_.getInt8(0));
  return v;
}

llvm::Value* CodeGenLLVM::EmitLibmCall(const std::string& f32_name, const std::string& f64_name, DataType t,
                                       llvm::Value* x) {
  // Per lane for vectors (f64, or CodegenOptions::inline_math off): LLVM 16
  // maps no erf or tanh to a vector library (codegen_llvm_math.cpp says why
  // the inline forms are used instead).
  bool is_f64 = t.bits == 64;
  llvm::Type* call_type = is_f64 ? builder_.getDoubleTy() : builder_.getFloatTy();
  llvm::Type* elem_type = LLVMType(t.element_of());
  llvm::Function* fn = LibmFunction(is_f64 ? f64_name : f32_name, call_type);
  auto scalar_call = [&](llvm::Value* s) {
    llvm::Value* arg = builder_.CreateFPCast(s, call_type);
    return builder_.CreateFPCast(builder_.CreateCall(fn, {arg}), elem_type);
  };
  auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (vt == nullptr) return scalar_call(x);
  llvm::Value* out = llvm::PoisonValue::get(vt);
  for (unsigned i = 0; i < vt->getNumElements(); ++i) {
    out = builder_.CreateInsertElement(out, scalar_call(builder_.CreateExtractElement(x, i)), i);
  }
  return out;
}

llvm::Value* CodeGenLLVM::EmitCall(const ir::Call* op) {
  std::vector<llvm::Value*> args;
  for (const auto& a : op->args) args.push_back(EmitExpr(a));
  if (static_cast<int>(args.size()) != ir::CallOpArity(op->op)) {
    return Fail(Status::Internal(std::string("codegen: wrong arity for ") + ir::CallOpName(op->op)));
  }
  DataType t = op->dtype;
  llvm::Value* x = args[0];
  if (op->op == ir::CallOp::kAbs && t.is_integer()) {
    if (t.is_uint()) return x;
    return builder_.CreateIntrinsic(llvm::Intrinsic::abs, {x->getType()}, {x, builder_.getFalse()});
  }
  if (!t.is_float()) {
    return Fail(Status::InvalidArgument(std::string("codegen: ") + ir::CallOpName(op->op) + " needs a float argument, got " +
                                        t.ToString()),
                LLVMType(t));
  }
  if (inline_math_ && t.bits <= 32 && HasInlineMath(op->op)) {
    llvm::Value* y = args.size() > 1 ? args[1] : nullptr;
    if (y != nullptr) MatchLanes(x, y);
    return EmitInlineMath(builder_, op->op, x, y);
  }
  auto one = [&] { return llvm::ConstantFP::get(x->getType(), 1.0); };
  auto unary = [&](llvm::Intrinsic::ID id) { return builder_.CreateUnaryIntrinsic(id, x); };
  switch (op->op) {
    case ir::CallOp::kExp: return unary(llvm::Intrinsic::exp);
    case ir::CallOp::kLog: return unary(llvm::Intrinsic::log);
    case ir::CallOp::kSqrt: return unary(llvm::Intrinsic::sqrt);
    case ir::CallOp::kRsqrt: return builder_.CreateFDiv(one(), unary(llvm::Intrinsic::sqrt));
    case ir::CallOp::kAbs: return unary(llvm::Intrinsic::fabs);
    case ir::CallOp::kFloor: return unary(llvm::Intrinsic::floor);
    case ir::CallOp::kCeil: return unary(llvm::Intrinsic::ceil);
    case ir::CallOp::kPow: {
      llvm::Value* y = args[1];
      MatchLanes(x, y);
      return builder_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
    }
    case ir::CallOp::kSigmoid: {
      llvm::Value* e = builder_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, builder_.CreateFNeg(x));
      return builder_.CreateFDiv(one(), builder_.CreateFAdd(one(), e));
    }
    case ir::CallOp::kTanh: return EmitLibmCall("tanhf", "tanh", t, x);
    case ir::CallOp::kErf: return EmitLibmCall("erff", "erf", t, x);
  }
  return Fail(Status::Internal("codegen: unknown call op"));
}

}  // namespace tunefarm::codegen
