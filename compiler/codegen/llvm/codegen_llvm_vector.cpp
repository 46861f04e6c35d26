// CodeGenLLVM: vectorized loops. A vectorized loop of constant extent L is not
// a loop at all in the output: its body is emitted once with the loop variable
// bound to <min, min+1, ..., min+L-1>. Accesses are classified by the stride of
// their flat index in the loop variable (an affine analysis on the IR):
//   stride 0 -> scalar access (a splat when combined with vectors),
//   stride 1 -> one vector load/store (masked under a varying condition),
//   otherwise -> llvm.masked.gather / llvm.masked.scatter.
// VectorizeBlocker decides first whether widening preserves the serial
// semantics; when it does not, the loop stays scalar (see EmitFor).
#include <llvm/IR/Constants.h>
#include <llvm/Support/MathExtras.h>

#include <set>

#include "codegen_llvm_internal.h"

namespace tunefarm::codegen {

using K = ir::IRNodeKind;
using StrideMap = std::unordered_map<const ir::Variable*, std::optional<int64_t>>;

namespace {

constexpr int64_t kMaxLanes = 512;
// Loads of a larger constant stride stay gathers (DeinterleavedLoad).
constexpr int64_t kMaxDeinterleaveStride = 4;
constexpr int64_t kMaxDeinterleaveSpan = 256;

void ForEachChild(const ir::Expr& e, const std::function<void(const ir::Expr&)>& f) {
  switch (e.kind()) {
#define TF_BIN_CHILDREN(name) \
    case K::k##name: f(e.as<ir::name>()->a); f(e.as<ir::name>()->b); return;
    TF_BIN_CHILDREN(Add) TF_BIN_CHILDREN(Sub) TF_BIN_CHILDREN(Mul) TF_BIN_CHILDREN(Div) TF_BIN_CHILDREN(Mod)
    TF_BIN_CHILDREN(Min) TF_BIN_CHILDREN(Max) TF_BIN_CHILDREN(EQ) TF_BIN_CHILDREN(NE) TF_BIN_CHILDREN(LT)
    TF_BIN_CHILDREN(LE) TF_BIN_CHILDREN(GT) TF_BIN_CHILDREN(GE) TF_BIN_CHILDREN(And) TF_BIN_CHILDREN(Or)
#undef TF_BIN_CHILDREN
    case K::kNot: f(e.as<ir::Not>()->a); return;
    case K::kSelect: {
      auto* s = e.as<ir::Select>();
      f(s->condition), f(s->true_value), f(s->false_value);
      return;
    }
    case K::kCast: f(e.as<ir::Cast>()->value); return;
    case K::kLoad: for (const auto& i : e.as<ir::Load>()->indices) f(i); return;
    case K::kCall: for (const auto& a : e.as<ir::Call>()->args) f(a); return;
    case K::kIntImm: case K::kFloatImm: case K::kVariable:  // leaves
    TF_STMT_KIND_CASES  // not expressions
      return;
  }
}

bool UsesVarying(const ir::Expr& e, const StrideMap& strides) {
  if (auto* v = e.as<ir::Variable>()) {
    auto it = strides.find(v);
    return it != strides.end() && it->second != 0;
  }
  bool found = false;
  ForEachChild(e, [&](const ir::Expr& c) { found = found || UsesVarying(c, strides); });
  return found;
}

std::optional<int64_t> StrideOf(const ir::Expr& e, const StrideMap& strides) {
  switch (e.kind()) {
    case K::kIntImm: case K::kFloatImm: return 0;
    case K::kVariable: {
      auto it = strides.find(e.as<ir::Variable>());
      return it == strides.end() ? std::optional<int64_t>(0) : it->second;
    }
    case K::kAdd: case K::kSub: {
      bool add = e.kind() == K::kAdd;
      auto sa = StrideOf(add ? e.as<ir::Add>()->a : e.as<ir::Sub>()->a, strides);
      auto sb = StrideOf(add ? e.as<ir::Add>()->b : e.as<ir::Sub>()->b, strides);
      if (!sa || !sb) return std::nullopt;
      return add ? *sa + *sb : *sa - *sb;
    }
    case K::kMul: {
      const ir::Expr& a = e.as<ir::Mul>()->a;
      const ir::Expr& b = e.as<ir::Mul>()->b;
      auto sa = StrideOf(a, strides), sb = StrideOf(b, strides);
      if (sa == 0 && sb == 0) return 0;
      if (const int64_t* c = ir::AsConstInt(a); c != nullptr && sb) return *c * *sb;
      if (const int64_t* c = ir::AsConstInt(b); c != nullptr && sa) return *c * *sa;
      return std::nullopt;
    }
    case K::kCast: {
      auto* cast = e.as<ir::Cast>();
      if (cast->dtype.is_integer() && cast->value.dtype().is_integer()) return StrideOf(cast->value, strides);
      break;
    }
    // No affine stride of their own: uniform unless a child varies (below).
    case K::kDiv: case K::kMod: case K::kMin: case K::kMax: case K::kEQ: case K::kNE: case K::kLT:
    case K::kLE: case K::kGT: case K::kGE: case K::kAnd: case K::kOr: case K::kNot: case K::kSelect:
    case K::kLoad: case K::kCall:
    TF_STMT_KIND_CASES  // not expressions
      break;
  }
  return UsesVarying(e, strides) ? std::nullopt : std::optional<int64_t>(0);
}

std::optional<int64_t> FlatStrideOf(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices,
                                    const StrideMap& strides) {
  int64_t total = 0, row = 1;
  for (size_t k = indices.size(); k-- > 0;) {
    auto s = StrideOf(indices[k], strides);
    if (!s) return std::nullopt;
    total += *s * row;
    row *= buffer->shape[k];
  }
  return total;
}

// Walks a vectorized loop body and finds the first reason it cannot be widened.
class Legality {
 public:
  explicit Legality(const ir::Variable* loop_var) { strides_[loop_var] = 1; }
  std::string reason;

