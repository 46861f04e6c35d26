// The CPU sketch's int8 dot products (rule 2, sketch_cpu_tiling.cpp): on a
// target with dot product instructions (CpuSketchConfig::dot_product_lanes,
// AArch64 with dotprod), a reduction of i8 x i8 -> i32 products may have
// its reduction split by 4 innermost, under the 4-lane vector loop, and
// annotated pragma_dot_product: the code generator then emits one `sdot`
// (`udot` for u8) per 4 x 4 multiply-adds (codegen_llvm_dot.cpp). On a
// target with int8 matrix multiply instructions
// (CpuSketchConfig::matrix_multiply_tiles, AArch64 with i8mm) it may instead
// end in 2 rows x 2 columns x 8 steps, the steps annotated
// pragma_matrix_multiply_accumulate: one `smmla` (`ummla`) per 2 x 2 x 8
// multiply-adds (codegen_llvm_mmla.cpp). One sampled choice among the plain
// tiling and those offered, so the search measures them and the cost model
// learns which is faster. The outer tiling is the usual rule's.
#include <algorithm>
#include <optional>

#include "sketch_cpu_tiler.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::tuner {

using namespace ir;

namespace sketch_analysis {

namespace {

// The 8-bit load under an i32 cast; null when e is not one.
const Load* NarrowLoad(const Expr& e) {
  const auto* cast = e.as<Cast>();
  if (cast == nullptr || cast->dtype != DataType::Int(32)) return nullptr;
  const auto* load = cast->value.as<Load>();
  if (load == nullptr || load->dtype.lanes != 1 || load->dtype.bits != 8 || !load->dtype.is_integer()) return nullptr;
  return load;
}

bool IndexedBy(const Load* load, const Variable* v) {
  for (const Expr& i : load->indices) {
    if (UsesVar(i, v)) return true;
  }
  return false;
}

// The two 8-bit operands of acc = acc + i32(a) * i32(b) stored by `store`,
// both i8 or both u8; false when it is not that.
bool ProductLoads(const Store* store, const Load** a, const Load** b) {
  if (store == nullptr || store->buffer->dtype != DataType::Int(32)) return false;
  const auto* add = store->value.as<Add>();
  if (add == nullptr) return false;
  const Load* acc = add->a.as<Load>();
  const Mul* mul = add->b.as<Mul>();
  if (acc == nullptr || mul == nullptr) {
    acc = add->b.as<Load>();
    mul = add->a.as<Mul>();
  }
  if (acc == nullptr || mul == nullptr || acc->buffer != store->buffer || acc->indices.size() != store->indices.size()) {
    return false;
  }
  for (size_t d = 0; d < acc->indices.size(); ++d) {
    if (!ExprEqual(acc->indices[d], store->indices[d])) return false;
  }
  *a = NarrowLoad(mul->a);
  *b = NarrowLoad(mul->b);
  return *a != nullptr && *b != nullptr && (*a)->dtype == (*b)->dtype;
}

// Per read of the block (DescribeReduction's order), the dimension indexed
// by exactly the reduction axis `reduce_axis` whose extent `steps` divides;
// -1 where none.
std::vector<int> StepDims(const Block* block, const Store* store, int reduce_axis, int64_t steps) {
  std::vector<int> dims;
  const Variable* var = nullptr;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind == IterKind::kReduce && reduce_axis-- == 0) var = iv.var.get();
  }
  // Read indices in the first-use order of cache_read (DescribeReduction's).
  std::vector<const BufferNode*> reads;
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const auto* load = static_cast<const Load*>(n);
    if (store != nullptr && load->buffer.get() == store->buffer.get()) return;
    if (std::find(reads.begin(), reads.end(), load->buffer.get()) != reads.end()) return;
    reads.push_back(load->buffer.get());
    int dim = -1;
    for (size_t d = 0; var != nullptr && d < load->indices.size(); ++d) {
      if (load->indices[d].as<Variable>() == var && load->buffer->shape[d] % steps == 0) dim = int(d);
    }
    dims.push_back(dim);
  });
  return dims;
}

}  // namespace

int DotProductReduceAxis(const Block* block, const Store* store) {
  const Load* a = nullptr;
  const Load* b = nullptr;
  if (!ProductLoads(store, &a, &b)) return -1;
  // The innermost reduction axis both operands run along whose extent the
  // instruction's 4 steps divide.
  int found = -1;
  int reduce_index = 0;
  for (const IterVar& iv : block->iter_vars) {
    if (iv.kind != IterKind::kReduce) continue;
    if (iv.extent % kDotProductSteps == 0 && IndexedBy(a, iv.var.get()) && IndexedBy(b, iv.var.get())) {
      found = reduce_index;
    }
    ++reduce_index;
  }
  return found;
}

std::vector<int> DotProductDims(const Block* block, const Store* store, int reduce_axis) {
  return StepDims(block, store, reduce_axis, kDotProductSteps);
}

}  // namespace sketch_analysis

