// CodeGenLLVM: int8 2 x 2 matrix tiles on AArch64 (`smmla`/`ummla`,
// feature i8mm).
//
// The schedule marks them with the loop annotation
// pragma_matrix_multiply_accumulate = 8 (kMatrixMultiplyAnnotation) on a
// loop of extent 8 that is the whole body of a loop of 2 (the columns),
// itself the whole body of a loop of 2 (the rows), and whose body is one
// statement
//   acc[idx] = acc[idx] + i32(a[..]) * i32(b[..])
// (MatchInt8MultiplyAdd) with one operand indexed without the column
// variable and the other without the row variable, and acc at 4 distinct
// elements for the 4 (row, column) pairs. Such a nest is 2 x 2 x 8
// multiply-adds: one llvm.aarch64.neon.{s,u}mmla.v4i32.v16i8(acc, r, c),
// which adds sum(k < 8) r[8 * i + k] * c[8 * j + k] to acc[2 * i + j]: r
// holds the rows' operand (2 rows of 8 bytes), c the columns' (2 columns of
// 8 bytes, B^T's rows), acc the 2 x 2 tile row-major.
//
// The operands come from Int8Operand (codegen_llvm_dot.cpp): one 16-byte
// load when the bytes are already in that order, loads and a shuffle for
// other constant strides, else a load per byte. Anything else -- another
// target, other dtypes or extents, a body of another shape -- is left to the
// generic path (EmitFor), which computes the same sums; the reason is
// recorded in the annotated loop's metadata (tunefarm.mmla.fallback).
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsAArch64.h>

#include <array>
#include <set>

#include "codegen_llvm_internal.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::codegen {

namespace {

constexpr int64_t kTile = 2;                              // rows, and columns, of the i32 tile
constexpr int64_t kSteps = ir::kMatrixMultiplySteps;      // bytes summed into each element

const ir::For* AnnotatedStepLoop(const ir::For* op) {
  const auto* cols = op->body.as<ir::For>();
  if (cols == nullptr) return nullptr;
  const auto* steps = cols->body.as<ir::For>();
  if (steps == nullptr || steps->annotations.count(ir::kMatrixMultiplyAnnotation) == 0) return nullptr;
  return steps;
}

bool TileLoopKind(ir::ForKind kind) {
  return kind == ir::ForKind::kSerial || kind == ir::ForKind::kUnrolled || kind == ir::ForKind::kVectorized;
}

}  // namespace

bool HasMatrixMultiplyAnnotation(const ir::For* op) { return AnnotatedStepLoop(op) != nullptr; }

std::string CodeGenLLVM::MatchMatrixMultiply(const ir::For* op, MatrixMultiply* mm) {
  const auto* cols = op->body.as<ir::For>();
  const ir::For* steps = AnnotatedStepLoop(op);
  const int64_t value = steps->annotations.at(ir::kMatrixMultiplyAnnotation);
  if (value != kSteps) return "annotation value " + std::to_string(value) + " is not 8";
  if (target_.triple.rfind("aarch64", 0) != 0 || !target_.HasFeature("i8mm")) {
    return "target " + target_.ToString() + " has no int8 matrix multiply instructions (AArch64 +i8mm)";
  }
  const int64_t* n_rows = ir::AsConstInt(op->extent);
  const int64_t* n_cols = ir::AsConstInt(cols->extent);
  if (n_rows == nullptr || *n_rows != kTile || n_cols == nullptr || *n_cols != kTile) {
    return "the two loops around the annotated loop are not of 2";
  }
  const int64_t* n_steps = ir::AsConstInt(steps->extent);
  if (n_steps == nullptr || *n_steps != kSteps) return "the annotated loop's extent is not 8";
  const ir::Variable* row = op->loop_var.get();
  const ir::Variable* col = cols->loop_var.get();
  const ir::Variable* step = steps->loop_var.get();
  for (const ir::For* f : {op, cols, steps}) {
    if (!f->loop_var.dtype().is_integer()) return "loop variable is not an integer";
  }
  if (!TileLoopKind(op->kind) || !TileLoopKind(cols->kind)) return "a loop of the tile is parallel or bound";
  if (steps->kind != ir::ForKind::kSerial && steps->kind != ir::ForKind::kUnrolled) return "the annotated loop is not serial";
  if (ir::UsesVar(cols->min, row) || ir::UsesVar(steps->min, row) || ir::UsesVar(steps->min, col)) {
    return "an inner loop's start varies with an outer loop of the tile";
  }
  Int8MultiplyAdd mac;
  const std::string blocker = MatchInt8MultiplyAdd(steps->body, step, &mac);
  if (!blocker.empty()) return blocker;
  const ir::Load* row_operand = mac.a;
  const ir::Load* col_operand = mac.b;
  // The product commutes: the operand that varies with the column is c.
  if (IndicesUse(row_operand->indices, col)) std::swap(row_operand, col_operand);
  if (IndicesUse(row_operand->indices, col) || IndicesUse(col_operand->indices, row)) {
    return "an operand varies with both the row and the column";
  }
  const ir::Store* store = mac.store;
  strides_ = {{row, 1}};
  const std::optional<int64_t> acc_row = FlatStride(store->buffer, store->indices);
  strides_ = {{col, 1}};
  const std::optional<int64_t> acc_col = FlatStride(store->buffer, store->indices);
  strides_.clear();
  if (!acc_row || !acc_col) return "the tile's accumulators may coincide";
  const std::set<int64_t> elements = {0, *acc_col, *acc_row, *acc_row + *acc_col};
  if (elements.size() != size_t(kTile * kTile)) return "the tile's accumulators may coincide";
  *mm = MatrixMultiply{op, cols, steps, store, row_operand, col_operand, mac.is_signed, *acc_row, *acc_col};
  return "";
}

