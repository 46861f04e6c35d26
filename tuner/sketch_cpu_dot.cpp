// The CPU sketch's int8 dot products (rule 2, sketch_cpu_tiling.cpp): on a
// target with dot product instructions (CpuSketchConfig::dot_product_lanes,
// AArch64 with dotprod), a reduction of i8 x i8 -> i32 products may have
// its reduction split by 4 innermost, under the 4-lane vector loop, and
// annotated pragma_dot_product: the code generator then emits one `sdot`
// (`udot` for u8) per 4 x 4 multiply-adds (codegen_llvm_dot.cpp). A sampled
// choice, so the search measures both and the cost model learns which is
// faster. The outer tiling is the usual rule's.
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

}  // namespace

int DotProductReduceAxis(const Block* block, const Store* store) {
  if (store == nullptr || store->buffer->dtype != DataType::Int(32)) return -1;
  const auto* add = store->value.as<Add>();
  if (add == nullptr) return -1;
  const Load* acc = add->a.as<Load>();
  const Mul* mul = add->b.as<Mul>();
  if (acc == nullptr || mul == nullptr) {
    acc = add->b.as<Load>();
    mul = add->a.as<Mul>();
  }
  if (acc == nullptr || mul == nullptr || acc->buffer != store->buffer || acc->indices.size() != store->indices.size()) {
    return -1;
  }
  for (size_t d = 0; d < acc->indices.size(); ++d) {
    if (!ExprEqual(acc->indices[d], store->indices[d])) return -1;
  }
  const Load* a = NarrowLoad(mul->a);
  const Load* b = NarrowLoad(mul->b);
  if (a == nullptr || b == nullptr || a->dtype != b->dtype) return -1;
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
      if (load->indices[d].as<Variable>() == var && load->buffer->shape[d] % kDotProductSteps == 0) dim = int(d);
    }
    dims.push_back(dim);
  });
  return dims;
}

}  // namespace sketch_analysis

// Sampled before the reduction loops are tiled: the chosen loop is split by
// 4 first, and the tiling samples the rest.
Status ReductionTiler::SampleDotProduct() {
  if (!config_.int8_dot_product || config_.dot_product_lanes == 0 || config_.dot_product_lanes != lanes_ ||
      !forced_lanes_ || shape_.dot_reduce_axis < 0 || size_t(shape_.dot_reduce_axis) >= reduce_.size()) {
    return Status::OK();
  }
  TF_ASSIGN_OR_RETURN(ValueRV dot, sch_.SampleCategorical({0, 1}, {1.0, 1.0}));
  if (sch_.Get(dot) == 0) return Status::OK();
  LoopRV& r = reduce_[size_t(shape_.dot_reduce_axis)];
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> parts, sch_.Split(r, {-1, kDotProductSteps}));
  r = parts[0];
  dot_loop_ = parts[1];
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
  const int dim = shape_.dot_dims[size_t(p.read_index)];
  if (dim < 0 || dim == p.dim) return Status::OK();
  // Where that dimension is after the panels: p.dim left its place, its
  // outer part went to outer_position.
  int at = dim - (dim > p.dim ? 1 : 0);
  if (at >= p.outer_position) ++at;
  return sch_.PackLayout(p.copy, at, kDotProductSteps, at);
}

// Once the vector loop is vectorized, with the dot loop right inside it.
Status ReductionTiler::AnnotateDotProduct() {
  if (!dot_loop_) return Status::OK();
  return sch_.Annotate(*dot_loop_, kDotProductAnnotation, kDotProductSteps);
}

}  // namespace tunefarm::tuner
