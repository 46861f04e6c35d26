// Reading a PrimFunc for the CPU sketch rules (sketch_cpu_analysis.h).
#include "sketch_cpu_analysis.h"

#include <algorithm>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"
#include "tunefarm/compiler/schedule/iter_var_reads.h"

namespace tunefarm::tuner::sketch_analysis {

using namespace ir;

std::vector<BlockInfo> Analyze(const PrimFunc& f) {
  std::vector<BlockInfo> out;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kBlock) return;
    const auto* b = static_cast<const Block*>(n);
    out.push_back(BlockInfo{b, b->body.as<Store>(), b->init.defined(), {}});
  });
  for (BlockInfo& producer : out) {
    if (!producer.store) continue;
    for (const BlockInfo& consumer : out) {
      if (consumer.block == producer.block) continue;
      bool reads = false;
      PostOrderVisit(consumer.block->body, [&](const IRNode* n) {
        if (n->kind == IRNodeKind::kLoad && static_cast<const Load*>(n)->buffer.get() == producer.store->buffer.get()) {
          reads = true;
        }
      });
      if (reads) producer.consumers.push_back(consumer.block->name);
    }
  }
  return out;
}

bool IsParam(const PrimFunc& f, const BufferNode* b) {
  for (const Buffer& p : f.params) {
    if (p.get() == b) return true;
  }
  return false;
}

bool StoresAtIterVars(const Block* b, const Store* s) {
  if (!s || s->indices.size() != b->iter_vars.size()) return false;
  for (size_t d = 0; d < s->indices.size(); ++d) {
    if (s->indices[d].as<Variable>() != b->iter_vars[d].var.get()) return false;
  }
  return true;
}

bool ReadsAtIterVars(const Block* b, const BufferNode* buffer) {
  // The primitives' own test, so the consumer picked is one they move.
  return sched::ReadsAtIterVars(b, buffer);
}

namespace {

// The coefficient of `v` in `index` when the index is linear in it (0 when
// it does not use v), else 0: v inside a division or a product is no stride.
int64_t LinearCoefficient(const Expr& index, const Variable* v) {
  int64_t coefficient = 0;
  const bool linear = Linearize(index, 1, [&](const Expr& term, int64_t scale) {
    if (term.as<Variable>() == v) {
      coefficient += scale;
      return true;
    }
    return !UsesVar(term, v);
  });
  return linear ? coefficient : 0;
}

}  // namespace

ReductionShape DescribeReduction(const Block* block, const Store* store) {
  ReductionShape shape;
  std::vector<const Variable*> spatial_vars;
  for (const IterVar& iv : block->iter_vars) {
    shape.kinds.push_back(iv.kind);
    shape.iterations *= iv.extent;
    if (iv.kind == IterKind::kSpatial) {
      shape.spatial_extents.push_back(iv.extent);
      spatial_vars.push_back(iv.var.get());
    }
  }
  shape.stores_at_iter_vars = store && store->indices.size() == spatial_vars.size();
  for (size_t d = 0; shape.stores_at_iter_vars && d < spatial_vars.size(); ++d) {
    shape.stores_at_iter_vars = store->indices[d].as<Variable>() == spatial_vars[d];
  }
  shape.dot_reduce_axis = DotProductReduceAxis(block, store);
  shape.dot_dims = DotProductDims(block, store, shape.dot_reduce_axis);
  shape.strided_inputs.resize(spatial_vars.size());
  shape.constant_rows.resize(spatial_vars.size());
  shape.class_stride.assign(spatial_vars.size(), 0);
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kMod) return;
    const auto* mod = static_cast<const Mod*>(n);
    const auto* divisor = mod->b.as<IntImm>();
    if (!divisor || divisor->value < 2) return;
    for (size_t a = 0; a < spatial_vars.size(); ++a) {
      if (shape.class_stride[a] == 0 && shape.spatial_extents[a] % divisor->value == 0 &&
          UsesVar(mod->a, spatial_vars[a])) {
        shape.class_stride[a] = divisor->value;
      }
    }
  });
  shape.reused.assign(spatial_vars.size(), false);
  // Read indices follow the first-use order the cache_read primitive uses.
  std::vector<const BufferNode*> reads;
  PostOrderVisit(block->body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const auto* l = static_cast<const Load*>(n);
    if (store && l->buffer.get() == store->buffer.get()) return;
    auto it = std::find(reads.begin(), reads.end(), l->buffer.get());
    int read_index = int(it - reads.begin());
    if (it == reads.end()) {
      reads.push_back(l->buffer.get());
      shape.read_constant.push_back(l->buffer->constant);
      shape.read_elements.push_back(l->buffer->num_elements());
      shape.direct.emplace_back(spatial_vars.size(), false);
      shape.uses.emplace_back(spatial_vars.size(), false);
      shape.strided_by.emplace_back(spatial_vars.size(), std::make_pair(-1, int64_t(0)));
    }
    // An input some dimension of which is the variable itself gives each
    // value of the axis its own elements; any other use (none, or inside
    // an expression: a transposed convolution's (h + P - r) / 2) may share.
    for (size_t a = 0; a < spatial_vars.size(); ++a) {
      bool own_elements = false;
      for (const Expr& index : l->indices) own_elements = own_elements || index.as<Variable>() == spatial_vars[a];
      if (!own_elements) shape.reused[a] = true;
      if (own_elements) shape.direct[size_t(read_index)][a] = true;
      for (const Expr& index : l->indices) {
        if (UsesVar(index, spatial_vars[a])) shape.uses[size_t(read_index)][a] = true;
      }
      auto& strided = shape.strided_by[size_t(read_index)][a];
      for (size_t d = 0; d < l->indices.size() && strided.first < 0; ++d) {
        const int64_t s = LinearCoefficient(l->indices[d], spatial_vars[a]);
        if (s >= 2) strided = {int(d), s};
      }
    }
    const bool constant_matrix = l->buffer->constant && l->indices.size() >= 2;
    const size_t last = constant_matrix ? l->indices.size() - 1 : 0;
    for (size_t a = 0; constant_matrix && a < spatial_vars.size(); ++a) {
      auto& list = shape.constant_rows[a];
      if (l->indices[last].as<Variable>() == spatial_vars[a] &&
          std::find(list.begin(), list.end(), std::make_pair(read_index, int(last))) == list.end()) {
        list.push_back({read_index, int(last)});
      }
    }
    for (size_t d = 0; d + 1 < l->indices.size(); ++d) {
      for (size_t a = 0; a < spatial_vars.size(); ++a) {
        if (l->indices[d].as<Variable>() != spatial_vars[a]) continue;
        auto& list = shape.strided_inputs[a];
        if (std::find(list.begin(), list.end(), std::make_pair(read_index, int(d))) == list.end()) {
          list.push_back({read_index, int(d)});
        }
      }
    }
  });
  return shape;
}

}  // namespace tunefarm::tuner::sketch_analysis
