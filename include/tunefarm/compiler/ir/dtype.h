// DataType: the scalar (or vector, lanes > 1) type of an IR value or buffer element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tunefarm::ir {

struct DataType {
  enum class Code : uint8_t { kInt, kUInt, kFloat, kBool, kHandle };

  Code code = Code::kInt;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  static constexpr DataType Int(int bits, int lanes = 1) { return {Code::kInt, uint8_t(bits), uint16_t(lanes)}; }
  static constexpr DataType UInt(int bits, int lanes = 1) { return {Code::kUInt, uint8_t(bits), uint16_t(lanes)}; }
  static constexpr DataType Float(int bits, int lanes = 1) { return {Code::kFloat, uint8_t(bits), uint16_t(lanes)}; }
  static constexpr DataType Bool(int lanes = 1) { return {Code::kBool, 1, uint16_t(lanes)}; }
  static constexpr DataType Handle() { return {Code::kHandle, 64, 1}; }
  // The type of loop variables and index arithmetic.
  static constexpr DataType Index() { return Int(64); }

  bool is_int() const { return code == Code::kInt; }
  bool is_uint() const { return code == Code::kUInt; }
  bool is_integer() const { return code == Code::kInt || code == Code::kUInt; }
  bool is_float() const { return code == Code::kFloat; }
  bool is_bool() const { return code == Code::kBool; }
  bool is_handle() const { return code == Code::kHandle; }
  bool is_scalar() const { return lanes == 1; }
  DataType element_of() const { return {code, bits, 1}; }
  DataType with_lanes(int n) const { return {code, bits, uint16_t(n)}; }
  // Storage size of one element in bytes (bool is stored as one byte).
  int bytes() const { return code == Code::kBool ? 1 : (bits + 7) / 8; }

  friend bool operator==(const DataType&, const DataType&) = default;

  // "f32", "i64", "u8", "bool", "f32x16", "handle".
  std::string ToString() const;
  // Parses the names ToString produces (scalars only): f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool.
  static std::optional<DataType> Parse(std::string_view name);
};

}  // namespace tunefarm::ir
