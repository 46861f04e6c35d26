// ONNX keeps an initializer's elements in one of three places (a typed
// repeated field, raw little-endian bytes, or an external file); tunefarm
// reads all three, and checks the sizes before anything trusts them.
#include "onnx_tensor.h"

#include <cstring>
#include <fstream>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

namespace tunefarm::frontend {
namespace {

using ir::DataType;

int64_t NumElements(const onnx::TensorProto& t) {
  int64_t n = 1;
  for (int64_t d : t.dims()) n *= d;
  return n;
}

int64_t TypedFieldCount(const onnx::TensorProto& t) {
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return t.float_data_size();
    case onnx::TensorProto::DOUBLE: return t.double_data_size();
    case onnx::TensorProto::INT64: return t.int64_data_size();
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: return t.uint64_data_size();
    default: return t.int32_data_size();
  }
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double RawElement(const char* p, DataType t) {
  auto get = [p](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return double(v);
  };
  if (t.is_float()) {
    if (t.bits == 16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfToFloat(h);
    }
    return t.bits == 32 ? get(float()) : get(double());
  }
  if (t.is_bool()) return get(uint8_t());
  if (t.is_uint()) {
    return t.bits == 8 ? get(uint8_t()) : t.bits == 16 ? get(uint16_t()) : t.bits == 32 ? get(uint32_t()) : get(uint64_t());
  }
  return t.bits == 8 ? get(int8_t()) : t.bits == 16 ? get(int16_t()) : t.bits == 32 ? get(int32_t()) : get(int64_t());
}

std::vector<double> FromRaw(const std::string& raw, DataType t) {
  std::vector<double> out(raw.size() / t.bytes());
  for (size_t i = 0; i < out.size(); ++i) out[i] = RawElement(raw.data() + i * t.bytes(), t);
  return out;
}

}  // namespace

Result<DataType> TensorDataType(int32_t onnx_type, const std::string& path, const std::string& what) {
  switch (onnx_type) {
    case onnx::TensorProto::FLOAT: return DataType::Float(32);
    case onnx::TensorProto::FLOAT16: return DataType::Float(16);
    case onnx::TensorProto::DOUBLE: return DataType::Float(64);
    case onnx::TensorProto::INT8: return DataType::Int(8);
    case onnx::TensorProto::INT16: return DataType::Int(16);
    case onnx::TensorProto::INT32: return DataType::Int(32);
    case onnx::TensorProto::INT64: return DataType::Int(64);
    case onnx::TensorProto::UINT8: return DataType::UInt(8);
    case onnx::TensorProto::UINT16: return DataType::UInt(16);
    case onnx::TensorProto::UINT32: return DataType::UInt(32);
    case onnx::TensorProto::UINT64: return DataType::UInt(64);
    case onnx::TensorProto::BOOL: return DataType::Bool();
    default: break;
  }
  const char* name = onnx::TensorProto::DataType_IsValid(onnx_type)
                         ? onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(onnx_type)).c_str()
                         : "an unknown type";
  return Status::InvalidArgument(
      fmt::format("{}: {} has element type {}; tunefarm computes with numbers (f32, f16, int8..int64, bool)", path,
                  what, name));
}

Result<DataType> ValueInfoType(const onnx::ValueInfoProto& info, const std::string& path, const std::string& what,
                               std::vector<int64_t>* shape) {
  if (!info.type().has_tensor_type()) {
    return Status::InvalidArgument(fmt::format("{}: {} is not a tensor (sequences and maps are not supported)", path, what));
  }
  const auto& tensor = info.type().tensor_type();
  TF_ASSIGN_OR_RETURN(DataType dtype, TensorDataType(tensor.elem_type(), path, what));
  if (!tensor.has_shape()) return Status::InvalidArgument(fmt::format("{}: {} has an unknown shape", path, what));
  shape->clear();
  for (int d = 0; d < tensor.shape().dim_size(); ++d) {
    const auto& dim = tensor.shape().dim(d);
    if (!dim.has_dim_value()) {
      return Status::InvalidArgument(fmt::format("{}: {} has dimension {} without a static size{}", path, what, d,
                                                 dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : ""));
    }
    if (dim.dim_value() <= 0) {
      return Status::InvalidArgument(
          fmt::format("{}: {} has dimension {} of size {}; tunefarm tunes non-empty tensors", path, what, d, dim.dim_value()));
    }
    shape->push_back(dim.dim_value());
  }
  return dtype;
}

Status CheckTensorData(const onnx::TensorProto& t, DataType dtype, const std::string& path) {
  for (int64_t d : t.dims()) {
    if (d <= 0) {
      return Status::InvalidArgument(fmt::format("{}: tensor '{}' has a dimension of size {}; tunefarm tunes "
                                                 "non-empty tensors", path, t.name(), d));
    }
  }
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return Status::OK();
  int64_t n = NumElements(t);
  if (t.has_raw_data()) {
    int64_t need = n * dtype.bytes();
    if (int64_t(t.raw_data().size()) != need) {
      return Status::InvalidArgument(fmt::format("{}: tensor '{}' holds {} bytes of data, but its dims need {}", path,
                                                 t.name(), t.raw_data().size(), need));
    }
    return Status::OK();
  }
  int64_t count = TypedFieldCount(t);
  if (count != n) {
    return Status::InvalidArgument(
        fmt::format("{}: tensor '{}' holds {} elements, but its dims need {}", path, t.name(), count, n));
  }
  return Status::OK();
}

Result<ExternalDataRef> ReadExternalDataRef(const onnx::TensorProto& t, const std::filesystem::path& model_dir) {
  ExternalDataRef ref;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") ref.file = model_dir / kv.value();
    if (kv.key() == "offset") ref.offset = std::stoll(kv.value());
    if (kv.key() == "length") ref.length = std::stoll(kv.value());
  }
  if (ref.file.empty()) {
    return Status::InvalidArgument(fmt::format("initializer '{}' is external but names no 'location'", t.name()));
  }
  return ref;
}

Result<std::vector<double>> ReadTensorValues(const onnx::TensorProto& t, DataType dtype,
                                             const std::filesystem::path& model_dir) {
  int64_t n = NumElements(t);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    TF_ASSIGN_OR_RETURN(ExternalDataRef ref, ReadExternalDataRef(t, model_dir));
    std::ifstream in(ref.file, std::ios::binary);
    std::string raw(size_t(n * dtype.bytes()), '\0');
    in.seekg(ref.offset);
    if (!in.read(raw.data(), std::streamsize(raw.size()))) {
      return Status::IOError(fmt::format("cannot read the data of '{}' from '{}'", t.name(), ref.file.string()));
    }
    return FromRaw(raw, dtype);
  }
  if (t.has_raw_data()) return FromRaw(t.raw_data(), dtype);
  std::vector<double> out;
  out.reserve(size_t(n));
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: out.assign(t.float_data().begin(), t.float_data().end()); break;
    case onnx::TensorProto::DOUBLE: out.assign(t.double_data().begin(), t.double_data().end()); break;
    case onnx::TensorProto::INT64: out.assign(t.int64_data().begin(), t.int64_data().end()); break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64: out.assign(t.uint64_data().begin(), t.uint64_data().end()); break;
    case onnx::TensorProto::FLOAT16:
      for (int32_t bits : t.int32_data()) out.push_back(HalfToFloat(uint16_t(bits)));
      break;
    default: out.assign(t.int32_data().begin(), t.int32_data().end()); break;
  }
  return out;
}

}  // namespace tunefarm::frontend
