// Reading an ONNX file: each check names the file and the node or tensor it
// rejects, in the order a person would fix them (can it be read at all, does
// this ONNX library know its opset, are its weights there, are its shapes
// known), before ONNX's own checker and shape inference see it.
#include "onnx_graph.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <onnx/checker.h>
#include <onnx/common/version.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "onnx_tensor.h"
#include "op_table.h"

namespace tunefarm::frontend {

int64_t GraphValue::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string GraphNode::Where() const { return fmt::format("node '{}' ({})", name, op_type); }

OnnxGraph::~OnnxGraph() = default;

Result<std::unique_ptr<OnnxGraph>> OnnxGraph::Load(const std::string& path,
                                                   const std::map<std::string, int64_t>& dim_values) {
  std::unique_ptr<OnnxGraph> g(new OnnxGraph());
  g->path_ = path;
  TF_RETURN_IF_ERROR(g->Parse());
  TF_RETURN_IF_ERROR(g->CheckOpsets());
  TF_RETURN_IF_ERROR(g->CheckExternalData());
  TF_RETURN_IF_ERROR(g->BindInputDims(dim_values));
  TF_RETURN_IF_ERROR(g->CheckStructure());
  TF_RETURN_IF_ERROR(g->FoldConstants());
  TF_RETURN_IF_ERROR(g->CollectValues());
  return g;
}

Status OnnxGraph::NodeError(const GraphNode& n, const std::string& message) const {
  return Status::InvalidArgument(fmt::format("{}: {}: {}", path_, n.Where(), message));
}

Status OnnxGraph::Parse() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return Status::NotFound(fmt::format("{}: cannot open the model file", path_));
  std::stringstream bytes;
  bytes << in.rdbuf();
  std::string data = bytes.str();
  if (data.empty()) return Status::InvalidArgument(fmt::format("{}: the file is empty, not an ONNX model", path_));
  model_ = std::make_unique<onnx::ModelProto>();
  if (!model_->ParseFromString(data) || !model_->has_graph() || model_->ir_version() <= 0) {
    return Status::InvalidArgument(fmt::format(
        "{}: not an ONNX model, or a truncated one (it does not parse as an ONNX ModelProto with a graph)", path_));
  }
  const onnx::GraphProto& graph = model_->graph();
  if (graph.node_size() == 0) {
    return Status::InvalidArgument(fmt::format("{}: the graph '{}' has no nodes: nothing to tune", path_, graph.name()));
  }
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto& p = graph.node(i);
    GraphNode n;
    n.name = p.name().empty() ? fmt::format("{}_{}", p.op_type(), i) : p.name();
    n.op_type = p.op_type();
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    n.proto = &p;
    nodes_.push_back(std::move(n));
  }
  return Status::OK();
}

Status OnnxGraph::CheckOpsets() {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& id : model_->opset_import()) {
    std::string domain = id.domain() == "ai.onnx" ? "" : id.domain();
    auto it = known.find(domain);
    if (it == known.end()) {
      std::string user;
      for (const GraphNode& n : nodes_) {
        if (n.proto->domain() == id.domain()) user = " (used by " + n.Where() + ")";
      }
      return Status::InvalidArgument(fmt::format(
          "{}: imports operator domain '{}'{}, which neither tunefarm nor its ONNX library ({}) knows", path_,
          id.domain(), user, ONNX_NAMESPACE::LAST_RELEASE_VERSION));
    }
    if (id.version() > it->second.second) {
      return Status::InvalidArgument(fmt::format(
          "{}: opset {} of domain '{}' is newer than this build's ONNX library ({}) knows (up to {}); export the "
          "model with opset {} or older",
          path_, id.version(), domain.empty() ? "ai.onnx" : domain, ONNX_NAMESPACE::LAST_RELEASE_VERSION,
          it->second.second, it->second.second));
    }
    if (domain.empty()) opset_ = id.version();
  }
  if (opset_ == 0) return Status::InvalidArgument(fmt::format("{}: the model imports no ai.onnx opset", path_));
  return Status::OK();
}

Status OnnxGraph::CheckExternalData() {
  std::filesystem::path dir = std::filesystem::path(path_).parent_path();
  for (const onnx::TensorProto& t : model_->graph().initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    TF_ASSIGN_OR_RETURN(ExternalDataRef ref, ReadExternalDataRef(t, dir));
    std::error_code ec;
    if (!std::filesystem::is_regular_file(ref.file, ec)) {
      return Status::InvalidArgument(fmt::format("{}: initializer '{}' keeps its data in '{}', which does not exist",
                                                 path_, t.name(), ref.file.string()));
    }
    uint64_t size = std::filesystem::file_size(ref.file, ec);
    if (ref.length >= 0 && uint64_t(ref.offset + ref.length) > size) {
      return Status::InvalidArgument(fmt::format(
          "{}: initializer '{}' reads bytes {}..{} of '{}', which holds only {} bytes", path_, t.name(), ref.offset,
          ref.offset + ref.length, ref.file.string(), size));
    }
  }
  return Status::OK();
}