  void Check(const ir::Stmt& s) {
    if (!s.defined() || !reason.empty()) return;
    switch (s.kind()) {
      case K::kFor: reason = "nested loop '" + s.as<ir::For>()->loop_var.name() + "'"; return;
      case K::kAllocate: reason = "allocation of '" + s.as<ir::Allocate>()->buffer->name + "' in the body"; return;
      case K::kBlock: reason = "block in the body"; return;
      case K::kStore: {
        auto* st = s.as<ir::Store>();
        bool index_varies = false;
        for (const auto& i : st->indices) index_varies = index_varies || Expr(i);
        if (Expr(st->value) && !index_varies) {
          reason = "reduction: the value stored to '" + st->buffer->name +
                   "' varies with the loop variable but its address does not";
        }
        stores_.push_back(st);
        return;
      }
      case K::kLetStmt: {
        auto* let = s.as<ir::LetStmt>();
        if (Expr(let->value)) strides_[let->var.get()] = StrideOf(let->value, strides_);
        Check(let->body);
        return;
      }
      case K::kIfThenElse: {
        auto* i = s.as<ir::IfThenElse>();
        Expr(i->condition);
        Check(i->then_case);
        Check(i->else_case);
        return;
      }
      case K::kSeqStmt: for (const auto& x : s.as<ir::SeqStmt>()->seq) Check(x); return;
      case K::kEvaluate: Expr(s.as<ir::Evaluate>()->value); return;
      case K::kBarrier: reason = "GPU thread barrier in the body"; return;
      TF_EXPR_KIND_CASES reason = "unsupported statement"; return;  // not statements
    }
  }

  // Lanes stay independent when every read of a written buffer reads exactly the
  // element the same lane writes, and the written elements are distinct across lanes.
  void CheckMemory() {
    if (!reason.empty()) return;
    for (const ir::Store* st : stores_) {
      const ir::Buffer& b = st->buffer;
      auto same_index = [&](const std::vector<ir::Expr>& idx) {
        if (idx.size() != st->indices.size()) return false;
        for (size_t k = 0; k < idx.size(); ++k) {
          if (!ir::ExprEqual(idx[k], st->indices[k])) return false;
        }
        return true;
      };
      bool read = false;
      for (const ir::Store* other : stores_) {
        if (other->buffer == b && !same_index(other->indices)) {
          reason = "buffer '" + b->name + "' is written at different indices";
          return;
        }
      }
      for (const ir::Load* ld : loads_) {
        if (ld->buffer != b) continue;
        read = true;
        if (!same_index(ld->indices)) {
          reason = "buffer '" + b->name + "' is read and written at different indices";
          return;
        }
      }
      auto stride = FlatStrideOf(b, st->indices, strides_);
      if (read && (!stride || *stride == 0)) {
        reason = "read-modify-write of '" + b->name + "' at addresses that may coincide across lanes";
        return;
      }
    }
  }

