// The extractor behind ExtractFeatures (internal to costmodel/).
//
// One Extractor walks one PrimFunc at a time and keeps its scratch vectors
// between programs, so that extracting features for a batch allocates almost
// nothing after the first program. Not thread-safe; use one per thread.
#pragma once

#include <array>
#include <vector>

#include "features_index.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel::detail {

// Counts the arithmetic of an expression tree by kind (StoreFeature slots
// kFloatMad..kCastOp), per iteration, and collects the loads it meets.
struct OpCounter {
  std::array<double, kCastOp + 1> counts{};
  std::vector<const ir::Load*> loads;
  void Reset() {
    counts.fill(0);
    loads.clear();
  }
  void Count(const ir::Expr& e);
};

class Extractor {
 public:
  void Run(const ir::PrimFunc& f);
  const std::vector<StoreRow>& rows() const { return rows_; }
  int num_allocs() const { return num_allocs_; }
  // Unique bytes summed over every buffer block of every store (program feature).
  double total_unique_bytes() const { return total_unique_bytes_; }
  // Bytes of the distinct shared buffers stored under a double-buffered
  // loop (software_pipeline_double_buffer): the stages LowerForCuda doubles.
  double double_buffer_bytes() const { return double_buffer_bytes_; }
  bool double_buffered() const { return !staged_.empty(); }

 private:
  struct AllocRecord {
    const ir::BufferNode* buffer;
    double outer_prod;
  };
  // One buffer's accesses within the current store.
  struct BufferAccess {
    // User-provided so that emplace_back() does not zero the memo arrays
    // (~550 bytes per buffer per store); AnalyzeAccesses fills what it reads.
    BufferAccess() {}  // NOLINT(modernize-use-equals-default)
    const ir::BufferNode* buffer = nullptr;
    bool read = false, write = false;
    int num_accesses = 0;
    size_t first_form = 0, num_forms = 0;  // its IndexForms in forms_ (num_accesses x rank)
    uint64_t mask = 0;                     // loops any of its indices use
    double bytes = 0;                      // sort key
    std::array<float, kBufferFeatures> features{};
    // Memoized per loop level: region elements with the loops at depth >=
    // level varying (filled for every level up to the depth), and the
    // element stride along each loop (negative: not computed yet).
    std::array<double, kMaxDepth + 1> region;
    mutable std::array<double, kMaxDepth> stride;
  };

  void Walk(const ir::Stmt& s);
  void OnStore(const ir::Store* op);
  void DescribeLoops(uint64_t spatial_mask, float* v) const;
  // GpuFeature shared-load entries of the current store from counter_'s
  // loads (shared_bank_conflicts.h); nothing outside thread-bound loops.
  void DescribeSharedLoads(float* gpu) const;
  // Buffer blocks and the arithmetic-intensity curve (features_access.cpp).
  void AnalyzeAccesses(const ir::Store* op, double trip, double float_ops_per_iter, float* v);
  // Elements of `a`'s region with the loops at depth >= level varying
  // (ComputeRegion evaluates, Region reads the memo when it can).
  double ComputeRegion(const BufferAccess& a, int level) const;
  double Region(const BufferAccess& a, int level) const {
    return level <= kMaxDepth ? a.region[static_cast<size_t>(level)] : ComputeRegion(a, level);
  }
  // Elements `a` moves when loop d advances (smallest over its accesses; 0: invariant).
  double StrideAlong(const BufferAccess& a, int d) const;
  // NestFeature block of the current store (features_nest.cpp); after AnalyzeAccesses.
  void DescribeNest(uint64_t spatial_mask, double trip, double float_ops_per_iter, float* nest) const;

  LoopStack loops_;
  std::vector<StoreRow> rows_;
  std::vector<AllocRecord> allocs_;
  std::vector<const ir::BufferNode*> touched_;  // buffers accessed by earlier stores
  int num_allocs_ = 0;
  double total_unique_bytes_ = 0;
  int double_buffer_depth_ = 0;  // double-buffered loops around the statement being visited
  std::vector<const ir::BufferNode*> staged_;  // shared buffers stored under them (distinct)
  double double_buffer_bytes_ = 0;
  OpCounter counter_;
  struct RawAccess {
    const ir::BufferNode* buffer;
    const std::vector<ir::Expr>* indices;
    bool write;
  };
  std::vector<RawAccess> raw_;
  std::vector<BufferAccess> buffers_;
  std::vector<int> order_;  // buffers_ by bytes accessed, largest first (stable)
  std::vector<IndexForm> forms_;
  std::vector<double> level_bytes_;
  std::vector<int64_t> widths_;       // one index's width per level (scratch)
  std::vector<double> access_elems_;  // one access's region per level (scratch)
};

}  // namespace tunefarm::costmodel::detail
