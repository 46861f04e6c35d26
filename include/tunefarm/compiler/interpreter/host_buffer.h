// HostBuffer: an owned, aligned, dense array in host memory, the argument type
// of the interpreter and of compiled kernels in tests and tools.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(ir::DataType dtype, std::vector<int64_t> shape);  // zero-filled, 64-byte aligned
  static HostBuffer Like(const ir::Buffer& b) { return HostBuffer(b->dtype, b->shape); }

  ir::DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  int64_t size_bytes() const { return num_elements_ * dtype_.bytes(); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T> T* as() { return static_cast<T*>(data()); }
  template <typename T> const T* as() const { return static_cast<const T*>(data()); }

  // Element i as a double (any dtype), and store from a double (rounded/wrapped to dtype).
  double GetAsDouble(int64_t i) const;
  void SetFromDouble(int64_t i, double v);

  // Fills with uniform random values: floats in [-1, 1), ints in a small range
  // that keeps int8 products and sums exact.
  void FillRandom(std::mt19937_64& rng);

 private:
  struct FreeDeleter { void operator()(void* p) const; };
  ir::DataType dtype_;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::unique_ptr<void, FreeDeleter> data_;
};

// Compares two buffers of the same dtype and shape. Floats: |a-b| <= atol + rtol*|b|;
// integers exactly. On mismatch the message names the first bad flat index and
// both values, and how many elements differ.
struct CompareResult {
  bool equal = true;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  std::string message;
};
CompareResult CompareBuffers(const HostBuffer& actual, const HostBuffer& expected,
                             double rtol = 1e-4, double atol = 1e-4);

// f16 <-> f32 conversion (IEEE binary16, round to nearest even).
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);

}  // namespace tunefarm
