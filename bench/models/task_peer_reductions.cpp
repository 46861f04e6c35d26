// Matmuls, pooling and reductions: anchors whose first stage reduces. A
// dense layer's rows are flattened into one M (a [B, M, K] activation times
// constant [K, N] weights is one GEMM, as a framework calls it); a batch
// matmul keeps its batch dims, with oneDNN's broadcasting of size-1 ones.
#include <cmath>

#include "task_peer_internal.h"

namespace tunefarm::bench::peer_internal {
namespace {

// An operand's dims padded with leading 1s to `rank`.
std::vector<int64_t> PadRank(std::vector<int64_t> dims, size_t rank) {
  while (dims.size() < rank) dims.insert(dims.begin(), 1);
  return dims;
}

bool IsVar(const ir::Expr& e, const ir::Var& v) { return e.as<ir::Variable>() == v.get(); }

// Dims in the dense output's rank as the flattened {M, N} output sees them.
Result<std::vector<int64_t>> Flatten2D(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  int64_t rows = 1, out_rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  for (size_t d = 0; d + 1 < out.size(); ++d) out_rows *= out[d];
  if (rows != 1 && rows != out_rows) {
    return Status::Unimplemented("an operand of " + DimsText(dims) + " broadcasts along some rows of the dense output only");
  }
  return std::vector<int64_t>{rows, dims.back()};
}

// X's spatial index without the clamp max pooling reads padded taps with: max(min(i, H - 1), 0).
ir::Expr Unclamped(const ir::Expr& e) {
  if (const auto* mx = e.as<ir::Max>()) {
    if (const auto* mn = mx->a.as<ir::Min>()) return mn->a;
  }
  return e;
}

}  // namespace

Result<TaskPeer> MatmulPeer(const Workload& w, bool dense, const IsWeight& is_weight) {
  const ComputeStage* acc = FirstReduction(w);
  if (acc == nullptr || acc->reduce != ReduceKind::kSum || acc->reduce_axes.size() != 1 || acc->axes.size() < 2) {
    return Status::Unimplemented("no sum over one axis: not a matmul as the importer writes one");
  }
  std::vector<const ir::Load*> loads = InputLoads(w, acc->body);
  if (loads.size() != 2) return Status::Unimplemented("a matmul reads two inputs");
  const size_t rank = acc->axes.size();
  const ir::Var& i = acc->axes[rank - 2];
  const ir::Var& j = acc->axes[rank - 1];
  const ir::Var& k = acc->reduce_axes[0];
  auto last_two = [&](const ir::Load* l, const ir::Var& a, const ir::Var& b) {
    size_t n = l->indices.size();
    return n >= 2 && IsVar(l->indices[n - 2], a) && IsVar(l->indices[n - 1], b);
  };
  const ir::Load* al = nullptr;
  const ir::Load* bl = nullptr;
  TaskPeer p;
  p.kind = PeerKind::kMatmul;
  for (const ir::Load* l : loads) {
    if (last_two(l, i, k) || last_two(l, k, i)) {
      al = l;
      p.src_transposed = last_two(l, k, i);
    } else if (last_two(l, k, j) || last_two(l, j, k)) {
      bl = l;
      p.weights_transposed = last_two(l, j, k);
    }
  }
  if (al == nullptr || bl == nullptr) return Status::Unimplemented("operands not read as A[.., i, k] and B[.., k, j]");
  p.src = al->buffer->name;
  p.weights = bl->buffer->name;
  const std::vector<int64_t>& out = acc->output->shape;
  int64_t m = out[rank - 2], n = out[rank - 1], kk = acc->reduce_extents[0];
  auto logical = [&](const ir::Load* l, bool transposed) {
    std::vector<int64_t> dims = PadRank(l->buffer->shape, rank);
    if (transposed) std::swap(dims[rank - 2], dims[rank - 1]);
    return dims;
  };
  TF_RETURN_IF_ERROR(ReadEpilogue(w, *acc, &p));
  if (dense) {
    // One GEMM: A's leading dims are the output's rows, read in order.
    if (bl->buffer->shape.size() != 2 || !is_weight(p.weights)) {
      return Status::Unimplemented("a dense layer's weights are one constant matrix");
    }
    for (size_t d = 0; d + 2 < al->indices.size(); ++d) {
      if (al->indices.size() != rank || !IsVar(al->indices[d], acc->axes[d])) {
        return Status::Unimplemented("a dense layer's activation does not hold the output's rows in order");
      }
    }
    if (p.src_transposed && rank != 2) return Status::Unimplemented("a transposed activation of more than 2 dims");
    int64_t rows = m;
    for (size_t d = 0; d + 2 < rank; ++d) rows *= out[d];
    p.src_dims = {rows, kk};
    p.weights_dims = {kk, n};
    p.dst_dims = {rows, n};
    p.weights_constant = true;
    for (PostOp& op : p.post_ops) {
      if (op.kind != PostOp::Kind::kBinary) continue;
      TF_ASSIGN_OR_RETURN(op.dims, Flatten2D(op.dims, out));
    }
    FoldBias(is_weight, {1, n}, &p);
    return p;
  }
  p.src_dims = logical(al, p.src_transposed);
  p.weights_dims = logical(bl, p.weights_transposed);
  p.dst_dims = out;
  p.weights_constant = is_weight(p.weights);
  return p;
}

Result<TaskPeer> PoolPeer(const Workload& w) {
  const ComputeStage* acc = FirstReduction(w);
  if (acc == nullptr || acc->output->shape.size() != 4 || acc->reduce_axes.size() != 2 ||
      (acc->reduce != ReduceKind::kMax && acc->reduce != ReduceKind::kSum)) {
    return Status::Unimplemented("no 4-D max or sum over a 2-D window: not a pooling as the importer writes one");
  }
  std::vector<const ir::Load*> loads = InputLoads(w, acc->body);
  if (loads.size() != 1 || loads[0]->indices.size() != 4) return Status::Unimplemented("a pooling reads one 4-D input");
  const ir::Load* xl = loads[0];
  TF_ASSIGN_OR_RETURN(WindowIndex h, ReadWindowIndex(Unclamped(xl->indices[2]), acc->axes[2].get(), acc->reduce_axes[0].get()));
  TF_ASSIGN_OR_RETURN(WindowIndex wd, ReadWindowIndex(Unclamped(xl->indices[3]), acc->axes[3].get(), acc->reduce_axes[1].get()));
  if (h.dilation != 1 || wd.dilation != 1) return Status::Unimplemented("dilated pooling");
  TaskPeer p;
  p.kind = PeerKind::kPooling;
  p.src = xl->buffer->name;
  p.src_dims = xl->buffer->shape;
  p.dst_dims = acc->output->shape;
  p.kernel = {acc->reduce_extents[0], acc->reduce_extents[1]};
  p.strides = {h.stride, wd.stride};
  p.pad_begin = {h.pad, wd.pad};
  p.pad_end = {PadEnd(p.src_dims[2], p.dst_dims[2], p.kernel[0], h), PadEnd(p.src_dims[3], p.dst_dims[3], p.kernel[1], wd)};
  bool padded = h.pad || wd.pad || p.pad_end[0] || p.pad_end[1];
  const ComputeStage& last = w.stages.back();
  if (acc->reduce == ReduceKind::kMax) {
    p.algorithm = "max";
    TF_RETURN_IF_ERROR(ReadEpilogue(w, *acc, &p));
    return p;
  }
  // Average: the sum times 1 / (R * S) counts padded taps (or there are
  // none); divided by the taps inside the input it excludes them.
  if (&last == acc) return Status::Unimplemented("a sum pooling without its division");
  CoreMatcher is_load = LoadOfStage(*acc, last);
  double taps = double(p.kernel[0] * p.kernel[1]);
  CoreMatcher is_core = [&](const ir::Expr& e) {
    if (const auto* mul = e.as<ir::Mul>(); mul && is_load(mul->a)) {
      const auto* c = mul->b.as<ir::FloatImm>();
      if (c == nullptr || std::fabs(c->value * taps - 1) > 1e-6) return false;
      p.algorithm = padded ? "avg_include_padding" : "avg_exclude_padding";
      return true;
    }
    if (const auto* div = e.as<ir::Div>(); div && is_load(div->a) && div->b.as<ir::Cast>()) {
      p.algorithm = "avg_exclude_padding";
      return true;
    }
    return false;
  };
  TF_ASSIGN_OR_RETURN(p.post_ops, ReadPostOps(w, last, is_core));
  return p;
}

Result<TaskPeer> ReducePeer(const Workload& w) {
  const ComputeStage* acc = FirstReduction(w);
  if (acc == nullptr || &w.stages.front() != acc) return Status::Unimplemented("not a reduction as the importer writes one");
  std::vector<const ir::Load*> loads = InputLoads(w, acc->body);
  if (loads.size() != 1 || !acc->body.as<ir::Load>()) return Status::Unimplemented("a reduction of an expression");
  const ir::Load* xl = loads[0];
  TaskPeer p;
  p.kind = PeerKind::kReduction;
  p.src = xl->buffer->name;
  p.src_dims = xl->buffer->shape;
  p.dst_dims = p.src_dims;
  int64_t count = 1;
  for (size_t d = 0; d < xl->indices.size(); ++d) {
    const auto* v = xl->indices[d].as<ir::Variable>();
    for (size_t r = 0; v != nullptr && r < acc->reduce_axes.size(); ++r) {
      if (acc->reduce_axes[r].get() == v) {
        p.dst_dims[d] = 1;
        count *= p.src_dims[d];
      }
    }
  }
  switch (acc->reduce) {
    case ReduceKind::kSum: p.algorithm = "sum"; break;
    case ReduceKind::kMax: p.algorithm = "max"; break;
    case ReduceKind::kMin: p.algorithm = "min"; break;
    case ReduceKind::kProd: p.algorithm = "mul"; break;
    case ReduceKind::kNone: return Status::Internal("a reduction stage without a reduction");
  }
  const ComputeStage& last = w.stages.back();
  if (&last == acc) return p;
  CoreMatcher is_load = LoadOfStage(*acc, last);
  CoreMatcher is_core = [&](const ir::Expr& e) {
    if (is_load(e)) return true;
    const auto* mul = e.as<ir::Mul>();
    const auto* c = mul ? mul->b.as<ir::FloatImm>() : nullptr;
    if (c == nullptr || !is_load(mul->a) || p.algorithm != "sum" || std::fabs(c->value * double(count) - 1) > 1e-6) {
      return false;
    }
    p.algorithm = "mean";
    return true;
  };
  TF_ASSIGN_OR_RETURN(p.post_ops, ReadPostOps(w, last, is_core));
  if (!p.post_ops.empty() && last.output->shape.size() != p.dst_dims.size()) {
    return Status::Unimplemented("post-ops after a reduction that drops its reduced dims");
  }
  return p;
}

}  // namespace tunefarm::bench::peer_internal
