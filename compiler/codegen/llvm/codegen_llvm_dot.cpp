// CodeGenLLVM: int8 dot products on AArch64 (`sdot`/`udot`, feature dotprod).
//
// The schedule marks them with the loop annotation pragma_dot_product = 4
// (kDotProductAnnotation) on a loop of extent 4 that is the whole body of a
// vectorized loop of 4 lanes, and whose body is one statement
//   acc[idx] = acc[idx] + i32(a[..]) * i32(b[..])
// with acc an i32 buffer indexed without the reduction variable and at
// distinct elements per lane, a and b both i8 (sdot) or both u8 (udot).
// Such a nest is 4 x 4 multiply-adds into 4 accumulators: one
// llvm.aarch64.neon.{s,u}dot.v4i32.v16i8, whose byte 4 * l + kk of each
// operand is the operand for lane l and reduction step kk. LLVM 16 forms no
// dot product from the widened i8 -> i32 reduction by itself.
//
// The operands are built from the loads the body makes, by the strides of
// their flat indices in the lane and the step (constant strides: whole loads
// and a shuffle; otherwise one byte load each), and LLVM's later passes clean
// up what is redundant. Anything else -- another target, other dtypes, other
// extents, a body of another shape -- is left to the generic path (EmitFor),
// which computes the same sums; the reason is recorded in the loop metadata.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>

#include <algorithm>
#include <array>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::codegen {

namespace {

constexpr int64_t kDotLanes = 4;  // i32 accumulators in a 128-bit vector
constexpr int64_t kDotSteps = ir::kDotProductSteps;  // bytes summed into each of them
// Operands whose bytes lie within this many bytes are one load and a shuffle.
constexpr int64_t kMaxOperandSpan = 64;

}  // namespace

bool HasLoad(const ir::Expr& e) {
  bool found = false;
  ir::PostOrderVisit(ir::Evaluate::Make(e), [&](const ir::IRNode* n) { found = found || n->kind == ir::IRNodeKind::kLoad; });
  return found;
}

bool IndicesUse(const std::vector<ir::Expr>& indices, const ir::Variable* v) {
  for (const ir::Expr& i : indices) {
    if (ir::UsesVar(i, v)) return true;
  }
  return false;
}

namespace {

// The 8-bit load under an i32 cast; null when e is not one.
const ir::Load* NarrowOperand(const ir::Expr& e) {
  const auto* cast = e.as<ir::Cast>();
  if (cast == nullptr || cast->dtype != ir::DataType::Int(32)) return nullptr;
  const auto* load = cast->value.as<ir::Load>();
  if (load == nullptr || load->dtype.lanes != 1 || load->dtype.bits != 8 || !load->dtype.is_integer()) return nullptr;
  return load;
}

}  // namespace

std::string MatchInt8MultiplyAdd(const ir::Stmt& body, const ir::Variable* step, Int8MultiplyAdd* out) {
  const auto* store = body.as<ir::Store>();
  if (store == nullptr) return "the body is not one store";
  if (store->buffer->dtype != ir::DataType::Int(32) || store->value.dtype() != ir::DataType::Int(32)) {
    return "the accumulator '" + store->buffer->name + "' is not i32";
  }
  const auto* add = store->value.as<ir::Add>();
  if (add == nullptr) return "the stored value is not a sum";
  const ir::Load* acc = add->a.as<ir::Load>();
  const ir::Mul* mul = add->b.as<ir::Mul>();
  if (acc == nullptr || mul == nullptr) {
    acc = add->b.as<ir::Load>();
    mul = add->a.as<ir::Mul>();
  }
  if (acc == nullptr || mul == nullptr || acc->buffer != store->buffer) return "the stored value is not acc + a * b";
  if (acc->indices.size() != store->indices.size()) return "the accumulator is read at another element";
  for (size_t i = 0; i < acc->indices.size(); ++i) {
    if (!ir::ExprEqual(acc->indices[i], store->indices[i])) return "the accumulator is read at another element";
    if (HasLoad(acc->indices[i])) return "the accumulator's index reads memory";
  }
  if (IndicesUse(store->indices, step)) return "the accumulator's index varies with the reduction";
  const ir::Load* a = NarrowOperand(mul->a);
  const ir::Load* b = NarrowOperand(mul->b);
  if (a == nullptr || b == nullptr) return "the product is not of two 8-bit integers widened to i32";
  if (a->dtype != b->dtype) return "one operand is signed and the other unsigned";
  for (const ir::Load* ld : {a, b}) {
    if (ld->buffer == store->buffer) return "an operand is read from the accumulator";
    for (const ir::Expr& i : ld->indices) {
      if (HasLoad(i)) return "an operand's index reads memory";
    }
  }
  *out = Int8MultiplyAdd{store, a, b, a->dtype.is_int()};
  return "";
}