Status OnnxGraph::BindInputDims(const std::map<std::string, int64_t>& dim_values) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : model_->graph().initializer()) initializers.insert(t.name());
  for (onnx::ValueInfoProto& in : *model_->mutable_graph()->mutable_input()) {
    if (initializers.count(in.name())) continue;
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) {
      return Status::InvalidArgument(fmt::format("{}: graph input '{}' has no tensor shape", path_, in.name()));
    }
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < shape->dim_size(); ++d) {
      auto* dim = shape->mutable_dim(d);
      if (dim->has_dim_value()) {
        if (dim->dim_value() <= 0) {
          return Status::InvalidArgument(fmt::format("{}: graph input '{}' has dimension {} of size {}; tunefarm "
                                                     "tunes non-empty tensors",
                                                     path_, in.name(), d, dim->dim_value()));
        }
        continue;
      }
      std::string symbol = dim->has_dim_param() ? dim->dim_param() : "";
      auto it = symbol.empty() ? dim_values.end() : dim_values.find(symbol);
      if (it == dim_values.end()) {
        return Status::InvalidArgument(fmt::format(
            "{}: graph input '{}' has dimension {} {} without a value: tuning needs concrete shapes; give it one, "
            "e.g. --set {}=1",
            path_, in.name(), d, symbol.empty() ? "(unnamed)" : "'" + symbol + "'", symbol.empty() ? "DIM" : symbol));
      }
      dim->set_dim_value(it->second);
    }
  }
  return Status::OK();
}

Status OnnxGraph::CheckStructure() {
  const onnx::GraphProto& graph = model_->graph();
  std::set<std::string> defined;
  auto define = [&](const std::string& name, const std::string& by) -> Status {
    if (!defined.insert(name).second) {
      return Status::InvalidArgument(
          fmt::format("{}: tensor '{}' is defined twice (again by {}); ONNX graphs define each tensor once", path_,
                      name, by));
    }
    return Status::OK();
  };
  for (const onnx::TensorProto& t : graph.initializer()) TF_RETURN_IF_ERROR(define(t.name(), "an initializer"));
  for (const onnx::ValueInfoProto& in : graph.input()) {
    if (!defined.count(in.name())) TF_RETURN_IF_ERROR(define(in.name(), "a graph input"));
  }
  for (const GraphNode& n : nodes_) {
    if (!n.proto->domain().empty() && n.proto->domain() != "ai.onnx") {
      return NodeError(n, fmt::format("operator domain '{}' is not supported; tunefarm imports ai.onnx operators",
                                      n.proto->domain()));
    }
    if (!IsSupportedOp(n.op_type)) {
      bool onnx_op = onnx::OpSchemaRegistry::Schema(n.op_type, int(opset_)) != nullptr;
      return NodeError(n, onnx_op ? fmt::format("{} is an ONNX operator tunefarm does not support yet (it imports: {})",
                                                n.op_type, SupportedOpList())
                                  : fmt::format("{} is not an ONNX operator of opset {}", n.op_type, opset_));
    }
    for (const std::string& in : n.inputs) {
      if (!in.empty() && !defined.count(in)) {
        return NodeError(n, fmt::format("reads tensor '{}', which no graph input, initializer or earlier node defines",
                                        in));
      }
    }
    for (const std::string& out : n.outputs) TF_RETURN_IF_ERROR(define(out, n.Where()));
  }
  for (const onnx::ValueInfoProto& out : graph.output()) {
    if (!defined.count(out.name())) {
      return Status::InvalidArgument(
          fmt::format("{}: graph output '{}' is produced by no node, input or initializer", path_, out.name()));
    }
  }
  return Status::OK();
}

Status OnnxGraph::InferShapes() {
  try {
    onnx::checker::check_model(*model_);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(fmt::format("{}: not a valid ONNX model: {}", path_, e.what()));
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type=*/true, /*error_mode=*/1, /*data_prop=*/false);
    onnx::shape_inference::InferShapes(*model_, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(fmt::format("{}: shape inference failed: {}", path_, e.what()));
  }
  return Status::OK();
}

