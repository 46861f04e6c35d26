// CodeGenLLVM: module and function setup, the parameter convention, the packed
// entry, type mapping and the small helpers every other part uses.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Metadata.h>

#include "codegen_llvm_internal.h"

namespace tunefarm::codegen {

using ir::DataType;

CodeGenLLVM::CodeGenLLVM(llvm::LLVMContext& ctx, llvm::Module& module, const Target& target,
                         const CodegenOptions& options)
    : ctx_(ctx), module_(module), target_(target), inline_math_(options.inline_math), builder_(ctx) {
  // fp-contract=fast: multiply-adds may fuse into FMAs (as clang -ffp-contract=fast).
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  builder_.setFastMathFlags(fmf);
}

Status CodeGenLLVM::Generate(const ir::PrimFunc& f) {
  func_name_ = f.name;
  param_buffers_.clear();
  llvm::Type* ptr = builder_.getPtrTy();
  std::vector<llvm::Type*> param_types(f.params.size(), ptr);
  auto* fn_type = llvm::FunctionType::get(builder_.getInt32Ty(), param_types, false);
  llvm::Function* fn = NewFunction(f.name, fn_type, /*internal=*/false);
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Argument* arg = fn->getArg(i);
    arg->setName(f.params[i]->name);
    // Params are distinct, dense arrays, aligned only to their element: a
    // caller's numpy array or malloc block is 16-byte aligned, a slice of one
    // 4. No alignment is promised to LLVM, so it never emits aligned-only
    // vector moves on them; unaligned moves cost nothing on aligned data on
    // the CPUs we target (docs/measurement.md, alignment).
    arg->addAttr(llvm::Attribute::NoAlias);
    arg->addAttr(llvm::Attribute::NoUndef);
    param_buffers_.insert(f.params[i].get());
  }
  StartFunction(fn);
  for (size_t i = 0; i < f.params.size(); ++i) buffers_[f.params[i].get()] = fn->getArg(i);
  EmitStmt(f.body);
  builder_.CreateRet(builder_.getInt32(0));
  if (!status_.ok()) return status_;

  // name_packed(void** args): the uniform entry the JIT and the worker call.
  auto* packed_type = llvm::FunctionType::get(builder_.getInt32Ty(), {ptr}, false);
  llvm::Function* packed = NewFunction(f.name + "_packed", packed_type, /*internal=*/false);
  packed->getArg(0)->setName("args");
  builder_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", packed));
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < f.params.size(); ++i) {
    llvm::Value* slot = builder_.CreateConstInBoundsGEP1_64(ptr, packed->getArg(0), i);
    call_args.push_back(builder_.CreateLoad(ptr, slot, f.params[i]->name));
  }
  builder_.CreateRet(builder_.CreateCall(fn, call_args));
  return status_;
}

llvm::Function* CodeGenLLVM::NewFunction(const std::string& name, llvm::FunctionType* type, bool internal) {
  auto linkage = internal ? llvm::GlobalValue::InternalLinkage : llvm::GlobalValue::ExternalLinkage;
  llvm::Function* fn = llvm::Function::Create(type, linkage, name, module_);
  AddTargetAttributes(fn, target_);
  return fn;
}

void AddTargetAttributes(llvm::Function* fn, const Target& t) {
  if (!t.cpu.empty()) fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
  if (t.sve_bits > 0) {
    unsigned vscale = static_cast<unsigned>(t.sve_bits / 128);
    fn->addFnAttr(llvm::Attribute::getWithVScaleRangeArgs(fn->getContext(), vscale, vscale));
  }
  fn->addFnAttr(llvm::Attribute::NoUnwind);
}

void CodeGenLLVM::StartFunction(llvm::Function* fn) {
  fn_ = FunctionState{};
  fn_.function = fn;
  fn_.entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  builder_.SetInsertPoint(fn_.entry);
}

llvm::Type* CodeGenLLVM::LLVMType(DataType t) {
  llvm::Type* scalar = nullptr;
  switch (t.code) {
    case DataType::Code::kInt:
    case DataType::Code::kUInt:
      scalar = builder_.getIntNTy(t.bits);
      break;
    case DataType::Code::kFloat:
      scalar = t.bits == 16 ? builder_.getHalfTy() : t.bits == 64 ? builder_.getDoubleTy() : builder_.getFloatTy();
      break;
    case DataType::Code::kBool:
      scalar = builder_.getInt1Ty();
      break;
    case DataType::Code::kHandle:
      scalar = builder_.getPtrTy();
      break;
  }
  if (t.lanes > 1) return llvm::FixedVectorType::get(scalar, t.lanes);
  return scalar;
}

llvm::Type* CodeGenLLVM::StorageType(DataType t) {
  return t.is_bool() ? static_cast<llvm::Type*>(builder_.getInt8Ty()) : LLVMType(t.element_of());
}

llvm::Value* CodeGenLLVM::Fail(Status s, llvm::Type* type) {
  if (status_.ok()) status_ = std::move(s);
  return llvm::PoisonValue::get(type != nullptr ? type : builder_.getInt32Ty());
}

llvm::Value* CodeGenLLVM::Splat(llvm::Value* v, int lanes) {
  if (v->getType()->isVectorTy()) return v;
  return builder_.CreateVectorSplat(lanes, v);
}