// Sampled before the reduction loops are tiled: the chosen loop is split by
// 4 (sdot) or 8 (smmla) first, and the tiling samples the rest. Without
// i8mm the choice is the one it always was ({0, 1}), so that records of
// older runs still replay the same programs.
Status ReductionTiler::SampleDotProduct() {
  const bool dot = config_.int8_dot_product && config_.dot_product_lanes != 0 &&
                   config_.dot_product_lanes == lanes_ && forced_lanes_ && shape_.dot_reduce_axis >= 0 &&
                   size_t(shape_.dot_reduce_axis) < reduce_.size();
  size_t row_axis = 0;
  TF_ASSIGN_OR_RETURN(bool mmla, MatrixMultiplyFits(&row_axis));
  if (!dot && !mmla) return Status::OK();
  std::vector<int64_t> choices = {0};
  if (dot) choices.push_back(1);
  if (mmla) choices.push_back(2);
  TF_ASSIGN_OR_RETURN(ValueRV choice, sch_.SampleCategorical(choices, std::vector<double>(choices.size(), 1.0)));
  if (sch_.Get(choice) == 0) return Status::OK();
  if (sch_.Get(choice) == 2) return SplitMatrixMultiply(row_axis);
  LoopRV& r = reduce_[size_t(shape_.dot_reduce_axis)];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(r, {-1, kDotProductSteps}));
  r = parts[0];
  dot_loop_ = parts[1];
  return Status::OK();
}

// smmla is offered where the rows of its tile can come from the register
// tile: the vector axis (whole vectors, so an even count) indexes one
// operand only, the innermost other spatial axis that indexes only the other
// has an even innermost tile, and the reduction axis is a multiple of 8.
// `row_axis` is that axis. (The tile needs no padding of its own: its rows
// and columns divide what the tiling drew.)
Result<bool> ReductionTiler::MatrixMultiplyFits(size_t* row_axis) const {
  if (!config_.int8_matrix_multiply || !config_.matrix_multiply_tiles || !forced_lanes_ || lanes_ % 2 != 0 ||
      shape_.dot_reduce_axis < 0 || size_t(shape_.dot_reduce_axis) >= reduce_.size()) {
    return false;
  }
  const Load* a = nullptr;
  const Load* b = nullptr;
  if (!sketch_analysis::ProductLoads(info_.store, &a, &b)) return false;
  std::vector<const Variable*> spatial;
  int64_t steps = 0;
  int reduce_index = 0;
  for (const IterVar& iv : info_.block->iter_vars) {
    if (iv.kind == IterKind::kSpatial) spatial.push_back(iv.var.get());
    if (iv.kind == IterKind::kReduce && reduce_index++ == shape_.dot_reduce_axis) steps = iv.extent;
  }
  if (spatial.size() != n_spatial_ || steps % kMatrixMultiplySteps != 0) return false;
  auto operands = [&](size_t axis) {
    return (sketch_analysis::IndexedBy(a, spatial[axis]) ? 1 : 0) | (sketch_analysis::IndexedBy(b, spatial[axis]) ? 2 : 0);
  };
  const int col_operand = operands(axis_);
  if (col_operand != 1 && col_operand != 2) return false;
  for (size_t m = n_spatial_; m-- > 0;) {
    if (m == axis_ || operands(m) != 3 - col_operand) continue;
    TF_ASSIGN_OR_RETURN(int64_t rows, sch_.LoopExtent(s_levels_.back()[m]));
    *row_axis = m;
    return rows % 2 == 0;
  }
  return false;
}

// The tile: 8 steps off the reduction, 2 rows off the row axis's innermost
// tile, 2 columns off the vector loop, which keeps the pairs of columns.
Status ReductionTiler::SplitMatrixMultiply(size_t row_axis) {
  LoopRV& r = reduce_[size_t(shape_.dot_reduce_axis)];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> steps, sch_.Split(r, {-1, kMatrixMultiplySteps}));
  r = steps[0];
  dot_loop_ = steps[1];
  LoopRV& m = s_levels_.back()[row_axis];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> rows, sch_.Split(m, {-1, 2}));
  m = rows[0];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> cols, sch_.Split(vector_loop_, {-1, 2}));
  vector_loop_ = cols[0];
  mmla_tile_ = {rows[1], cols[1]};
  return Status::OK();
}

// A copy packed into panels along the vector axis ([N/4, K, 4] of a
// matmul's B[N, K]) that the dot product reads along its reduction is
// packed by 4 along that too ([N/4, K/4, 4, 4]): then each lane's 4 steps
// follow each other and the operand of one sdot is 16 contiguous bytes, one
// load, where the panels alone need a load and a shuffle.
Status ReductionTiler::PackDotSteps(const PackedCopy& p) {
  if (!dot_loop_ || p.dim < 0 || p.read_index < 0 || size_t(p.read_index) >= shape_.dot_dims.size()) {
    return Status::OK();
  }
  const std::vector<int> dims = mmla_tile_.empty() ? shape_.dot_dims
                                                   : sketch_analysis::StepDims(info_.block, info_.store,
                                                                               shape_.dot_reduce_axis, kMatrixMultiplySteps);
  if (size_t(p.read_index) >= dims.size()) return Status::OK();
  const int dim = dims[size_t(p.read_index)];
  if (dim < 0 || dim == p.dim) return Status::OK();
  // Where that dimension is after the panels: p.dim left its place, its
  // outer part went to outer_position.
  int at = dim - (dim > p.dim ? 1 : 0);
  if (at >= p.outer_position) ++at;
  return sch_.PackLayout(p.copy, at, mmla_tile_.empty() ? kDotProductSteps : kMatrixMultiplySteps, at);
}

// Once the vector loop is vectorized, with the dot loop right inside it (or
// the smmla tile's loops between them).
Status ReductionTiler::AnnotateDotProduct() {
  if (!dot_loop_) return Status::OK();
  if (!mmla_tile_.empty()) return sch_.Annotate(*dot_loop_, kMatrixMultiplyAnnotation, kMatrixMultiplySteps);
  return sch_.Annotate(*dot_loop_, kDotProductAnnotation, kDotProductSteps);
}

}  // namespace tunefarm::tuner