Status OnnxGraph::CollectValues() {
  const onnx::GraphProto& graph = model_->graph();
  std::map<std::string, const onnx::ValueInfoProto*> infos;
  for (const auto& v : graph.value_info()) infos[v.name()] = &v;
  for (const auto& v : graph.output()) infos[v.name()] = &v;
  for (const auto& v : graph.input()) infos[v.name()] = &v;

  for (const onnx::TensorProto& t : graph.initializer()) {
    GraphValue v;
    v.name = t.name();
    v.source = GraphValue::Source::kInitializer;
    v.data = &t;
    TF_ASSIGN_OR_RETURN(v.dtype, TensorDataType(t.data_type(), path_, "initializer '" + t.name() + "'"));
    v.shape.assign(t.dims().begin(), t.dims().end());
    TF_RETURN_IF_ERROR(CheckTensorData(t, v.dtype, path_));
    values_[v.name] = std::move(v);
  }
  for (const onnx::ValueInfoProto& in : graph.input()) {
    if (values_.count(in.name())) continue;
    GraphValue v;
    v.name = in.name();
    v.source = GraphValue::Source::kGraphInput;
    TF_ASSIGN_OR_RETURN(v.dtype, ValueInfoType(in, path_, "graph input '" + in.name() + "'", &v.shape));
    inputs_.push_back(v.name);
    values_[v.name] = std::move(v);
  }
  for (int i = 0; i < int(nodes_.size()); ++i) {
    const GraphNode& n = nodes_[i];
    for (const std::string& in : n.inputs) {
      if (!in.empty()) values_.at(in).consumers.push_back(i);
    }
    for (const std::string& out : n.outputs) {
      GraphValue v;
      v.name = out;
      v.producer = i;
      if (n.proto->op_type() == "Constant") {  // as written, or folded
        const onnx::AttributeProto* value = FindAttr(n, "value");
        if (!value || !value->has_t()) return NodeError(n, "only Constant nodes with a tensor 'value' are supported");
        v.data = &value->t();
        TF_ASSIGN_OR_RETURN(v.dtype, TensorDataType(v.data->data_type(), path_, "constant '" + out + "'"));
        v.shape.assign(v.data->dims().begin(), v.data->dims().end());
        TF_RETURN_IF_ERROR(CheckTensorData(*v.data, v.dtype, path_));
      } else {
        auto it = infos.find(out);
        if (it == infos.end()) {
          return NodeError(n, fmt::format("the shape of its output '{}' could not be inferred", out));
        }
        auto type = ValueInfoType(*it->second, path_, fmt::format("output '{}' of {}", out, n.Where()), &v.shape);
        if (!type.ok()) return type.status();
        v.dtype = *type;
        // A boolean computed at run time (a mask) is stored between tasks as
        // f32 0/1: the tasks compute in f32 and read no other element type.
        if (v.dtype.is_bool()) v.dtype = ir::DataType::Float(32);
      }
      values_[out] = std::move(v);
    }
  }
  for (const onnx::ValueInfoProto& out : graph.output()) {
    values_.at(out.name()).is_output = true;
    outputs_.push_back(out.name());
  }
  return Status::OK();
}

const onnx::AttributeProto* OnnxGraph::FindAttr(const GraphNode& n, const std::string& attr) const {
  for (const onnx::AttributeProto& a : n.proto->attribute()) {
    if (a.name() == attr) return &a;
  }
  return nullptr;
}

const onnx::TensorProto* OnnxGraph::TensorAttr(const GraphNode& n, const std::string& attr) const {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  return a && a->has_t() ? &a->t() : nullptr;
}

Result<int64_t> OnnxGraph::IntAttr(const GraphNode& n, const std::string& attr, int64_t fallback) const {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) return NodeError(n, "attribute '" + attr + "' must be an int");
  return a->i();
}

Result<double> OnnxGraph::FloatAttr(const GraphNode& n, const std::string& attr, double fallback) const {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) return NodeError(n, "attribute '" + attr + "' must be a float");
  return double(a->f());
}

Result<std::vector<int64_t>> OnnxGraph::IntsAttr(const GraphNode& n, const std::string& attr,
                                                 std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS) return NodeError(n, "attribute '" + attr + "' must be a list of ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Result<std::string> OnnxGraph::StringAttr(const GraphNode& n, const std::string& attr, std::string fallback) const {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) return NodeError(n, "attribute '" + attr + "' must be a string");
  return a->s();
}

Result<std::vector<double>> OnnxGraph::ConstantValues(const std::string& name) const {
  const GraphValue& v = values_.at(name);
  if (!v.data) return Status::Internal("ConstantValues of non-constant tensor '" + name + "'");
  return ReadTensorValues(*v.data, v.dtype, std::filesystem::path(path_).parent_path());
}

}  // namespace tunefarm::frontend