bool HasDotProductAnnotation(const ir::For* op) {
  const auto* inner = op->body.as<ir::For>();
  return inner != nullptr && inner->annotations.count(ir::kDotProductAnnotation) > 0;
}

std::string CodeGenLLVM::MatchDotProduct(const ir::For* op, DotProduct* dot) {
  const auto* inner = op->body.as<ir::For>();
  const auto annotation = inner->annotations.find(ir::kDotProductAnnotation);
  if (annotation->second != kDotSteps) return "annotation value " + std::to_string(annotation->second) + " is not 4";
  if (target_.triple.rfind("aarch64", 0) != 0 || !target_.HasFeature("dotprod")) {
    return "target " + target_.ToString() + " has no dot product instructions (AArch64 +dotprod)";
  }
  const int64_t* lanes = ir::AsConstInt(op->extent);
  if (lanes == nullptr || *lanes != kDotLanes) return "the vectorized loop does not have 4 lanes";
  const int64_t* steps = ir::AsConstInt(inner->extent);
  if (steps == nullptr || *steps != kDotSteps) return "the annotated loop's extent is not 4";
  if (!op->loop_var.dtype().is_integer() || !inner->loop_var.dtype().is_integer()) return "loop variable is not an integer";
  if (inner->kind != ir::ForKind::kSerial && inner->kind != ir::ForKind::kUnrolled) return "the annotated loop is not serial";
  if (ir::UsesVar(inner->min, op->loop_var.get())) return "the annotated loop's start varies with the lane";
  Int8MultiplyAdd mac;
  const std::string blocker = MatchInt8MultiplyAdd(inner->body, inner->loop_var.get(), &mac);
  if (!blocker.empty()) return blocker;
  const ir::Store* store = mac.store;
  strides_ = {{op->loop_var.get(), 1}};
  const std::optional<int64_t> acc_stride = FlatStride(store->buffer, store->indices);
  strides_.clear();
  if (!acc_stride || *acc_stride == 0) return "the lanes' accumulators may coincide";
  *dot = DotProduct{op, inner, store, mac.a, mac.b, mac.is_signed, *acc_stride};
  return "";
}

void CodeGenLLVM::BindDotStep(const DotProduct& dot, llvm::Value* lane0, llvm::Value* step0, int64_t lane, int64_t step) {
  vars_[dot.lanes->loop_var.get()] = builder_.CreateAdd(lane0, llvm::ConstantInt::get(lane0->getType(), uint64_t(lane)));
  vars_[dot.steps->loop_var.get()] = builder_.CreateAdd(step0, llvm::ConstantInt::get(step0->getType(), uint64_t(step)));
}

// The 16 operand bytes of one load, byte 4 * lane + step for (lane, step).
llvm::Value* CodeGenLLVM::DotOperand(const DotProduct& dot, const ir::Load* load, llvm::Value* lane0, llvm::Value* step0) {
  return Int8Operand(load, dot.lanes->loop_var.get(), kDotLanes, dot.steps->loop_var.get(), kDotSteps,
                     [&](int64_t lane, int64_t step) { BindDotStep(dot, lane0, step0, lane, step); });
}

