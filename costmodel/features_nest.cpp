// Loop-nest features of one store (NestFeature in features.h).
//
// Ansor's row pools its counts over the nest, which loses the shape of the
// innermost loops; yet that shape decides the machine code. On this
// compiler a vectorized loop becomes one wide IR vector whose length LLVM
// splits into native registers (a length that is not a multiple of the
// native width costs shuffles and masked tails), unrolled loops become
// straight-line code whose accumulators can live in registers, and a
// reduction loop around such a register tile is what makes a matmul fast.
// These features describe exactly that, from the loop stack and the index
// forms AnalyzeAccesses has already built (no extra IR walks).
#include <algorithm>
#include <cmath>
#include <thread>

#include "features_internal.h"

namespace tunefarm::costmodel::detail {

using namespace ir;

namespace {

constexpr double kNativeVectorBytes = 64;  // AVX-512; 16 f32 lanes
constexpr double kL1Bytes = 48 * 1024;
constexpr double kL2Bytes = 1024 * 1024;
constexpr int64_t kMaxCodegenUnroll = 64;  // larger unrolled loops stay loops (codegen)

double NumCores() {
  static const double cores = std::max(1u, std::thread::hardware_concurrency());
  return cores;
}

float KindCode(const LoopInfo& l) {
  switch (l.kind) {
    case ForKind::kUnrolled: return 2;
    case ForKind::kVectorized: return 3;
    case ForKind::kParallel: return 4;
    case ForKind::kThreadBinding: return 5;
    default: return 1;
  }
}

bool IsStraightLine(const LoopInfo& l) {
  return l.kind == ForKind::kVectorized || (l.kind == ForKind::kUnrolled && l.extent <= kMaxCodegenUnroll);
}

}  // namespace

double Extractor::StrideAlong(const BufferAccess& a, int d) const {
  if (d < 0 || d >= kMaxDepth || !((a.mask >> d) & 1)) return 0;
  double& memo = a.stride[static_cast<size_t>(d)];
  if (memo >= 0) return memo;
  const size_t rank = a.buffer->shape.size();
  double best = 0;
  for (int j = 0; j < a.num_accesses; ++j) {
    double s = 0, dim_stride = 1;
    for (size_t r = rank; r-- > 0;) {
      s += static_cast<double>(forms_[a.first_form + static_cast<size_t>(j) * rank + r].Step(loops_, d)) * dim_stride;
      dim_stride *= static_cast<double>(a.buffer->shape[r]);
    }
    if (s > 0 && (best == 0 || s < best)) best = s;
  }
  memo = best;
  return best;
}

void Extractor::DescribeNest(uint64_t spatial_mask, double trip, double float_ops_per_iter, float* n) const {
  const int depth = std::min(loops_.depth(), kMaxDepth);
  // The stored buffer and the two read-only buffers with the most bytes
  // (order_ sorts buffers_ by bytes).
  const BufferAccess* out = nullptr;
  const BufferAccess* in[2] = {nullptr, nullptr};
  for (int i : order_) {
    const BufferAccess& a = buffers_[static_cast<size_t>(i)];
    if (a.write) {
      if (!out) out = &a;
    } else if (!in[0]) {
      in[0] = &a;
    } else if (!in[1]) {
      in[1] = &a;
    }
  }
  auto stride = [&](const BufferAccess* a, int d) { return a ? static_cast<float>(StrideAlong(*a, d)) : 0.f; };
  auto is_reduce = [&](int d) { return !((spatial_mask >> d) & 1); };

  double ops = float_ops_per_iter;  // float ops of the loops inside the current level
  for (int i = 0; i < kNestLevels && i < depth; ++i) {
    const int d = depth - 1 - i;
    const LoopInfo& l = loops_.at(d);
    float* b = n + kLevels + i * kLevelFeatures;
    b[kLevelExtent] = static_cast<float>(l.extent);
    b[kLevelKind] = KindCode(l);
    b[kLevelReduce] = is_reduce(d) ? 1.f : 0.f;
    b[kLevelStrideOut] = stride(out, d);
    b[kLevelStrideIn0] = stride(in[0], d);
    b[kLevelStrideIn1] = stride(in[1], d);
    for (const BufferAccess& a : buffers_) {
      const double st = StrideAlong(a, d);
      b[st == 0 ? kLevelBroadcast : st == 1 ? kLevelContiguous : kLevelStrided] += 1.f;
    }
    ops *= static_cast<double>(l.extent);
    const double bytes = level_bytes_[static_cast<size_t>(d)];
    b[kLevelFootprint] = static_cast<float>(bytes);
    b[kLevelIntensity] = bytes > 0 ? static_cast<float>(ops / bytes) : 0.f;
    auto region_bytes = [&](const BufferAccess* a) {
      return a ? static_cast<float>(Region(*a, d) * a->buffer->dtype.bytes()) : 0.f;
    };
    b[kLevelBytesOut] = region_bytes(out);
    b[kLevelBytesIn0] = region_bytes(in[0]);
    b[kLevelBytesIn1] = region_bytes(in[1]);
  }

  // Register tile under the innermost reduction loop.
  int r = -1;
  for (int d = depth - 1; d >= 0 && r < 0; --d) {
    if (is_reduce(d)) r = d;
  }
  if (r >= 0) {
    double prod = 1;
    bool fast = true;
    for (int d = r + 1; d < depth; ++d) {
      prod *= static_cast<double>(loops_.at(d).extent);
      fast = fast && IsStraightLine(loops_.at(d));
    }
    n[kRegTileProd] = static_cast<float>(prod);
    n[kRegTileFast] = fast ? 1.f : 0.f;
    n[kRegTileAccum] = out ? static_cast<float>(Region(*out, r + 1)) : 0.f;
    n[kRegTileReduceExtent] = static_cast<float>(loops_.at(r).extent);
  }
  if (depth > 0 && out) n[kStoreInvariantInner] = StrideAlong(*out, depth - 1) == 0 ? 1.f : 0.f;

  // The innermost vectorized loop.
  int v = -1;
  for (int d = depth - 1; d >= 0 && v < 0; --d) {
    if (loops_.at(d).kind == ForKind::kVectorized) v = d;
  }
  double vec_lanes = 1;
  if (v >= 0) {
    const double lanes = static_cast<double>(loops_.at(v).extent);
    const double elem = out ? out->buffer->dtype.bytes() : 4;
    const double native = std::max(1.0, kNativeVectorBytes / elem);
    n[kVecLanes] = static_cast<float>(lanes);
    n[kVecNativeMultiple] = std::fmod(lanes, native) == 0 ? 1.f : 0.f;
    n[kVecLanesMod] = static_cast<float>(std::fmod(lanes, native));
    n[kVecRegisters] = static_cast<float>(std::ceil(lanes / native));
    for (const BufferAccess& a : buffers_) {
      const double s = StrideAlong(a, v);
      n[s == 0 ? kVecBroadcast : s == 1 ? kVecContiguous : kVecGather] += 1.f;
    }
    const bool blocked = is_reduce(v) || v != depth - 1;
    n[kVecBlocked] = blocked ? 1.f : 0.f;
    if (!blocked) vec_lanes = lanes;
  }
  double straight = 1;
  for (int d = depth - 1; d >= 0 && IsStraightLine(loops_.at(d)); --d) straight *= static_cast<double>(loops_.at(d).extent);
  n[kStraightLineProd] = static_cast<float>(straight);

  // Cache fit: level_bytes_[L] is the footprint with the loops at depth >= L varying.
  auto fit = [&](double capacity, int levels_slot, int iters_slot) {
    int levels = 0;
    double iters = 1;
    while (levels < depth && level_bytes_[static_cast<size_t>(depth - levels - 1)] <= capacity) {
      iters *= static_cast<double>(loops_.at(depth - levels - 1).extent);
      ++levels;
    }
    n[levels_slot] = static_cast<float>(levels);
    n[iters_slot] = static_cast<float>(iters);
  };
  fit(kL1Bytes, kFitL1Levels, kFitL1Iters);
  fit(kL2Bytes, kFitL2Levels, kFitL2Iters);
  // Traffic into a cache: the fitting loops' footprint, refilled on every
  // iteration of the loops outside them (trees cannot form this product).
  auto fill = [&](int levels_slot) {
    const int fitting = static_cast<int>(n[levels_slot]);
    double outside = 1;
    for (int d = 0; d < depth - fitting; ++d) outside *= static_cast<double>(loops_.at(d).extent);
    return level_bytes_[static_cast<size_t>(depth - fitting)] * outside;
  };
  const double l1_fill = fill(kFitL1Levels), l2_fill = fill(kFitL2Levels);
  n[kL1FillBytes] = static_cast<float>(l1_fill);
  n[kL2FillBytes] = static_cast<float>(l2_fill);

  double tasks = 1, latches = 0, outer = 1;
  bool parallel = false;
  for (int d = 0; d < depth; ++d) {
    const LoopInfo& l = loops_.at(d);
    outer *= static_cast<double>(l.extent);
    if (l.kind == ForKind::kParallel) {
      tasks *= static_cast<double>(l.extent);
      parallel = true;
    } else if (l.kind == ForKind::kSerial || (l.kind == ForKind::kUnrolled && l.extent > kMaxCodegenUnroll)) {
      latches += outer;
    }
  }
  if (parallel) {
    n[kParallelTasks] = static_cast<float>(tasks);
    n[kParallelBalance] = static_cast<float>(tasks / (NumCores() * std::ceil(tasks / NumCores())));
  }
  n[kLoopLatches] = static_cast<float>(latches);
  const double body_execs = trip / vec_lanes;
  n[kBodyExecutions] = static_cast<float>(body_execs);

  // Rough instruction counts (see NestFeature).
  const double elem = out ? out->buffer->dtype.bytes() : 4;
  const double native = std::max(1.0, kNativeVectorBytes / elem);
  const double accum = n[kRegTileAccum];
  n[kAccumRegisters] = static_cast<float>(std::ceil(accum / native));
  // Accumulators stay in registers across the reduction loop when the tile
  // is straight-line code and fits the 32 vector registers.
  const bool promoted = r >= 0 && n[kRegTileFast] > 0 && n[kAccumRegisters] <= 32;
  if (depth > 0) {
    const int inner = depth - 1;
    bool autovec = loops_.at(inner).kind == ForKind::kSerial && out && StrideAlong(*out, inner) == 1;
    for (const BufferAccess& a : buffers_) autovec = autovec && StrideAlong(a, inner) <= 1;
    n[kInnerAutoVectorizable] = autovec ? 1.f : 0.f;
  }
  // Memory and float instructions with `lanes`-wide vectors along loop `vd`.
  auto instructions = [&](double lanes, int vd, double* mem_out, double* flops_out) {
    const double execs_all = trip / lanes, regs = std::ceil(lanes / native);
    double mem = 0;
    for (int i : order_) {
      const BufferAccess& a = buffers_[static_cast<size_t>(i)];
      double per_exec = a.num_accesses;
      if (lanes > 1) {
        const double st = StrideAlong(a, vd);
        per_exec *= st == 0 ? 1 : st == 1 ? regs : lanes;
      }
      double execs = execs_all;
      if (&a == out && promoted) execs /= static_cast<double>(loops_.at(r).extent);
      mem += per_exec * execs;
    }
    *mem_out = mem;
    *flops_out = float_ops_per_iter * execs_all * regs;
  };
  double mem = 0, flops = 0;
  instructions(vec_lanes, v, &mem, &flops);
  double eff_lanes = vec_lanes;
  if (depth > 0 && eff_lanes == 1) {
    const int inner = depth - 1;
    const LoopInfo& l = loops_.at(inner);
    bool contiguous = out && StrideAlong(*out, inner) == 1;
    for (const BufferAccess& a : buffers_) contiguous = contiguous && StrideAlong(a, inner) <= 1;
    if (contiguous && l.kind == ForKind::kUnrolled && l.extent <= kMaxCodegenUnroll) {
      eff_lanes = static_cast<double>(l.extent);
    } else if (contiguous && l.kind == ForKind::kSerial) {
      eff_lanes = std::min(static_cast<double>(l.extent), native);
    }
  }
  double eff_mem = mem, eff_flops = flops;
  if (eff_lanes != vec_lanes) instructions(eff_lanes, depth - 1, &eff_mem, &eff_flops);
  n[kEffLanes] = static_cast<float>(eff_lanes);
  n[kEffInstrs] = static_cast<float>(eff_mem + eff_flops + latches);
  n[kEffCycles] = static_cast<float>(std::max({eff_flops / 2, eff_mem / 2, l1_fill / 64, l2_fill / 32}) + latches);
  n[kEstMemInstrs] = static_cast<float>(mem);
  n[kEstFloatInstrs] = static_cast<float>(flops);
  n[kEstInstrs] = static_cast<float>(mem + flops + latches);
  // Zen 5: two FMA and two load ports; L2 gives about 64 B a cycle, L3 32.
  n[kEstCycles] = static_cast<float>(std::max({flops / 2, mem / 2, l1_fill / 64, l2_fill / 32}) + latches);
}

}  // namespace tunefarm::costmodel::detail
