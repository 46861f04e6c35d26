// ONNX tensors and value infos -> tunefarm types, shapes and values; the
// element data of initializers, inline or in an external file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/dtype.h"

namespace onnx {
class TensorProto;
class ValueInfoProto;
}  // namespace onnx

namespace tunefarm::frontend {

// The dtype of an ONNX TensorProto::DataType; strings, complex numbers and
// bfloat16 are InvalidArgument naming `what` in `path`.
Result<ir::DataType> TensorDataType(int32_t onnx_type, const std::string& path, const std::string& what);

// The element type and static shape of a value info; an unknown or symbolic
// dimension is InvalidArgument naming `what`.
Result<ir::DataType> ValueInfoType(const onnx::ValueInfoProto& info, const std::string& path,
                                   const std::string& what, std::vector<int64_t>* shape);

// An initializer's inline data has exactly the bytes its dims need.
Status CheckTensorData(const onnx::TensorProto& t, ir::DataType dtype, const std::string& path);

struct ExternalDataRef {
  std::filesystem::path file;
  int64_t offset = 0;
  int64_t length = -1;  // -1: to the end of the file
};
Result<ExternalDataRef> ReadExternalDataRef(const onnx::TensorProto& t, const std::filesystem::path& model_dir);

// Every element as a double (inline typed fields, raw data or external data).
Result<std::vector<double>> ReadTensorValues(const onnx::TensorProto& t, ir::DataType dtype,
                                             const std::filesystem::path& model_dir);

}  // namespace tunefarm::frontend
