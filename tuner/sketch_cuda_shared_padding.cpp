// Padding of staged operands' rows against shared-memory bank conflicts (the
// header says what and why).
#include "sketch_cuda_shared_padding.h"

#include <algorithm>

#include "sketch_cuda_operand_layout.h"
#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::tuner {

using namespace ir;

namespace {

const Block* FindBlock(const PrimFunc& f, const std::string& name) {
  const Block* found = nullptr;
  PostOrderVisit(f.body, [&](const IRNode* n) {
    if (n->kind == IRNodeKind::kBlock && static_cast<const Block*>(n)->name == name) found = static_cast<const Block*>(n);
  });
  return found;
}

// The largest of 4, 2 and 1 that divides n.
int64_t PowerOfTwoPart(int64_t n) {
  for (int64_t w : {4, 2}) {
    if (n % w == 0) return w;
  }
  return 1;
}

// The banks are 4 bytes wide: only a copy of 4-byte elements has its row
// stride in banks equal to its stride in elements.
constexpr int kBankBytes = 4;

// The narrowest row padded: one 16-byte vector of 4-byte elements.
constexpr int64_t kMinRowElements = 4;

}  // namespace

int64_t PaddingVectorWidth(const Block& block, const std::string& copy_buffer, size_t rank, int64_t row_elements,
                           int64_t fetch_lanes, bool fetch_guarded, const std::vector<int64_t>& runs) {
  // Rows narrower than a 16-byte vector: several already share a bank row,
  // and the fetch's vectors (or loads nvcc merges) run across them.
  if (row_elements < kMinRowElements) return 0;
  // The fused fetch's vectors cross rows: any padding would split them.
  if (row_elements % fetch_lanes != 0) return 0;
  // A guarded fetch is scalar stores in the CUDA C: nvcc merges them into
  // vectors where the index is visibly aligned, which a padded row's is not.
  if (fetch_lanes > 1 && fetch_guarded) return 0;
  const int axis = IndexingSpatialAxis(block, copy_buffer, rank - 1);
  const int64_t compute = axis >= 0 && size_t(axis) < runs.size() ? PowerOfTwoPart(runs[size_t(axis)]) : 4;
  // Rows whose unpadded stride already breaks a vector's alignment never
  // had that vector in the computation: the loads stay narrower either way.
  return std::max(fetch_lanes, std::min(PowerOfTwoPart(row_elements), compute));
}

std::vector<int64_t> ValidRowOffsets(int64_t row_elements, int64_t vector_width, int64_t factor,
                                     const std::vector<int64_t>& offsets) {
  std::vector<int64_t> valid;
  for (int64_t offset : offsets) {
    if (offset <= 0 || offset >= factor || offset % vector_width != 0) continue;
    // The padding StorageAlign adds: the least that takes the stride to offset.
    const int64_t pad = ((offset - row_elements) % factor + factor) % factor;
    if (pad > 0 && std::find(valid.begin(), valid.end(), offset) == valid.end()) valid.push_back(offset);
  }
  return valid;
}

Status PadSharedRows(Schedule& sch, const std::string& block_name, const std::vector<StagedCopy>& copies,
                     const std::vector<std::string>& packed, const std::vector<int64_t>& runs, int64_t factor,
                     const std::vector<int64_t>& offsets) {
  for (const StagedCopy& staged : copies) {
    // Read afresh per copy: padding one copy rewrites the function.
    const Block* block = FindBlock(sch.func(), block_name);
    if (block == nullptr) return Status::Internal("pad shared rows: no block " + block_name);
    TF_ASSIGN_OR_RETURN(std::string copy_name, sch.BlockName(staged.copy));
    const Block* copy_block = FindBlock(sch.func(), copy_name);
    if (copy_block == nullptr || copy_block->body.kind() != IRNodeKind::kStore) continue;
    const Buffer& buffer = copy_block->body.as<Store>()->buffer;
    if (buffer->scope != MemoryScope::kShared || buffer->dtype.bytes() != kBankBytes || buffer->dtype.lanes != 1) continue;
    if (std::find(packed.begin(), packed.end(), buffer->name) != packed.end()) continue;
    const size_t rank = buffer->shape.size();
    if (rank < 2) continue;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d) rows *= buffer->shape[d];
    if (rows < 2) continue;  // one row: no other row to move to other banks
    const int64_t row_elements = buffer->shape.back();
    const int64_t width = PaddingVectorWidth(*block, buffer->name, rank, row_elements, staged.fetch_lanes,
                                             staged.fetch_guarded, runs);
    if (width == 0) continue;
    const std::vector<int64_t> valid = ValidRowOffsets(row_elements, width, factor, offsets);
    if (valid.empty()) continue;
    // Candidate 0 is "no padding", as likely as padding at all.
    std::vector<int64_t> candidates = {0};
    std::vector<double> probs = {1.0};
    for (int64_t offset : valid) {
      candidates.push_back(offset);
      probs.push_back(1.0 / double(valid.size()));
    }
    TF_ASSIGN_OR_RETURN(ValueRV choice, sch.SampleCategorical(candidates, probs));
    if (sch.Get(choice) == 0) continue;
    TF_RETURN_IF_ERROR(sch.StorageAlign(staged.copy, int(rank) - 2, factor, sch.Get(choice)));
  }
  return Status::OK();
}

}  // namespace tunefarm::tuner
