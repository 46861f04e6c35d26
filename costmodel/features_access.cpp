// Memory-access features of one store: the per-buffer blocks (bytes, unique
// bytes, lines, reuse, stride) and the arithmetic-intensity curve.
//
// Regions are boxes: per dimension, the number of values an index takes
// when the loops from some level inwards vary (exact for affine indices,
// an interval bound otherwise); a buffer accessed several times by one
// store takes the largest box of its accesses rather than their union,
// which is exact for the common case of a reduction update reading and
// writing the same element.
#include <algorithm>
#include <cmath>

#include "features_internal.h"

namespace tunefarm::costmodel::detail {

using namespace ir;

namespace {
constexpr double kCacheLineBytes = 64;
}  // namespace

double Extractor::ComputeRegion(const BufferAccess& a, int level) const {
  const size_t rank = a.buffer->shape.size();
  double best = 1;
  for (int j = 0; j < a.num_accesses; ++j) {
    double elems = 1;
    for (size_t r = 0; r < rank; ++r) {
      const IndexForm& f = forms_[a.first_form + static_cast<size_t>(j) * rank + r];
      elems *= static_cast<double>(f.Width(loops_, level, a.buffer->shape[r]));
    }
    best = std::max(best, elems);
  }
  return best;
}

void Extractor::AnalyzeAccesses(const Store* op, double trip, double float_ops_per_iter, float* v) {
  const int depth = loops_.depth();
  raw_.clear();
  raw_.push_back({op->buffer.get(), &op->indices, true});
  for (const Load* l : counter_.loads) raw_.push_back({l->buffer.get(), &l->indices, false});

  // Group the accesses by buffer (first appearance order), analysing each
  // index once; forms of one buffer are contiguous in forms_.
  buffers_.clear();
  forms_.clear();
  for (size_t i = 0; i < raw_.size(); ++i) {
    const BufferNode* b = raw_[i].buffer;
    bool seen = false;
    for (size_t k = 0; k < i && !seen; ++k) seen = raw_[k].buffer == b;
    if (seen) continue;
    BufferAccess& a = buffers_.emplace_back();
    a.buffer = b;
    a.first_form = forms_.size();
    for (size_t k = i; k < raw_.size(); ++k) {
      if (raw_[k].buffer != b) continue;
      (raw_[k].write ? a.write : a.read) = true;
      ++a.num_accesses;
      for (const Expr& idx : *raw_[k].indices) {
        AnalyzeIndex(idx, loops_, &forms_.emplace_back());
        a.mask |= forms_.back().mask;
      }
    }
    a.num_forms = forms_.size() - a.first_form;
    a.stride.fill(-1);
  }

  // Bytes all buffers of the store touch with the loops from each level inwards varying.
  // Each index's widths at all levels come from one pass (AllWidths); a
  // buffer's region is the largest box of its accesses (as ComputeRegion).
  const size_t levels = static_cast<size_t>(depth) + 1;
  level_bytes_.assign(levels, 0);
  widths_.resize(levels);
  access_elems_.resize(levels);
  for (BufferAccess& a : buffers_) {
    const double elem = a.buffer->dtype.bytes();
    const size_t rank = a.buffer->shape.size();
    for (size_t level = 0; level < levels && level <= static_cast<size_t>(kMaxDepth); ++level) a.region[level] = 1;
    for (int j = 0; j < a.num_accesses; ++j) {
      std::fill(access_elems_.begin(), access_elems_.end(), 1.0);
      for (size_t r = 0; r < rank; ++r) {
        forms_[a.first_form + static_cast<size_t>(j) * rank + r].AllWidths(loops_, a.buffer->shape[r], widths_.data());
        for (size_t level = 0; level < levels; ++level) access_elems_[level] *= static_cast<double>(widths_[level]);
      }
      for (size_t level = 0; level < levels && level <= static_cast<size_t>(kMaxDepth); ++level) {
        a.region[level] = std::max(a.region[level], access_elems_[level]);
      }
    }
    for (size_t level = 0; level < levels; ++level) {
      level_bytes_[level] += Region(a, static_cast<int>(level)) * elem;
    }
  }

  for (BufferAccess& a : buffers_) {
    auto& f = a.features;
    f.fill(0);
    const size_t rank = a.buffer->shape.size();
    const double elem = a.buffer->dtype.bytes();
    f[a.read && a.write ? kAccessReadWrite : a.write ? kAccessWrite : kAccessRead] = 1;
    a.bytes = trip * a.num_accesses * elem;
    const double unique_elems = Region(a, 0);
    f[kBytes] = static_cast<float>(a.bytes);
    f[kUniqueBytes] = static_cast<float>(unique_elems * elem);
    total_unique_bytes_ += unique_elems * elem;

    // Stride: the innermost loop that moves the access; the loops inside it
    // repeat the same element (reduce_ratio).
    double stride = 0, reduce_ratio = 1;
    for (int d = std::min(depth, kMaxDepth) - 1; d >= 0; --d) {
      stride = StrideAlong(a, d);
      if (stride > 0) break;
      reduce_ratio *= static_cast<double>(loops_.at(d).extent);
    }
    f[kStride] = static_cast<float>(stride);
    double lines = stride > 0 ? trip * a.num_accesses / reduce_ratio * std::min(1.0, stride * elem / kCacheLineBytes)
                              : static_cast<double>(a.num_accesses);
    f[kLines] = static_cast<float>(lines);
    // Distinct lines: rows of the innermost dimension, each ceil(width * elem / line).
    double inner_width = 1;
    if (rank > 0) {
      for (int j = 0; j < a.num_accesses; ++j) {
        const IndexForm& last = forms_[a.first_form + static_cast<size_t>(j) * rank + rank - 1];
        inner_width = std::max(inner_width, static_cast<double>(last.Width(loops_, 0, a.buffer->shape[rank - 1])));
      }
    }
    f[kUniqueLines] = static_cast<float>(unique_elems / inner_width * std::ceil(inner_width * elem / kCacheLineBytes));

    // Reuse: the innermost loop that does not index the buffer repeats its data.
    int reuse_loop = -1;
    for (int d = std::min(depth, kMaxDepth) - 1; d >= 0 && reuse_loop < 0; --d) {
      if (!((a.mask >> d) & 1)) reuse_loop = d;
    }
    double reuse_ct = 0;
    if (reuse_loop >= 0) {
      f[kReuseLoopRead] = 1;
      double inner = 1;
      for (int d = reuse_loop + 1; d < depth; ++d) inner *= static_cast<double>(loops_.at(d).extent);
      reuse_ct = static_cast<double>(loops_.at(reuse_loop).extent);
      f[kReuseDistIter] = static_cast<float>(inner);
      f[kReuseDistBytes] = static_cast<float>(level_bytes_[static_cast<size_t>(reuse_loop) + 1]);
    } else if (std::find(touched_.begin(), touched_.end(), a.buffer) != touched_.end()) {
      f[kReuseSerial] = 1;
      reuse_ct = 1;
      f[kReuseDistIter] = static_cast<float>(trip);
      f[kReuseDistBytes] = static_cast<float>(level_bytes_[0]);
    } else {
      f[kReuseNone] = 1;
    }
    f[kReuseCount] = static_cast<float>(reuse_ct);
    const double per = std::max(reuse_ct, 1.0);
    f[kBytesPerReuse] = static_cast<float>(f[kBytes] / per);
    f[kUniqueBytesPerReuse] = static_cast<float>(f[kUniqueBytes] / per);
    f[kLinesPerReuse] = static_cast<float>(f[kLines] / per);
    f[kUniqueLinesPerReuse] = static_cast<float>(f[kUniqueLines] / per);
  }

  // The kMaxBuffers buffers with the most bytes accessed, largest first.
  // Insertion sort of indices: a handful of buffers, and BufferAccess is
  // too large to move around (std::stable_sort also allocates).
  order_.clear();
  for (int i = 0; i < static_cast<int>(buffers_.size()); ++i) {
    int k = i;
    while (k > 0 && buffers_[static_cast<size_t>(order_[static_cast<size_t>(k - 1)])].bytes <
                        buffers_[static_cast<size_t>(i)].bytes) {
      --k;
    }
    order_.insert(order_.begin() + k, i);
  }
  for (size_t slot = 0; slot < order_.size() && slot < static_cast<size_t>(kMaxBuffers); ++slot) {
    const BufferAccess& a = buffers_[static_cast<size_t>(order_[slot])];
    std::copy(a.features.begin(), a.features.end(), v + BufferFeatureIndex(static_cast<int>(slot), kAccessRead));
  }
  for (const BufferAccess& a : buffers_) {
    if (std::find(touched_.begin(), touched_.end(), a.buffer) == touched_.end()) touched_.push_back(a.buffer);
  }

  // Arithmetic intensity with the loops from level L inwards varying; point
  // i of the curve is level depth - i (i = 0: one iteration).
  double ops = float_ops_per_iter;
  std::array<double, kMaxDepth + 1> curve{};
  const int points = std::min(depth, kMaxDepth);
  for (int i = 0; i <= points; ++i) {
    int level = depth - i;
    if (i > 0) ops *= static_cast<double>(loops_.at(level).extent);
    double bytes = level_bytes_[static_cast<size_t>(level)];
    curve[static_cast<size_t>(i)] = bytes > 0 ? ops / bytes : 0;
  }
  for (int s = 0; s < kIntensitySamples; ++s) {
    double x = points * static_cast<double>(s) / (kIntensitySamples - 1);
    int lo = static_cast<int>(std::floor(x));
    int hi = std::min(lo + 1, points);
    double t = x - lo;
    v[kIntensity + s] = static_cast<float>(curve[static_cast<size_t>(lo)] * (1 - t) + curve[static_cast<size_t>(hi)] * t);
  }
}

}  // namespace tunefarm::costmodel::detail
