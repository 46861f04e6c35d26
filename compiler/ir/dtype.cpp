#include "tunefarm/compiler/ir/dtype.h"

namespace tunefarm::ir {

std::string DataType::ToString() const {
  std::string s;
  switch (code) {
    case Code::kInt: s = "i" + std::to_string(bits); break;
    case Code::kUInt: s = "u" + std::to_string(bits); break;
    case Code::kFloat: s = "f" + std::to_string(bits); break;
    case Code::kBool: s = "bool"; break;
    case Code::kHandle: return "handle";
  }
  if (lanes != 1) s += "x" + std::to_string(lanes);
  return s;
}

std::optional<DataType> DataType::Parse(std::string_view name) {
  struct Entry { std::string_view name; DataType type; };
  static constexpr Entry kTypes[] = {
      {"f16", Float(16)}, {"f32", Float(32)}, {"f64", Float(64)}, {"i8", Int(8)},
      {"i16", Int(16)},   {"i32", Int(32)},   {"i64", Int(64)},   {"u8", UInt(8)},
      {"u16", UInt(16)},  {"u32", UInt(32)},  {"u64", UInt(64)},  {"bool", Bool()},
  };
  for (const Entry& e : kTypes) {
    if (e.name == name) return e.type;
  }
  return std::nullopt;
}

}  // namespace tunefarm::ir
