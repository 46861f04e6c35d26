// Per-store feature rows: one walk over the lowered IR (features.h).
//
// The walk keeps the loop stack and the allocations in scope; at each Store
// it counts the arithmetic of the stored value and of all indices, describes
// the annotated loops around it, and analyses every buffer the store touches
// (features_access.cpp). Rows are raw counts; pooling and log scaling happen
// in features_pool.cpp.
#include <algorithm>
#include <cmath>

#include "features_internal.h"
#include "shared_bank_conflicts.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::costmodel::detail {

using namespace ir;

namespace {

Binding ClassifyTag(const std::string& tag) {
  // "blockIdx.x", "threadIdx.y", "vthread": the first letter and the axis
  // letter decide, so no string comparison per store.
  if (tag.empty()) return Binding::kNone;
  if (tag[0] == 'v') return Binding::kVThread;
  char axis = tag.back();
  int a = axis == 'x' ? 0 : axis == 'y' ? 1 : 2;
  if (tag[0] == 'b') return static_cast<Binding>(static_cast<int>(Binding::kBlockX) + a);
  if (tag[0] == 't') return static_cast<Binding>(static_cast<int>(Binding::kThreadX) + a);
  return Binding::kNone;
}

// The IR is a tree of separately allocated nodes, and a search scores
// batches of programs lowered earlier, so most nodes are cache misses the
// first time extraction reaches them (about half of extraction time).
// Fetching a node's siblings before descending into the first one overlaps
// those misses instead of paying them one after another.
template <typename Ref>
inline void Prefetch(const Ref& r) {
  __builtin_prefetch(r.node().get());
}

bool IsMathCall(CallOp op) {
  switch (op) {
    case CallOp::kAbs:
    case CallOp::kFloor:
    case CallOp::kCeil: return false;
    default: return true;
  }
}

}  // namespace

// ------------------------------------------------------------------ op counting