 private:
  // True if e varies across lanes; records loads.
  bool Expr(const ir::Expr& e) {
    if (auto* ld = e.as<ir::Load>()) loads_.push_back(ld);
    bool varies = false;
    if (auto* v = e.as<ir::Variable>()) {
      auto it = strides_.find(v);
      varies = it != strides_.end() && it->second != 0;
    }
    ForEachChild(e, [&](const ir::Expr& c) { varies = Expr(c) || varies; });
    return varies;
  }

  StrideMap strides_;
  std::vector<const ir::Store*> stores_;
  std::vector<const ir::Load*> loads_;
};

}  // namespace

std::string CodeGenLLVM::VectorizeBlocker(const ir::For* op, int64_t lanes) {
  if (lanes < 2) return "fewer than 2 lanes";
  if (lanes > kMaxLanes) return "more than " + std::to_string(kMaxLanes) + " lanes";
  if (!op->loop_var.dtype().is_integer()) return "loop variable is not an integer";
  Legality legality(op->loop_var.get());
  legality.Check(op->body);
  legality.CheckMemory();
  return legality.reason;
}

std::optional<int64_t> CodeGenLLVM::Stride(const ir::Expr& e) { return StrideOf(e, strides_); }

std::optional<int64_t> CodeGenLLVM::FlatStride(const ir::Buffer& buffer, const std::vector<ir::Expr>& indices) {
  return FlatStrideOf(buffer, indices, strides_);
}

void CodeGenLLVM::EmitVectorizedFor(const ir::For* op, int64_t lanes) {
  llvm::Type* var_type = LLVMType(op->loop_var.dtype());
  llvm::Value* begin = builder_.CreateIntCast(EmitExpr(op->min), var_type, true);
  std::vector<llvm::Constant*> iota;
  for (int64_t k = 0; k < lanes; ++k) iota.push_back(llvm::ConstantInt::get(var_type, k));
  llvm::Value* lane_values =
      builder_.CreateNSWAdd(Splat(begin, static_cast<int>(lanes)), llvm::ConstantVector::get(iota));
  lanes_ = static_cast<int>(lanes);
  mask_ = nullptr;
  strides_.clear();
  strides_[op->loop_var.get()] = 1;
  vars_[op->loop_var.get()] = lane_values;
  EmitStmt(op->body);
  vars_.erase(op->loop_var.get());
  strides_.clear();
  lanes_ = 0;
  mask_ = nullptr;
}

llvm::Value* CodeGenLLVM::CombineMask(llvm::Value* cond) {
  cond = Splat(cond, lanes_);
  return mask_ == nullptr ? cond : builder_.CreateAnd(mask_, cond);
}

llvm::Value* CodeGenLLVM::IfAnyLane(llvm::Type* type, const std::function<llvm::Value*()>& emit) {
  if (mask_ == nullptr) return emit();
  llvm::Function* fn = builder_.GetInsertBlock()->getParent();
  llvm::BasicBlock* before = builder_.GetInsertBlock();
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "anylane", fn);
  auto* end_bb = llvm::BasicBlock::Create(ctx_, "anylane.end", fn);
  builder_.CreateCondBr(builder_.CreateOrReduce(mask_), then_bb, end_bb);
  builder_.SetInsertPoint(then_bb);
  llvm::Value* v = emit();
  llvm::BasicBlock* then_end = builder_.GetInsertBlock();
  builder_.CreateBr(end_bb);
  builder_.SetInsertPoint(end_bb);
  if (type == nullptr) return nullptr;
  llvm::PHINode* phi = builder_.CreatePHI(type, 2);
  phi->addIncoming(v, then_end);
  phi->addIncoming(llvm::Constant::getNullValue(type), before);
  return phi;
}

llvm::Value* CodeGenLLVM::VectorLoad(const ir::Load* op, llvm::Value* base, llvm::Value* flat) {
  llvm::Type* elem = StorageType(op->dtype);
  llvm::Align align(op->dtype.bytes());
  llvm::Value* v = nullptr;
  if (!flat->getType()->isVectorTy()) {
    v = IfAnyLane(elem, [&] { return builder_.CreateAlignedLoad(elem, builder_.CreateInBoundsGEP(elem, base, flat), align); });
  } else {
    auto* vec_type = llvm::FixedVectorType::get(elem, lanes_);
    llvm::Value* zero = llvm::Constant::getNullValue(vec_type);
    const std::optional<int64_t> stride = FlatStride(op->buffer, op->indices);
    if (stride == 1) {
      llvm::Value* ptr = builder_.CreateInBoundsGEP(elem, base, builder_.CreateExtractElement(flat, uint64_t{0}));
      if (mask_ != nullptr) {
        v = MaskedLoad(vec_type, ptr, align, mask_, zero);
      } else {
        v = builder_.CreateAlignedLoad(vec_type, ptr, align);
      }
    } else if (stride && *stride >= 2 && *stride <= kMaxDeinterleaveStride && lanes_ * *stride <= kMaxDeinterleaveSpan) {
      v = DeinterleavedLoad(elem, base, flat, int(*stride), align);
    } else {
      llvm::Value* ptrs = builder_.CreateInBoundsGEP(elem, base, flat);
      v = MaskedGather(vec_type, ptrs, align, mask_, zero);
    }
  }
  if (op->dtype.is_bool()) v = builder_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  return v;
}

