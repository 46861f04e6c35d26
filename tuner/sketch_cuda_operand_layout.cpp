// Packing of staged operands for a thread's register tile (the header says
// what and why).
#include "sketch_cuda_operand_layout.h"

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::tuner {

using namespace ir;

namespace {

// Spatial tile levels whose product is a thread's run: vthread, inner, innermost.
constexpr int kRunLevels[] = {1, 3, 4};

const Block* FindBlock(const PrimFunc& f, const std::string& name) {
  const Block* found = nullptr;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBlock && static_cast<const Block*>(n)->name == name) found = static_cast<const Block*>(n);
  });
  return found;
}

}  // namespace

int IndexingSpatialAxis(const Block& block, const std::string& buffer, size_t dim) {
  int axis = -1;
  bool consistent = true;
  bool seen = false;
  PostOrderVisit(block.body, [&](const IRNode* n) {
    if (n->kind != IRNodeKind::kLoad) return;
    const auto* load = static_cast<const Load*>(n);
    if (load->buffer->name != buffer || dim >= load->indices.size()) return;
    int this_axis = -1;
    int iter_vars = 0;
    int spatial = 0;
    for (const IterVar& iv : block.iter_vars) {
      const bool used = UsesVar(load->indices[dim], iv.var.get());
      // A reduction variable in the index disqualifies the dimension.
      if (used) iter_vars += iv.kind == IterKind::kSpatial ? 1 : 2;
      if (used && iv.kind == IterKind::kSpatial) this_axis = spatial;
      spatial += iv.kind == IterKind::kSpatial;
    }
    if (iter_vars != 1) this_axis = -1;
    if (seen && this_axis != axis) consistent = false;
    axis = this_axis;
    seen = true;
  });
  return consistent ? axis : -1;
}

namespace {

struct Packing {
  BlockRV copy;
  std::string buffer;
  int dim;
  int64_t factor;
};

}  // namespace

Result<std::vector<int64_t>> ThreadRuns(const Schedule& sch, const std::vector<std::vector<LoopRV>>& spatial_tiles) {
  const size_t axes = spatial_tiles.empty() ? 0 : spatial_tiles[0].size();
  std::vector<int64_t> runs(axes, 1);
  for (int level : kRunLevels) {
    if (size_t(level) >= spatial_tiles.size() || spatial_tiles[size_t(level)].size() != axes) {
      return Status::Internal("thread runs: spatial tile level " + std::to_string(level) + " is missing");
    }
    for (size_t a = 0; a < axes; ++a) {
      TF_ASSIGN_OR_RETURN(int64_t extent, sch.LoopExtent(spatial_tiles[size_t(level)][a]));
      runs[a] *= extent;
    }
  }
  return runs;
}

Status PackSharedOperands(Schedule& sch, const std::string& block_name, const std::vector<BlockRV>& copies,
                          const std::vector<int64_t>& runs, std::vector<std::string>* packed) {
  const Block* block = FindBlock(sch.func(), block_name);
  if (block == nullptr) return Status::Internal("pack shared operands: no block " + block_name);
  std::vector<Packing> packings;
  for (BlockRV copy : copies) {
    TF_ASSIGN_OR_RETURN(std::string copy_name, sch.BlockName(copy));
    const Block* copy_block = FindBlock(sch.func(), copy_name);
    if (copy_block == nullptr || copy_block->body.kind() != IRNodeKind::kStore) continue;
    // A cache_read copy writes the buffer named after it.
    const Buffer& buffer = copy_block->body.as<Store>()->buffer;
    if (buffer->scope != MemoryScope::kShared) continue;
    for (size_t d = 0; d + 1 < buffer->shape.size(); ++d) {
      const int axis = IndexingSpatialAxis(*block, buffer->name, d);
      if (axis < 0 || size_t(axis) >= runs.size()) continue;
      for (int64_t factor : {4, 2}) {
        if (runs[size_t(axis)] % factor == 0 && buffer->shape[d] % factor == 0) {
          packings.push_back({copy, buffer->name, int(d), factor});
          break;
        }
      }
    }
  }
  if (packings.empty()) return Status::OK();
  TF_ASSIGN_OR_RETURN(ValueRV pack, sch.SampleCategorical({0, 1}, {1.0, 1.0}));
  if (sch.Get(pack) == 0) return Status::OK();
  // Packing a dimension leaves the others where they are, so each later
  // dimension of the same copy keeps its position.
  for (const Packing& p : packings) {
    TF_RETURN_IF_ERROR(sch.PackLayout(p.copy, p.dim, p.factor, p.dim));
    if (packed) packed->push_back(p.buffer);
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