void OpCounter::Count(const Expr& e) {
  if (!e.defined()) return;
  const double lanes = e.dtype().lanes;
  auto bump = [&](StoreFeature float_slot, StoreFeature int_slot, DataType t) {
    if (t.is_float()) {
      counts[float_slot] += lanes;
    } else {
      counts[int_slot] += lanes;
    }
  };
  switch (e.kind()) {
    case IRNodeKind::kIntImm:
    case IRNodeKind::kFloatImm:
    case IRNodeKind::kVariable: return;
    case IRNodeKind::kAdd:
    case IRNodeKind::kSub: {
      const auto* a = e.kind() == IRNodeKind::kAdd ? &e.as<Add>()->a : &e.as<Sub>()->a;
      const auto* b = e.kind() == IRNodeKind::kAdd ? &e.as<Add>()->b : &e.as<Sub>()->b;
      Prefetch(*b);
      bump(kFloatAddSub, kIntAddSub, e.dtype());
      if (a->kind() == IRNodeKind::kMul || b->kind() == IRNodeKind::kMul) bump(kFloatMad, kIntMad, e.dtype());
      Count(*a);
      Count(*b);
      return;
    }
#define TF_COUNT_BINARY(K, FSLOT, ISLOT)              \
  case IRNodeKind::k##K: {                            \
    const auto* op = e.as<K>();                       \
    Prefetch(op->b);                                  \
    bump(FSLOT, ISLOT, op->a.dtype());                \
    Count(op->a);                                     \
    Count(op->b);                                     \
    return;                                           \
  }
      TF_COUNT_BINARY(Mul, kFloatMul, kIntMul)
      TF_COUNT_BINARY(Div, kFloatDivMod, kIntDivMod)
      TF_COUNT_BINARY(Mod, kFloatDivMod, kIntDivMod)
      TF_COUNT_BINARY(Min, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(Max, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(EQ, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(NE, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(LT, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(LE, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(GT, kFloatCmp, kIntCmp)
      TF_COUNT_BINARY(GE, kFloatCmp, kIntCmp)
#undef TF_COUNT_BINARY
    case IRNodeKind::kAnd: {
      const auto* op = e.as<And>();
      counts[kBoolOp] += lanes;
      Count(op->a);
      Count(op->b);
      return;
    }
    case IRNodeKind::kOr: {
      const auto* op = e.as<Or>();
      counts[kBoolOp] += lanes;
      Count(op->a);
      Count(op->b);
      return;
    }
    case IRNodeKind::kNot:
      counts[kBoolOp] += lanes;
      Count(e.as<Not>()->a);
      return;
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      counts[kSelectOp] += lanes;
      Count(op->condition);
      Count(op->true_value);
      Count(op->false_value);
      return;
    }
    case IRNodeKind::kCast:
      counts[kCastOp] += lanes;
      Count(e.as<Cast>()->value);
      return;
    case IRNodeKind::kLoad: {
      const auto* op = e.as<Load>();
      loads.push_back(op);
      for (const Expr& i : op->indices) Prefetch(i);
      for (const Expr& i : op->indices) Count(i);
      return;
    }
    case IRNodeKind::kCall: {
      const auto* op = e.as<Call>();
      bool math = IsMathCall(op->op);
      if (e.dtype().is_float()) {
        counts[math ? kFloatMath : kFloatOtherCall] += lanes;
      } else {
        counts[math ? kIntMath : kIntOtherCall] += lanes;
      }
      for (const Expr& a : op->args) Count(a);
      return;
    }
    TF_STMT_KIND_CASES  // not expressions
      return;
  }
}

// --------------------------------------------------------------------- walker

void Extractor::Run(const PrimFunc& f) {
  rows_.clear();
  allocs_.clear();
  touched_.clear();
  num_allocs_ = 0;
  total_unique_bytes_ = 0;
  double_buffer_depth_ = 0;
  staged_.clear();
  double_buffer_bytes_ = 0;
  Walk(f.body);
}

void Extractor::Walk(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case IRNodeKind::kFor: {
      const auto* op = s.as<For>();
      Prefetch(op->body);
      Prefetch(op->extent);
      Prefetch(op->min);
      // Index expressions reach this loop's variable node through every use.
      __builtin_prefetch(op->loop_var.get());
      LoopInfo l;
      l.var = op->loop_var.get();
      const int64_t* mn = ConstInt(op->min);
      const int64_t* ext = ConstInt(op->extent);
      l.min = mn ? *mn : 0;
      l.extent = ext ? std::max<int64_t>(*ext, 1) : 1;
      l.kind = op->kind;
      if (op->kind == ForKind::kThreadBinding) l.binding = ClassifyTag(op->thread_tag);
      bool double_buffer = false;
      if (!op->annotations.empty()) {
        auto it = op->annotations.find("pragma_auto_unroll_max_step");
        if (it != op->annotations.end()) l.auto_unroll = it->second;
        auto db = op->annotations.find(kDoubleBufferAnnotation);
        double_buffer = db != op->annotations.end() && db->second != 0;
      }
      loops_.Push(l);
      double_buffer_depth_ += double_buffer;
      Walk(op->body);
      double_buffer_depth_ -= double_buffer;
      loops_.Pop();
      return;
    }
    case IRNodeKind::kStore: OnStore(s.as<Store>()); return;
    case IRNodeKind::kAllocate: {
      const auto* op = s.as<Allocate>();
      double outer = 1;
      for (int d = 0; d < loops_.depth(); ++d) outer *= static_cast<double>(loops_.at(d).extent);
      allocs_.push_back({op->buffer.get(), outer});
      ++num_allocs_;
      Walk(op->body);
      return;
    }
    case IRNodeKind::kLetStmt: Walk(s.as<LetStmt>()->body); return;
    case IRNodeKind::kIfThenElse: {
      const auto* op = s.as<IfThenElse>();
      Walk(op->then_case);
      Walk(op->else_case);
      return;
    }
    case IRNodeKind::kSeqStmt:
      for (const Stmt& c : s.as<SeqStmt>()->seq) Prefetch(c);
      for (const Stmt& c : s.as<SeqStmt>()->seq) Walk(c);
      return;
    case IRNodeKind::kBlock: {
      // Not expected after LowerForCodegen; described rather than rejected.
      const auto* op = s.as<Block>();
      Walk(op->init);
      Walk(op->body);
      return;
    }
    // An evaluated expression computes nothing a kernel keeps; expressions are
    // reached through the statements that hold them.
    case IRNodeKind::kEvaluate:
    case IRNodeKind::kBarrier:
    TF_EXPR_KIND_CASES
      return;
  }
}

void Extractor::OnStore(const Store* op) {
  StoreRow& row = rows_.emplace_back();
  row.buffer = op->buffer.get();
  // A store into a shared buffer under a double-buffered loop is a stage
  // LowerForCuda doubles (the fetch of the next tile into registers).
  if (double_buffer_depth_ > 0 && op->buffer->scope == MemoryScope::kShared &&
      std::find(staged_.begin(), staged_.end(), op->buffer.get()) == staged_.end()) {
    staged_.push_back(op->buffer.get());
    double_buffer_bytes_ += static_cast<double>(op->buffer->size_bytes());
  }
  float* v = row.values.data();
  const int depth = loops_.depth();

  double trip = 1;
  for (int d = 0; d < depth; ++d) trip *= static_cast<double>(loops_.at(d).extent);

  // Arithmetic of the value and of every index (loads found on the way).
  for (const Expr& i : op->indices) Prefetch(i);
  counter_.Reset();
  counter_.Count(op->value);
  for (const Expr& i : op->indices) counter_.Count(i);
  for (int k = kFloatMad; k <= kCastOp; ++k) v[k] = static_cast<float>(counter_.counts[k] * trip);
  const double float_ops_per_iter = counter_.counts[kFloatAddSub] + counter_.counts[kFloatMul] +
                                    counter_.counts[kFloatDivMod] + counter_.counts[kFloatCmp] +
                                    counter_.counts[kFloatMath] + counter_.counts[kFloatOtherCall];

  // Loops whose variable indexes the stored element are spatial for this store.
  uint64_t spatial = 0;
  for (const Expr& i : op->indices) spatial |= LoopVarMask(i, loops_);
  DescribeLoops(spatial, v);

  AnalyzeAccesses(op, trip, float_ops_per_iter, v);
  DescribeNest(spatial, trip, float_ops_per_iter, row.nest.data());
  if (v[kIsGpu] != 0.f) DescribeSharedLoads(row.gpu.data());

  for (const AllocRecord& a : allocs_) {
    if (a.buffer != op->buffer.get()) continue;
    double size = static_cast<double>(a.buffer->size_bytes());
    v[kAllocSize] = static_cast<float>(size);
    v[kAllocProd] = static_cast<float>(size * a.outer_prod);
    v[kAllocOuterProd] = static_cast<float>(a.outer_prod);
    v[kAllocLocal] = a.buffer->scope != MemoryScope::kGlobal ? 1.f : 0.f;
  }

  int64_t auto_unroll = 0;
  for (int d = 0; d < depth; ++d) auto_unroll = std::max(auto_unroll, loops_.at(d).auto_unroll);
  v[kOuterProd] = static_cast<float>(trip);
  v[kNumLoops] = static_cast<float>(depth);
  v[kAutoUnrollMaxStep] = static_cast<float>(auto_unroll);
}

void Extractor::DescribeSharedLoads(float* gpu) const {
  double loads = 0, bytes = 0, vector_bytes = 0, ways_bytes = 0;
  int min_lanes = 0, max_lanes = 0, max_ways = 0, max_scalar_ways = 0;
  for (const Load* load : counter_.loads) {
    if (load->buffer->scope != MemoryScope::kShared) continue;
    const auto est = AnalyzeSharedAccess(*load->buffer, load->indices, loops_);
    if (!est) continue;
    const double b = load->buffer->dtype.bytes();
    loads += 1;
    bytes += b;
    if (est->lanes >= 2) vector_bytes += b;
    ways_bytes += b * est->ways;
    min_lanes = min_lanes == 0 ? est->lanes : std::min(min_lanes, est->lanes);
    max_lanes = std::max(max_lanes, est->lanes);
    max_ways = std::max(max_ways, est->ways);
    max_scalar_ways = std::max(max_scalar_ways, est->scalar_ways);
  }
  if (loads == 0) return;
  gpu[kSharedLoads] = static_cast<float>(loads);
  gpu[kSharedLoadBytes] = static_cast<float>(bytes);
  gpu[kSharedVectorFraction] = static_cast<float>(vector_bytes / bytes);
  gpu[kSharedMinLanes] = static_cast<float>(min_lanes);
  gpu[kSharedMaxLanes] = static_cast<float>(max_lanes);
  gpu[kBankConflictMax] = static_cast<float>(max_ways);
  gpu[kBankConflictMean] = static_cast<float>(ways_bytes / bytes);
  gpu[kBankConflictScalarMax] = static_cast<float>(max_scalar_ways);
}

void Extractor::DescribeLoops(uint64_t spatial_mask, float* v) const {
  const int depth = std::min(loops_.depth(), kMaxDepth);
  // Rank of each loop among the spatial (or reduction) loops: inner, middle, outer.
  int first_spatial = -1, last_spatial = -1, first_reduce = -1, last_reduce = -1;
  for (int d = 0; d < depth; ++d) {
    bool s = (spatial_mask >> d) & 1;
    int& first = s ? first_spatial : first_reduce;
    int& last = s ? last_spatial : last_reduce;
    if (first < 0) first = d;
    last = d;
  }
  auto position = [&](int d) {
    bool s = (spatial_mask >> d) & 1;
    int first = s ? first_spatial : first_reduce, last = s ? last_spatial : last_reduce;
    int base = s ? static_cast<int>(LoopPosition::kInnerSpatial) : static_cast<int>(LoopPosition::kInnerReduce);
    return d == last ? base : d == first ? base + 2 : base + 1;
  };
  auto describe = [&](ForKind kind, int num_slot, int pos_slot) {
    double num = 0, prod = 1, innermost = 0;
    int pos = -1;
    for (int d = 0; d < depth; ++d) {
      const LoopInfo& l = loops_.at(d);
      if (l.kind != kind) continue;
      num += 1;
      prod *= static_cast<double>(l.extent);
      innermost = static_cast<double>(l.extent);
      int p = position(d);
      pos = pos < 0 ? p : (pos == p ? p : static_cast<int>(LoopPosition::kMixed));
    }
    v[num_slot] = static_cast<float>(num);
    v[num_slot + 1] = num > 0 ? static_cast<float>(prod) : 0.f;
    v[num_slot + 2] = static_cast<float>(innermost);
    v[pos_slot + (pos < 0 ? 0 : pos)] = 1.f;
  };
  describe(ForKind::kVectorized, kVecNum, kVecPos);
  describe(ForKind::kUnrolled, kUnrollNum, kUnrollPos);
  describe(ForKind::kParallel, kParallelNum, kParallelPos);

  for (int d = 0; d < depth; ++d) {
    const LoopInfo& l = loops_.at(d);
    if (l.binding == Binding::kNone) continue;
    v[kIsGpu] = 1.f;
    float& slot = v[kBlockIdxX + static_cast<int>(l.binding)];
    slot = std::max(slot, 1.f) * static_cast<float>(l.extent);
  }
}

}  // namespace tunefarm::costmodel::detail