// A load of stride S in {2, 3, 4} (a stride-2 convolution's row read along
// its output w): one masked load of the S * L elements the lanes span, only
// every S-th of them enabled, then a shuffle that keeps those. A gather
// loads an element at a time; this is S whole-vector loads and a permute.
// Disabled elements are not accessed, so the span may pass the buffer's end.
llvm::Value* CodeGenLLVM::DeinterleavedLoad(llvm::Type* elem, llvm::Value* base, llvm::Value* flat, int stride,
                                            llvm::Align align) {
  const int lanes = int(lanes_);
  const int span = lanes * stride;
  auto* span_type = llvm::FixedVectorType::get(elem, unsigned(span));
  llvm::Value* ptr = builder_.CreateInBoundsGEP(elem, base, builder_.CreateExtractElement(flat, uint64_t{0}));
  // Element p of the span is lane p / S's when p % S == 0, else unused.
  std::vector<int> spread(static_cast<size_t>(span)), pick(static_cast<size_t>(lanes));
  for (int p = 0; p < span; ++p) spread[size_t(p)] = p % stride == 0 ? p / stride : lanes;
  for (int lane = 0; lane < lanes; ++lane) pick[size_t(lane)] = lane * stride;
  llvm::Value* lane_mask = mask_ != nullptr ? mask_ : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(builder_.getInt1Ty(), lanes_));
  llvm::Value* off = llvm::Constant::getNullValue(lane_mask->getType());
  llvm::Value* span_mask = builder_.CreateShuffleVector(lane_mask, off, spread);
  llvm::Value* wide = MaskedLoad(span_type, ptr, align, span_mask, llvm::Constant::getNullValue(span_type));
  return builder_.CreateShuffleVector(wide, pick);
}

void CodeGenLLVM::VectorStore(const ir::Store* op, llvm::Value* value, llvm::Value* base, llvm::Value* flat) {
  llvm::Type* elem = StorageType(op->buffer->dtype);
  llvm::Align align(op->buffer->dtype.bytes());
  if (op->buffer->dtype.is_bool()) {
    llvm::Type* t = elem;
    if (auto* vt = llvm::dyn_cast<llvm::FixedVectorType>(value->getType())) t = llvm::FixedVectorType::get(elem, vt->getNumElements());
    value = builder_.CreateZExt(value, t);
  }
  if (!flat->getType()->isVectorTy()) {
    if (value->getType()->isVectorTy()) {
      Fail(Status::Internal("codegen: varying value stored to a uniform address of '" + op->buffer->name + "'"));
      return;
    }
    IfAnyLane(nullptr, [&]() -> llvm::Value* {
      builder_.CreateAlignedStore(value, builder_.CreateInBoundsGEP(elem, base, flat), align);
      return nullptr;
    });
    return;
  }
  value = Splat(value, lanes_);
  if (FlatStride(op->buffer, op->indices) == 1) {
    llvm::Value* ptr = builder_.CreateInBoundsGEP(elem, base, builder_.CreateExtractElement(flat, uint64_t{0}));
    if (mask_ != nullptr) {
      MaskedStore(value, ptr, align, mask_);
    } else {
      builder_.CreateAlignedStore(value, ptr, align);
    }
    return;
  }
  MaskedScatter(value, builder_.CreateInBoundsGEP(elem, base, flat), align, mask_);
}

