// Pooling of per-store rows into one vector per program, and feature names.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <iterator>

#include "features_internal.h"

namespace tunefarm::costmodel {

namespace {

// One extractor per thread: its scratch vectors are reused across programs,
// and feature extraction may run on several search threads at once.
detail::Extractor& ThreadExtractor() {
  thread_local detail::Extractor extractor;
  return extractor;
}

// log2(1 + x) to about 0.001, monotone and continuous: exponent bits plus
// a cubic in the mantissa with exact end points and a positive slope. The
// library log2 of ~300 non-zero pooled values was a tenth of extraction
// time; trees only need the order, and readable dumps need 3 digits.
float Log2p1(double x) {
  if (!(x > 0)) return 0.f;
  // 1 + x = (1 + t) * 2^e with t in [0, 1), read from the bits (frexp is a call).
  const uint64_t bits = std::bit_cast<uint64_t>(1.0 + x);
  const auto e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  const double t = std::bit_cast<double>((bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull) - 1.0;
  return static_cast<float>(e + t * (1.4425 + t * (-0.7213 + t * 0.2788)));
}

}  // namespace

std::vector<StoreRow> ExtractStoreFeatures(const ir::PrimFunc& lowered) {
  detail::Extractor& ex = ThreadExtractor();
  ex.Run(lowered);
  return ex.rows();
}

void ExtractFeatures(const ir::PrimFunc& lowered, float* out) {
  detail::Extractor& ex = ThreadExtractor();
  ex.Run(lowered);
  std::array<double, kStoreFeatures> sum{};
  std::array<double, kStoreFeatures> max{};
  double total_float_ops = 0, main_ops = -1;
  const StoreRow* main = nullptr;
  for (const StoreRow& row : ex.rows()) {
    for (int k = 0; k < kStoreFeatures; ++k) {
      double x = row.values[static_cast<size_t>(k)];
      sum[static_cast<size_t>(k)] += x;
      max[static_cast<size_t>(k)] = std::max(max[static_cast<size_t>(k)], x);
    }
    // The main store: most float ops, ties to the larger trip count.
    double ops = RowFloatOps(row) + row.values[kOuterProd] * 1e-9;
    if (ops > main_ops) {
      main_ops = ops;
      main = &row;
    }
    total_float_ops += RowFloatOps(row);
  }

  for (int k = 0; k < kStoreFeatures; ++k) {
    out[k] = Log2p1(sum[static_cast<size_t>(k)]);
    out[kStoreFeatures + k] = Log2p1(max[static_cast<size_t>(k)]);
    out[2 * kStoreFeatures + k] = main ? Log2p1(main->values[static_cast<size_t>(k)]) : 0.f;
  }
  float* prog = out + 3 * kStoreFeatures;
  prog[kNumStores] = static_cast<float>(ex.rows().size());
  prog[kNumAllocs] = static_cast<float>(ex.num_allocs());
  prog[kTotalFloatOps] = Log2p1(total_float_ops);
  prog[kTotalUniqueBytes] = Log2p1(ex.total_unique_bytes());
  float* nest = out + kNestOffset;
  if (main) {
    std::copy(main->nest.begin(), main->nest.end(), nest);
  } else {
    std::fill(nest, nest + kNestFeatures, 0.f);
  }
}

FeatureVector ExtractFeatures(const ir::PrimFunc& lowered) {
  FeatureVector v(kNumFeatures);
  ExtractFeatures(lowered, v.data());
  return v;
}

FeatureMatrix ExtractFeatureMatrix(const std::vector<const ir::PrimFunc*>& lowered) {
  FeatureMatrix m(static_cast<Eigen::Index>(lowered.size()), kNumFeatures);
  for (size_t i = 0; i < lowered.size(); ++i) ExtractFeatures(*lowered[i], m.row(static_cast<Eigen::Index>(i)).data());
  return m;
}

double RowFloatOps(const StoreRow& row) {
  const auto& v = row.values;
  return static_cast<double>(v[kFloatAddSub]) + v[kFloatMul] + v[kFloatDivMod] + v[kFloatCmp] + v[kFloatMath] +
         v[kFloatOtherCall];
}

// ------------------------------------------------------------------ names

namespace {

const char* const kOpNames[] = {"float_mad", "float_addsub", "float_mul", "float_divmod", "float_cmp",
                                "float_math", "float_other_call", "int_mad", "int_addsub", "int_mul",
                                "int_divmod", "int_cmp", "int_math", "int_other_call", "bool_op",
                                "select_op", "cast_op"};
const char* const kPosNames[] = {"none", "inner_spatial", "middle_spatial", "outer_spatial",
                                 "inner_reduce", "middle_reduce", "outer_reduce", "mixed"};
const char* const kBufferNames[] = {"acc_read", "acc_write", "acc_rw", "bytes", "unique_bytes", "lines",
                                    "unique_lines", "reuse_loop", "reuse_serial", "reuse_none",
                                    "reuse_dist_iter", "reuse_dist_bytes", "reuse_ct", "bytes_per_reuse",
                                    "unique_bytes_per_reuse", "lines_per_reuse", "unique_lines_per_reuse",
                                    "stride"};
const char* const kGpuNames[] = {"is_gpu", "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x",
                                 "threadIdx.y", "threadIdx.z", "vthread"};
const char* const kTailNames[] = {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_local",
                                  "outer_prod", "num_loops", "auto_unroll_max_step"};
const char* const kProgramNames[] = {"num_stores", "num_allocs", "total_float_ops", "total_unique_bytes"};
const char* const kLevelNames[] = {"extent",     "kind",      "reduce",    "stride_out", "stride_in0", "stride_in1",
                                   "contiguous", "broadcast", "strided",   "footprint",  "intensity",
                                   "bytes_out",  "bytes_in0", "bytes_in1"};
static_assert(std::size(kLevelNames) == kLevelFeatures);
const char* const kNestNames[] = {"reg_tile_prod", "reg_tile_fast", "reg_tile_accum", "reg_tile_reduce_extent",
                                  "store_invariant_inner", "vec_lanes", "vec_native_multiple", "vec_lanes_mod",
                                  "vec_registers", "vec_contiguous", "vec_broadcast", "vec_gather", "vec_blocked",
                                  "straight_line_prod", "fit_l1_levels", "fit_l1_iters", "fit_l2_levels",
                                  "fit_l2_iters", "parallel_tasks", "parallel_balance", "loop_latches",
                                  "body_executions", "accum_registers", "inner_auto_vectorizable",
                                  "est_mem_instrs", "est_float_instrs", "est_instrs",
                                  "l1_fill_bytes", "l2_fill_bytes", "est_cycles", "eff_lanes",
                                  "eff_instrs", "eff_cycles"};
static_assert(std::size(kNestNames) == kNestFeatures - kRegTileProd);

std::string NestFeatureName(int k) {
  if (k < kRegTileProd) return "level" + std::to_string(k / kLevelFeatures) + "." + kLevelNames[k % kLevelFeatures];
  return kNestNames[k - kRegTileProd];
}

std::string StoreFeatureName(int k) {
  if (k <= kCastOp) return kOpNames[k];
  auto loop_kind = [&](int base, const char* kind) -> std::string {
    int off = k - base;
    if (off == 0) return std::string(kind) + "_num";
    if (off == 1) return std::string(kind) + "_prod";
    if (off == 2) return std::string(kind) + "_len";
    return std::string(kind) + "_pos." + kPosNames[off - 3];
  };
  if (k < kUnrollNum) return loop_kind(kVecNum, "vec");
  if (k < kParallelNum) return loop_kind(kUnrollNum, "unroll");
  if (k < kIsGpu) return loop_kind(kParallelNum, "parallel");
  if (k < kBufferBase) return kGpuNames[k - kIsGpu];
  if (k < kAllocSize) {
    int off = k - kBufferBase;
    return "buf" + std::to_string(off / kBufferFeatures) + "." + kBufferNames[off % kBufferFeatures];
  }
  if (k < kIntensity) return kTailNames[k - kAllocSize];
  return "intensity" + std::to_string(k - kIntensity);
}

}  // namespace

std::string FeatureName(int index) {
  if (index < 0 || index >= kNumFeatures) return "?";
  if (index < kStoreFeatures) return "sum." + StoreFeatureName(index);
  if (index < 2 * kStoreFeatures) return "max." + StoreFeatureName(index - kStoreFeatures);
  if (index < 3 * kStoreFeatures) return "main." + StoreFeatureName(index - 2 * kStoreFeatures);
  if (index < kNestOffset) return std::string("prog.") + kProgramNames[index - 3 * kStoreFeatures];
  return "nest." + NestFeatureName(index - kNestOffset);
}

}  // namespace tunefarm::costmodel