llvm::Value* CodeGenLLVM::Int8Operand(const ir::Load* load, const ir::Variable* row_var, int64_t rows,
                                      const ir::Variable* step_var, int64_t steps,
                                      const std::function<void(int64_t, int64_t)>& bind) {
  llvm::Type* i8 = builder_.getInt8Ty();
  auto* v16 = llvm::FixedVectorType::get(i8, 16);
  const llvm::Align byte(1);
  llvm::Value* base = BufferPointer(load->buffer);
  strides_ = {{row_var, 1}};
  const std::optional<int64_t> row_stride = FlatStride(load->buffer, load->indices);
  strides_ = {{step_var, 1}};
  const std::optional<int64_t> step_stride = FlatStride(load->buffer, load->indices);
  strides_.clear();
  bind(0, 0);
  llvm::Value* flat0 = FlatIndex(load->buffer, load->indices);
  auto at = [&](int64_t offset) { return builder_.CreateGEP(i8, base, builder_.CreateAdd(flat0, ConstI64(offset))); };
  if (row_stride && step_stride) {
    const int64_t sr = *row_stride, sk = *step_stride;
    if (sk == 1 && sr == steps) return builder_.CreateAlignedLoad(v16, at(0), byte);  // already in order
    if (sk == 1) {
      // `steps` bytes per row: one integer load each (one for all rows when uniform).
      llvm::Type* word_type = builder_.getIntNTy(unsigned(8 * steps));
      auto* words_type = llvm::FixedVectorType::get(word_type, unsigned(rows));
      llvm::Value* words = llvm::PoisonValue::get(words_type);
      for (int64_t r = 0; r < rows; ++r) {
        llvm::Value* word = builder_.CreateAlignedLoad(word_type, at(r * sr), byte);
        if (sr == 0) {
          words = builder_.CreateVectorSplat(unsigned(rows), word);
          break;
        }
        words = builder_.CreateInsertElement(words, word, uint64_t(r));
      }
      return builder_.CreateBitCast(words, v16);
    }
    std::array<int64_t, 16> offsets{};
    int64_t lo = 0, hi = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t k = 0; k < steps; ++k) {
        const int64_t o = r * sr + k * sk;
        offsets[size_t(steps * r + k)] = o;
        lo = std::min(lo, o);
        hi = std::max(hi, o);
      }
    }
    if (hi - lo + 1 <= kMaxOperandSpan) {
      // Every byte of the span lies between two bytes the nest reads, so
      // inside the buffer: one load of the span, then pick.
      auto* span = llvm::FixedVectorType::get(i8, unsigned(hi - lo + 1));
      llvm::Value* bytes = builder_.CreateAlignedLoad(span, at(lo), byte);
      std::vector<int> pick;
      for (int64_t o : offsets) pick.push_back(int(o - lo));
      return builder_.CreateShuffleVector(bytes, pick);
    }
    llvm::Value* gathered = llvm::PoisonValue::get(v16);
    for (size_t p = 0; p < offsets.size(); ++p) {
      gathered = builder_.CreateInsertElement(gathered, builder_.CreateAlignedLoad(i8, at(offsets[p]), byte), uint64_t(p));
    }
    return gathered;
  }
  // No constant strides: each byte's index on its own.
  llvm::Value* gathered = llvm::PoisonValue::get(v16);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < steps; ++k) {
      bind(r, k);
      llvm::Value* ptr = builder_.CreateGEP(i8, base, FlatIndex(load->buffer, load->indices));
      gathered = builder_.CreateInsertElement(gathered, builder_.CreateAlignedLoad(i8, ptr, byte), uint64_t(steps * r + k));
    }
  }
  return gathered;
}

void CodeGenLLVM::EmitDotProduct(const DotProduct& dot) {
  llvm::Type* lane_type = LLVMType(dot.lanes->loop_var.dtype());
  llvm::Type* step_type = LLVMType(dot.steps->loop_var.dtype());
  llvm::Value* lane0 = builder_.CreateIntCast(EmitExpr(dot.lanes->min), lane_type, true);
  // The step loop's start does not depend on the lane (MatchDotProduct).
  vars_[dot.lanes->loop_var.get()] = lane0;
  llvm::Value* step0 = builder_.CreateIntCast(EmitExpr(dot.steps->min), step_type, true);
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* v4 = llvm::FixedVectorType::get(i32, 4);
  const llvm::Align word(4);
  const ir::Store* store = dot.store;
  llvm::Value* acc_base = BufferPointer(store->buffer);
  std::array<llvm::Value*, kDotLanes> acc_ptrs{};
  for (int64_t l = 0; l < kDotLanes; ++l) {
    if (l > 0 && dot.acc_stride == 1) break;
    BindDotStep(dot, lane0, step0, l, 0);
    acc_ptrs[size_t(l)] = builder_.CreateInBoundsGEP(i32, acc_base, FlatIndex(store->buffer, store->indices));
  }
  llvm::Value* acc = nullptr;
  if (dot.acc_stride == 1) {
    acc = builder_.CreateAlignedLoad(v4, acc_ptrs[0], word);
  } else {
    acc = llvm::PoisonValue::get(v4);
    for (int64_t l = 0; l < kDotLanes; ++l) {
      acc = builder_.CreateInsertElement(acc, builder_.CreateAlignedLoad(i32, acc_ptrs[size_t(l)], word), uint64_t(l));
    }
  }
  llvm::Value* a = DotOperand(dot, dot.a, lane0, step0);
  llvm::Value* b = DotOperand(dot, dot.b, lane0, step0);
  const auto id = dot.is_signed ? llvm::Intrinsic::aarch64_neon_sdot : llvm::Intrinsic::aarch64_neon_udot;
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(&module_, id, {v4, a->getType()});
  llvm::Value* sum = builder_.CreateCall(fn, {acc, a, b});
  if (dot.acc_stride == 1) {
    builder_.CreateAlignedStore(sum, acc_ptrs[0], word);
  } else {
    for (int64_t l = 0; l < kDotLanes; ++l) {
      builder_.CreateAlignedStore(builder_.CreateExtractElement(sum, uint64_t(l)), acc_ptrs[size_t(l)], word);
    }
  }
  vars_.erase(dot.lanes->loop_var.get());
  vars_.erase(dot.steps->loop_var.get());
}

}  // namespace tunefarm::codegen