// LLVM 16 widens a masked intrinsic of another width to a power of two
// itself, and there it can miscompile: a stride-2 convolution's 9-lane padded
// row copy (masked loads whose first and last lanes are off) read wrong
// values once the loop around it was unrolled, on every x86 CPU, and only
// through llvm.masked.load (tests/compiler/codegen/masked_width_test.cpp).
// Padding to the power of two here, with the extra lanes off, takes the path
// every power-of-two vector takes; the cost is the same.
namespace {
unsigned LanesOf(llvm::Value* v) { return llvm::cast<llvm::FixedVectorType>(v->getType())->getNumElements(); }
unsigned PowerOfTwoAtLeast(unsigned n) { return unsigned(llvm::PowerOf2Ceil(n)); }
}  // namespace

llvm::Value* CodeGenLLVM::PadLanes(llvm::Value* v, unsigned lanes) {
  const unsigned have = LanesOf(v);
  if (have == lanes) return v;
  std::vector<int> pick(lanes);
  for (unsigned i = 0; i < lanes; ++i) pick[i] = int(i < have ? i : have);  // lane `have`: the zero vector's first
  return builder_.CreateShuffleVector(v, llvm::Constant::getNullValue(v->getType()), pick);
}

llvm::Value* CodeGenLLVM::CutLanes(llvm::Value* v, unsigned lanes) {
  if (LanesOf(v) == lanes) return v;
  std::vector<int> pick(lanes);
  for (unsigned i = 0; i < lanes; ++i) pick[i] = int(i);
  return builder_.CreateShuffleVector(v, pick);
}

namespace {
// An all-lanes-on mask for a null one, so that padding can turn lanes off.
llvm::Value* MaskOrAllOn(llvm::IRBuilder<>& b, llvm::Value* mask, unsigned lanes) {
  return mask != nullptr ? mask : llvm::ConstantInt::getTrue(llvm::FixedVectorType::get(b.getInt1Ty(), lanes));
}
}  // namespace

llvm::Value* CodeGenLLVM::MaskedLoad(llvm::Type* vec_type, llvm::Value* ptr, llvm::Align align, llvm::Value* mask,
                                     llvm::Value* passthru) {
  auto* type = llvm::cast<llvm::FixedVectorType>(vec_type);
  const unsigned lanes = type->getNumElements(), wide = PowerOfTwoAtLeast(lanes);
  if (wide == lanes) return builder_.CreateMaskedLoad(vec_type, ptr, align, mask, passthru);
  auto* wide_type = llvm::FixedVectorType::get(type->getElementType(), wide);
  llvm::Value* v = builder_.CreateMaskedLoad(wide_type, ptr, align, PadLanes(MaskOrAllOn(builder_, mask, lanes), wide),
                                             PadLanes(passthru, wide));
  return CutLanes(v, lanes);
}

llvm::Value* CodeGenLLVM::MaskedGather(llvm::Type* vec_type, llvm::Value* ptrs, llvm::Align align, llvm::Value* mask,
                                       llvm::Value* passthru) {
  auto* type = llvm::cast<llvm::FixedVectorType>(vec_type);
  const unsigned lanes = type->getNumElements(), wide = PowerOfTwoAtLeast(lanes);
  if (wide == lanes) return builder_.CreateMaskedGather(vec_type, ptrs, align, mask, passthru);
  auto* wide_type = llvm::FixedVectorType::get(type->getElementType(), wide);
  llvm::Value* v = builder_.CreateMaskedGather(wide_type, PadLanes(ptrs, wide), align,
                                              PadLanes(MaskOrAllOn(builder_, mask, lanes), wide), PadLanes(passthru, wide));
  return CutLanes(v, lanes);
}

void CodeGenLLVM::MaskedStore(llvm::Value* value, llvm::Value* ptr, llvm::Align align, llvm::Value* mask) {
  const unsigned lanes = LanesOf(value), wide = PowerOfTwoAtLeast(lanes);
  if (wide == lanes) {
    builder_.CreateMaskedStore(value, ptr, align, mask);
    return;
  }
  builder_.CreateMaskedStore(PadLanes(value, wide), ptr, align, PadLanes(MaskOrAllOn(builder_, mask, lanes), wide));
}

void CodeGenLLVM::MaskedScatter(llvm::Value* value, llvm::Value* ptrs, llvm::Align align, llvm::Value* mask) {
  const unsigned lanes = LanesOf(value), wide = PowerOfTwoAtLeast(lanes);
  if (wide == lanes) {
    builder_.CreateMaskedScatter(value, ptrs, align, mask);
    return;
  }
  builder_.CreateMaskedScatter(PadLanes(value, wide), PadLanes(ptrs, wide), align,
                               PadLanes(MaskOrAllOn(builder_, mask, lanes), wide));
}

}  // namespace tunefarm::codegen
