// HostBuffer storage, element access by double, random filling, comparison.
#include "tunefarm/compiler/interpreter/host_buffer.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tunefarm {

void HostBuffer::FreeDeleter::operator()(void* p) const { std::free(p); }

HostBuffer::HostBuffer(ir::DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  num_elements_ = 1;
  for (int64_t d : shape_) num_elements_ *= d;
  // Round up so aligned_alloc's size is a multiple of the alignment, and keep
  // one spare vector of slack for kernels that read a full vector at the tail.
  size_t bytes = size_t(num_elements_) * size_t(dtype_.bytes());
  size_t padded = ((bytes + 63) / 64 + 1) * 64;
  void* p = std::aligned_alloc(64, padded);
  if (p) std::memset(p, 0, padded);
  data_.reset(p);
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));  // inf / nan
  int32_t e = int32_t(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);  // underflow -> signed zero
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: correct
  return uint16_t(half);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double HostBuffer::GetAsDouble(int64_t i) const {
  const void* p = static_cast<const char*>(data()) + i * dtype_.bytes();
  using C = ir::DataType::Code;
  switch (dtype_.code) {
    case C::kFloat:
      if (dtype_.bits == 16) return HalfToFloat(*static_cast<const uint16_t*>(p));
      if (dtype_.bits == 32) return *static_cast<const float*>(p);
      return *static_cast<const double*>(p);
    case C::kInt:
      switch (dtype_.bits) {
        case 8: return *static_cast<const int8_t*>(p);
        case 16: return *static_cast<const int16_t*>(p);
        case 32: return *static_cast<const int32_t*>(p);
        default: return double(*static_cast<const int64_t*>(p));
      }
    case C::kUInt:
      switch (dtype_.bits) {
        case 8: return *static_cast<const uint8_t*>(p);
        case 16: return *static_cast<const uint16_t*>(p);
        case 32: return *static_cast<const uint32_t*>(p);
        default: return double(*static_cast<const uint64_t*>(p));
      }
    case C::kBool: return *static_cast<const uint8_t*>(p) ? 1.0 : 0.0;
    case C::kHandle: return 0;
  }
  return 0;
}

void HostBuffer::SetFromDouble(int64_t i, double v) {
  void* p = static_cast<char*>(data()) + i * dtype_.bytes();
  using C = ir::DataType::Code;
  switch (dtype_.code) {
    case C::kFloat:
      if (dtype_.bits == 16) *static_cast<uint16_t*>(p) = FloatToHalf(float(v));
      else if (dtype_.bits == 32) *static_cast<float*>(p) = float(v);
      else *static_cast<double*>(p) = v;
      return;
    case C::kInt:
    case C::kUInt: {
      int64_t x = int64_t(v);
      switch (dtype_.bits) {
        case 8: *static_cast<int8_t*>(p) = int8_t(x); return;
        case 16: *static_cast<int16_t*>(p) = int16_t(x); return;
        case 32: *static_cast<int32_t*>(p) = int32_t(x); return;
        default: *static_cast<int64_t*>(p) = x; return;
      }
    }
    case C::kBool: *static_cast<uint8_t*>(p) = v != 0; return;
    case C::kHandle: return;
  }
}

void HostBuffer::FillRandom(std::mt19937_64& rng) {
  if (dtype_.is_float()) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < num_elements_; ++i) SetFromDouble(i, dist(rng));
  } else if (dtype_.is_bool()) {
    for (int64_t i = 0; i < num_elements_; ++i) SetFromDouble(i, double(rng() & 1));
  } else {
    // Small magnitudes keep int8 products and long sums exact in every type.
    int64_t lo = dtype_.is_uint() ? 0 : -8;
    std::uniform_int_distribution<int64_t> dist(lo, 8);
    for (int64_t i = 0; i < num_elements_; ++i) SetFromDouble(i, double(dist(rng)));
  }
}

CompareResult CompareBuffers(const HostBuffer& actual, const HostBuffer& expected, double rtol, double atol) {
  CompareResult r;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    r.equal = false;
    r.message = "buffers differ in dtype or shape";
    return r;
  }
  bool exact = !expected.dtype().is_float();
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    double a = actual.GetAsDouble(i), e = expected.GetAsDouble(i);
    bool same;
    if (exact) {
      same = a == e;
    } else if (std::isnan(e) || std::isnan(a)) {
      same = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      same = a == e;
    } else {
      double err = std::fabs(a - e);
      r.max_abs_error = std::max(r.max_abs_error, err);
      same = err <= atol + rtol * std::fabs(e);
    }
    if (!same) {
      if (r.mismatches == 0) {
        std::ostringstream os;
        os << "element " << i << ": got " << a << ", expected " << e;
        r.message = os.str();
      }
      ++r.mismatches;
    }
  }
  r.equal = r.mismatches == 0;
  if (!r.equal) {
    r.message += " (" + std::to_string(r.mismatches) + " of " + std::to_string(expected.num_elements()) +
                 " elements differ)";
  }
  return r;
}

}  // namespace tunefarm
