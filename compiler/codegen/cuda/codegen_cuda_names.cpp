// C names, types and literals of the CUDA code generator, and the helpers
// every generated source starts with.
//
// f16 values are computed in float and rounded to half after every
// operation that can leave the half grid (as the interpreter does in
// double); f16 buffers store the bits as unsigned short, converted with
// cvt.f32.f16 / cvt.rn.f16.f32 (inline PTX: NVRTC has no cuda_fp16.h
// without CUDA's include folder).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

#include "codegen_cuda_internal.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"

namespace tunefarm::cuda::detail {

using namespace ir;

namespace {

const char* const kReserved[] = {
    "auto", "bool", "break", "case", "char", "const", "continue", "default", "delete", "do", "double", "else",
    "enum", "extern", "false", "float", "for", "goto", "if", "inline", "int", "long", "new", "register", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "this", "true", "typedef", "union", "unsigned",
    "void", "volatile", "while", "class", "namespace", "template", "typename", "using", "operator", "private",
    "public", "protected", "virtual", "friend", "asm", "half", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "min", "max", "abs", "float2", "float4", "int2", "int4", "uint2", "uint4", "double2",
    "longlong2", "ulonglong2", "dim3", "main", "signbit", "isnan", "isinf"};

}  // namespace

NameTable::NameTable() {
  for (const char* r : kReserved) used_.insert(r);
}

std::string NameTable::Fresh(const std::string& hint) {
  std::string base;
  for (char c : hint) base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  // Leading digits and underscores (reserved, or the prelude's tf_ helpers) get a prefix.
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0])) || base[0] == '_' ||
      base.rfind("tf_", 0) == 0 || base.size() > 64) {
    base = "v_" + base.substr(0, 64);
  }
  std::string name = base;
  for (int k = 1; used_.count(name) || name.find("__") != std::string::npos; ++k) {
    if (name.find("__") != std::string::npos) base = "v" + std::to_string(k);
    name = base + "_" + std::to_string(k);
  }
  used_.insert(name);
  return name;
}

const std::string& NameTable::NameOf(const void* key, const std::string& hint) {
  auto it = names_.find(key);
  if (it != names_.end()) return it->second;
  return names_.emplace(key, Fresh(hint)).first->second;
}

std::string ValueCType(DataType t) { return t.is_float() && t.bits == 16 && t.lanes == 1 ? "float" : CType(t); }

std::string CType(DataType t) {
  if (t.lanes != 1) return "";
  switch (t.code) {
    case DataType::Code::kFloat: return t.bits == 32 ? "float" : t.bits == 64 ? "double" : t.bits == 16 ? "unsigned short" : "";
    case DataType::Code::kInt:
      return t.bits == 8 ? "signed char" : t.bits == 16 ? "short" : t.bits == 32 ? "int" : t.bits == 64 ? "long long" : "";
    case DataType::Code::kUInt:
      return t.bits == 8    ? "unsigned char"
             : t.bits == 16 ? "unsigned short"
             : t.bits == 32 ? "unsigned int"
             : t.bits == 64 ? "unsigned long long"
                            : "";
    case DataType::Code::kBool: return "bool";
    case DataType::Code::kHandle: return "";
  }
  return "";
}

const char* CudaPrelude() {
  return R"(// Floor division and modulo (the divisor's sign), as tunefarm's IR defines them.
static __device__ __forceinline__ int tf_floordiv(int a, int b) {
  int q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static __device__ __forceinline__ long long tf_floordiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static __device__ __forceinline__ int tf_floormod(int a, int b) { return a - tf_floordiv(a, b) * b; }
static __device__ __forceinline__ long long tf_floormod(long long a, long long b) { return a - tf_floordiv(a, b) * b; }
// f16: stored as its bits, computed in float, rounded to half after each operation.
static __device__ __forceinline__ float tf_h2f(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
static __device__ __forceinline__ unsigned short tf_f2h(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
static __device__ __forceinline__ float tf_round_h(float f) { return tf_h2f(tf_f2h(f)); }
)";
}

std::string CudaKernelEmitter::EmitLiteral(const Expr& e, bool narrow) {
  DataType t = e.dtype();
  if (const auto* imm = e.as<IntImm>()) {
    int64_t v = imm->value;
    if (t.is_bool()) return v ? "true" : "false";
    if (t.is_uint()) return std::to_string(uint64_t(v)) + (t.bits == 64 ? "ULL" : "U");
    if (t.bits == 64 && !narrow) {
      if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807LL - 1)";
      return "(" + std::to_string(v) + "LL)";
    }
    if (v == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
    std::string s = v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    return t.bits < 32 ? "((" + CType(t) + ")" + s + ")" : s;
  }
  double v = e.as<FloatImm>()->value;
  bool f32 = t.bits != 64;  // f16 values are floats holding a half
  if (t.bits == 16) v = HalfToFloat(FloatToHalf(float(v)));
  if (std::isnan(v)) return f32 ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(v)) {
    std::string inf = f32 ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), f32 ? "%.9g" : "%.17g", f32 ? double(float(v)) : v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return "(" + s + (f32 ? "f" : "") + ")";
}


}  // namespace tunefarm::cuda::detail