llvm::Metadata* CodeGenLLVM::MatrixMultiplyFallback(const ir::For* op) {
  auto found = mmla_blockers_.find(op);
  const std::string reason =
      found != mmla_blockers_.end() ? found->second : "the annotated loop is not the body of a 2 x 2 nest of loops";
  return llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "tunefarm.mmla.fallback"), llvm::MDString::get(ctx_, reason)});
}

void CodeGenLLVM::EmitMatrixMultiply(const MatrixMultiply& mm) {
  const ir::Variable* row = mm.rows->loop_var.get();
  const ir::Variable* col = mm.cols->loop_var.get();
  const ir::Variable* step = mm.steps->loop_var.get();
  // Each start may use only loops outside the tile (MatchMatrixMultiply).
  llvm::Value* row0 = builder_.CreateIntCast(EmitExpr(mm.rows->min), LLVMType(mm.rows->loop_var.dtype()), true);
  llvm::Value* col0 = builder_.CreateIntCast(EmitExpr(mm.cols->min), LLVMType(mm.cols->loop_var.dtype()), true);
  llvm::Value* step0 = builder_.CreateIntCast(EmitExpr(mm.steps->min), LLVMType(mm.steps->loop_var.dtype()), true);
  auto bind = [&](int64_t i, int64_t j, int64_t k) {
    vars_[row] = builder_.CreateAdd(row0, llvm::ConstantInt::get(row0->getType(), uint64_t(i)));
    vars_[col] = builder_.CreateAdd(col0, llvm::ConstantInt::get(col0->getType(), uint64_t(j)));
    vars_[step] = builder_.CreateAdd(step0, llvm::ConstantInt::get(step0->getType(), uint64_t(k)));
  };
  llvm::Type* i32 = builder_.getInt32Ty();
  auto* v4 = llvm::FixedVectorType::get(i32, 4);
  const llvm::Align word(4);
  const ir::Store* store = mm.store;
  llvm::Value* acc_base = BufferPointer(store->buffer);
  // Element 2 * i + j of the tile.
  std::array<llvm::Value*, kTile * kTile> acc_ptrs{};
  for (int64_t i = 0; i < kTile; ++i) {
    for (int64_t j = 0; j < kTile; ++j) {
      bind(i, j, 0);
      acc_ptrs[size_t(kTile * i + j)] = builder_.CreateInBoundsGEP(i32, acc_base, FlatIndex(store->buffer, store->indices));
    }
  }
  const bool contiguous = mm.acc_col_stride == 1 && mm.acc_row_stride == kTile;
  llvm::Value* acc = nullptr;
  if (contiguous) {
    acc = builder_.CreateAlignedLoad(v4, acc_ptrs[0], word);
  } else {
    acc = llvm::PoisonValue::get(v4);
    for (size_t e = 0; e < acc_ptrs.size(); ++e) {
      acc = builder_.CreateInsertElement(acc, builder_.CreateAlignedLoad(i32, acc_ptrs[e], word), uint64_t(e));
    }
  }
  // r: byte 8 * i + k is the row operand at row i, step k; c likewise by column.
  llvm::Value* r = Int8Operand(mm.row_operand, row, kTile, step, kSteps, [&](int64_t i, int64_t k) { bind(i, 0, k); });
  llvm::Value* c = Int8Operand(mm.col_operand, col, kTile, step, kSteps, [&](int64_t j, int64_t k) { bind(0, j, k); });
  const auto id = mm.is_signed ? llvm::Intrinsic::aarch64_neon_smmla : llvm::Intrinsic::aarch64_neon_ummla;
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(&module_, id, {v4, r->getType()});
  llvm::Value* sum = builder_.CreateCall(fn, {acc, r, c});
  if (contiguous) {
    builder_.CreateAlignedStore(sum, acc_ptrs[0], word);
  } else {
    for (size_t e = 0; e < acc_ptrs.size(); ++e) {
      builder_.CreateAlignedStore(builder_.CreateExtractElement(sum, uint64_t(e)), acc_ptrs[e], word);
    }
  }
  vars_.erase(row);
  vars_.erase(col);
  vars_.erase(step);
}

}  // namespace tunefarm::codegen
