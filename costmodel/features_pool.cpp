// Pooling of per-store rows into one vector per program, and feature names.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <iterator>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
// x <= 0 (and NaN) is clamped to 0, whose result is exactly 0 (1 + 0 has
// exponent 0 and mantissa 0), so no branch is needed.
constexpr double kC1 = 1.4425, kC2 = -0.7213, kC3 = 0.2788;
constexpr double kTwo52 = 4503599627370496.0;  // 2^52: its mantissa holds the exponent field exactly
constexpr uint64_t kTwo52Bits = 0x4330000000000000ull, kOneBits = 0x3ff0000000000000ull,
                   kMantissa = 0x000fffffffffffffull;

inline float Log2p1(double x) {
  x = x > 0 ? x : 0.0;
  // 1 + x = (1 + t) * 2^e with t in [0, 1), read from the bits (frexp is a call).
  const uint64_t bits = std::bit_cast<uint64_t>(1.0 + x);
  const double e = (std::bit_cast<double>((bits >> 52) | kTwo52Bits) - kTwo52) - 1023.0;
  const double t = std::bit_cast<double>((bits & kMantissa) | kOneBits) - 1.0;
  return static_cast<float>(e + t * (kC1 + t * (kC2 + t * kC3)));
}

// Log2p1 of n values (n even), two at a time where SSE2 is there: the same
// IEEE operations in the same order, so the results are bit-identical.
// GCC's -O2 vectorizer does not take this loop (nor the pooling below).
void Log2p1All(const double* x, size_t n, float* out) {
#if defined(__SSE2__)
  const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0), two52 = _mm_set1_pd(kTwo52),
                bias = _mm_set1_pd(1023.0), c1 = _mm_set1_pd(kC1), c2 = _mm_set1_pd(kC2), c3 = _mm_set1_pd(kC3);
  const __m128i two52_bits = _mm_set1_epi64x(static_cast<int64_t>(kTwo52Bits)),
                one_bits = _mm_set1_epi64x(static_cast<int64_t>(kOneBits)),
                mantissa = _mm_set1_epi64x(static_cast<int64_t>(kMantissa));
  for (size_t k = 0; k + 2 <= n; k += 2) {
    __m128d v = _mm_loadu_pd(x + k);
    const __m128d positive = _mm_cmpgt_pd(v, zero);
    // About half the pooled values are 0, in the same places in every
    // program (GPU features, unused buffer slots), so this branch predicts.
    if (_mm_movemask_pd(positive) == 0) {
      out[k] = out[k + 1] = 0.f;
      continue;
    }
    v = _mm_and_pd(v, positive);
    const __m128i bits = _mm_castpd_si128(_mm_add_pd(one, v));
    const __m128d e = _mm_sub_pd(_mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(_mm_srli_epi64(bits, 52), two52_bits)), two52), bias);
    const __m128d t = _mm_sub_pd(_mm_castsi128_pd(_mm_or_si128(_mm_and_si128(bits, mantissa), one_bits)), one);
    const __m128d poly = _mm_add_pd(e, _mm_mul_pd(t, _mm_add_pd(c1, _mm_mul_pd(t, _mm_add_pd(c2, _mm_mul_pd(t, c3))))));
    _mm_storel_pi(reinterpret_cast<__m64*>(out + k), _mm_cvtpd_ps(poly));
  }
#else
  for (size_t k = 0; k < n; ++k) out[k] = Log2p1(x[k]);
#endif
}

// sum[k] += x[k], max[k] = std::max(max[k], x[k]) over n floats (n even).
void SumMax(const float* x, size_t n, double* sum, double* max) {
#if defined(__SSE2__)
  for (size_t k = 0; k + 2 <= n; k += 2) {
    const __m128d v = _mm_cvtps_pd(_mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x + k))));
    _mm_storeu_pd(sum + k, _mm_add_pd(_mm_loadu_pd(sum + k), v));
    // maxpd(v, m) is v > m ? v : m, which is std::max(m, v).
    _mm_storeu_pd(max + k, _mm_max_pd(v, _mm_loadu_pd(max + k)));
  }
#else
  for (size_t k = 0; k < n; ++k) {
    sum[k] += x[k];
    max[k] = std::max(max[k], static_cast<double>(x[k]));
  }
#endif
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
  // [sum | max | main row] as doubles, padded to an even length for
  // Log2p1All; pooling and logs were a tenth of extraction one value at a time.
  constexpr size_t kRow = kStoreFeatures, kPooled = (3 * kRow + 1) & ~size_t{1};
  alignas(16) std::array<double, kPooled> pooled{};
  alignas(16) std::array<float, kPooled> logs;
  double total_float_ops = 0, main_ops = -1;
  const StoreRow* main = nullptr;
  for (const StoreRow& row : ex.rows()) {
    constexpr size_t kEven = kRow & ~size_t{1};
    double* sum = pooled.data();
    double* max = pooled.data() + kRow;
    SumMax(row.values.data(), kEven, sum, max);
    for (size_t k = kEven; k < kRow; ++k) {
      const double x = row.values[k];
      sum[k] += x;
      max[k] = std::max(max[k], x);
    }
    // The main store: most float ops, ties to the larger trip count.
    double ops = RowFloatOps(row) + row.values[kOuterProd] * 1e-9;
    if (ops > main_ops) {
      main_ops = ops;
      main = &row;
    }
    total_float_ops += RowFloatOps(row);
  }
  if (main) std::copy(main->values.begin(), main->values.end(), pooled.begin() + 2 * kRow);
  Log2p1All(pooled.data(), kPooled, logs.data());
  std::copy(logs.begin(), logs.begin() + 3 * kRow, out);
  float* prog = out + 3 * kStoreFeatures;
  prog[kNumStores] = static_cast<float>(ex.rows().size());
  prog[kNumAllocs] = static_cast<float>(ex.num_allocs());
  prog[kTotalFloatOps] = Log2p1(total_float_ops);
  prog[kTotalUniqueBytes] = Log2p1(ex.total_unique_bytes());
  float* nest = out + kNestOffset;
  float* gpu = out + kGpuOffset;
  if (main) {
    std::copy(main->nest.begin(), main->nest.end(), nest);
    std::copy(main->gpu.begin(), main->gpu.end(), gpu);
  } else {
    std::fill(nest, nest + kNestFeatures, 0.f);
    std::fill(gpu, gpu + kGpuFeatures, 0.f);
  }
  gpu[kDoubleBuffered] = ex.double_buffered() ? 1.f : 0.f;
  gpu[kDoubleBufferBytes] = static_cast<float>(ex.double_buffer_bytes());
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
const char* const kGpuBlockNames[] = {"double_buffered",        "double_buffer_bytes", "shared_loads",
                                      "shared_load_bytes",      "shared_vector_fraction", "shared_min_lanes",
                                      "shared_max_lanes",       "bank_conflict_max",   "bank_conflict_mean",
                                      "bank_conflict_scalar_max"};
static_assert(std::size(kGpuBlockNames) == kGpuFeatures);

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
  if (index < kGpuOffset) return "nest." + NestFeatureName(index - kNestOffset);
  return std::string("gpu.") + kGpuBlockNames[index - kGpuOffset];
}

}  // namespace tunefarm::costmodel