void CodeGenLLVM::MatchLanes(llvm::Value*& a, llvm::Value*& b) {
  auto* va = llvm::dyn_cast<llvm::FixedVectorType>(a->getType());
  auto* vb = llvm::dyn_cast<llvm::FixedVectorType>(b->getType());
  if (va != nullptr && vb == nullptr) b = Splat(b, va->getNumElements());
  if (vb != nullptr && va == nullptr) a = Splat(a, vb->getNumElements());
}

llvm::Value* CodeGenLLVM::ConstI64(int64_t v) { return builder_.getInt64(v); }

llvm::Value* CodeGenLLVM::ToI64(llvm::Value* v, bool is_signed) {
  llvm::Type* target = builder_.getInt64Ty();
  if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(v->getType())) {
    target = llvm::FixedVectorType::get(target, vt->getNumElements());
  }
  if (v->getType() == target) return v;
  return builder_.CreateIntCast(v, target, is_signed);
}

llvm::Function* CodeGenLLVM::RuntimeFunction(const std::string& name) {
  llvm::Type* ptr = builder_.getPtrTy();
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::FunctionType* type = nullptr;
  if (name == "tunefarm_parallel_for") {
    type = llvm::FunctionType::get(builder_.getInt32Ty(), {i64, ptr, ptr}, false);
  } else if (name == "tunefarm_alloc") {
    type = llvm::FunctionType::get(ptr, {i64, i64}, false);
  } else {  // tunefarm_free
    type = llvm::FunctionType::get(builder_.getVoidTy(), {ptr}, false);
  }
  auto callee = module_.getOrInsertFunction(name, type);
  auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
  fn->setDoesNotThrow();
  return fn;
}

llvm::Function* CodeGenLLVM::LibmFunction(const std::string& name, llvm::Type* type) {
  auto callee = module_.getOrInsertFunction(name, llvm::FunctionType::get(type, {type}, false));
  auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
  fn->setDoesNotThrow();
  fn->setDoesNotAccessMemory();  // errno is never read by generated code
  fn->setWillReturn();
  return fn;
}

llvm::Metadata* CodeGenLLVM::LoopProperty(const std::string& name, std::optional<int> value) {
  std::vector<llvm::Metadata*> ops{llvm::MDString::get(ctx_, name)};
  if (value) ops.push_back(llvm::ConstantAsMetadata::get(builder_.getInt32(*value)));
  return llvm::MDNode::get(ctx_, ops);
}

llvm::MDNode* CodeGenLLVM::LoopMetadata(const std::vector<llvm::Metadata*>& properties) {
  // A loop ID is a distinct node whose first operand is itself.
  std::vector<llvm::Metadata*> ops{nullptr};
  ops.insert(ops.end(), properties.begin(), properties.end());
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_, ops);
  id->replaceOperandWith(0, id);
  return id;
}

void CodeGenLLVM::ReturnOnError(llvm::Value* rc) {
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  auto* fail = llvm::BasicBlock::Create(ctx_, "error", fn);
  auto* cont = llvm::BasicBlock::Create(ctx_, "ok", fn);
  builder_.CreateCondBr(builder_.CreateICmpNE(rc, builder_.getInt32(0)), fail, cont);
  builder_.SetInsertPoint(fail);
  for (auto it = fn_.heap_buffers.rbegin(); it != fn_.heap_buffers.rend(); ++it) {
    builder_.CreateCall(RuntimeFunction("tunefarm_free"), {*it});
  }
  builder_.CreateRet(rc);
  builder_.SetInsertPoint(cont);
}

// ------------------------------------------------------------ IR predicates

bool MayFault(const ir::Expr& e) {
  if (!e.defined()) return false;
  using K = ir::IRNodeKind;
  switch (e.kind()) {
    case K::kIntImm: case K::kFloatImm: case K::kVariable: return false;
    case K::kLoad: return true;
#define TF_BIN_FAULT(name) \
    case K::k##name: return MayFault(e.as<ir::name>()->a) || MayFault(e.as<ir::name>()->b);
    TF_BIN_FAULT(Add) TF_BIN_FAULT(Sub) TF_BIN_FAULT(Mul) TF_BIN_FAULT(Min) TF_BIN_FAULT(Max)
    TF_BIN_FAULT(EQ) TF_BIN_FAULT(NE) TF_BIN_FAULT(LT) TF_BIN_FAULT(LE) TF_BIN_FAULT(GT) TF_BIN_FAULT(GE)
    TF_BIN_FAULT(And) TF_BIN_FAULT(Or)
#undef TF_BIN_FAULT
    case K::kDiv: case K::kMod: {
      ir::Expr a = e.kind() == K::kDiv ? e.as<ir::Div>()->a : e.as<ir::Mod>()->a;
      ir::Expr b = e.kind() == K::kDiv ? e.as<ir::Div>()->b : e.as<ir::Mod>()->b;
      const int64_t* c = ir::AsConstInt(b);
      bool risky_divisor = e.dtype().is_integer() && (c == nullptr || *c == 0);
      return risky_divisor || MayFault(a) || MayFault(b);
    }
    case K::kNot: return MayFault(e.as<ir::Not>()->a);
    case K::kSelect: {
      auto* s = e.as<ir::Select>();
      return MayFault(s->condition) || MayFault(s->true_value) || MayFault(s->false_value);
    }
    case K::kCast: return MayFault(e.as<ir::Cast>()->value);
    case K::kCall:
      for (const auto& arg : e.as<ir::Call>()->args) {
        if (MayFault(arg)) return true;
      }
      return false;
    TF_STMT_KIND_CASES break;  // not expressions
  }
  return true;  // unknown: assume it may
}

}  // namespace tunefarm::codegen
