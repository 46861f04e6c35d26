// Statements of the workload language: parameters and their overrides,
// shapes, inputs, stages (axes, reductions, extent inference) and outputs.
// Expression typing lives in workload_expr_builder.cpp.
//
// Map: EvalShapeExpr -> Analyzer::Params -> Analyzer::Declare (duplicate
// names) -> Analyzer::Input / Analyzer::Stage -> Analyzer::Outputs.
#include <set>

#include "workload_sema.h"

namespace tunefarm::wl {
namespace {

std::string PosText(SourcePos p) { return std::to_string(p.line) + ":" + std::to_string(p.col); }

// Finds the extent of `axis` from a use as a bare index of a defined tensor,
// e.g. A[i, k] gives i the extent of A's first dimension.
std::optional<int64_t> InferExtent(const AstExpr& e, std::string_view axis,
                                   const std::map<std::string, TensorDecl, std::less<>>& tensors) {
  if (e.kind == AstExpr::Kind::kAccess) {
    auto it = tensors.find(e.text);
    if (it != tensors.end() && it->second.buffer && it->second.buffer->shape.size() == e.args.size()) {
      for (size_t d = 0; d < e.args.size(); ++d) {
        const AstExpr& arg = *e.args[d];
        if (arg.kind == AstExpr::Kind::kName && arg.text == axis) return it->second.buffer->shape[d];
      }
    }
  }
  for (const AstExprPtr& arg : e.args) {
    if (std::optional<int64_t> r = InferExtent(*arg, axis, tensors)) return r;
  }
  return std::nullopt;
}

class Analyzer {
 public:
  Analyzer(const AstWorkload& ast, const ParseOptions& options)
      : ast_(ast), options_(options), source_(options.source_name) {}

  Result<Workload> Run() {
    w_.name = std::string(ast_.name);
    TF_RETURN_IF_ERROR(Params());
    TF_RETURN_IF_ERROR(Declare());
    for (const AstDecl& decl : ast_.decls) {
      if (decl.is_input) {
        TF_RETURN_IF_ERROR(Input(ast_.inputs[decl.index]));
      } else {
        TF_RETURN_IF_ERROR(Stage(ast_.stages[decl.index]));
      }
    }
    TF_RETURN_IF_ERROR(Outputs());
    Status valid = w_.Validate();
    if (!valid.ok()) {
      return Status::Internal(source_ + ": the parsed workload fails validation: " + valid.message());
    }
    return std::move(w_);
  }

 private:
  Status Error(SourcePos pos, const std::string& message) const { return ErrorAt(source_, pos, message); }

  Status Params() {
    for (const auto& [name, value] : options_.param_overrides) {
      bool found = false;
      for (const AstParam& p : ast_.params) found = found || p.name == name;
      if (!found) {
        std::string known;
        for (const AstParam& p : ast_.params) known += (known.empty() ? "" : ", ") + std::string(p.name);
        return Error(ast_.params_pos, "parameter override '" + name + "' names no parameter of workload '" +
                                          w_.name + "', expected one of: " + (known.empty() ? "(none)" : known));
      }
    }
    for (const AstParam& p : ast_.params) {
      std::string name(p.name);
      if (params_.count(name)) return Error(p.pos, "duplicate parameter '" + name + "', expected a new name");
      int64_t value;
      auto over = options_.param_overrides.find(name);
      if (over != options_.param_overrides.end()) {
        value = over->second;
        if (value < 0 || value > kMaxParam) {
          return Error(p.pos, "parameter '" + name + "' is overridden to " + std::to_string(value) +
                                  ", expected a value in [0, " + std::to_string(kMaxParam) + "]");
        }
      } else {
        TF_ASSIGN_OR_RETURN(value, EvalShapeExpr(*p.value, params_, source_));
        if (value < 0 || value > kMaxParam) {
          return Error(p.value->start, "parameter '" + name + "' = " + std::to_string(value) +
                                           ", expected a value in [0, " + std::to_string(kMaxParam) + "]");
        }
      }
      params_[name] = value;
      w_.params.emplace_back(name, value);
    }
    return Status::OK();
  }

  // Registers every tensor name up front, so that reading a tensor declared
  // further down gets "read before it is defined" rather than "unknown".
  Status Declare() {
    auto add = [&](std::string_view name, SourcePos pos) -> Status {
      std::string n(name);
      if (params_.count(n)) {
        return Error(pos, "duplicate name '" + n + "' (a parameter of the workload), expected a new name");
      }
      auto it = tensors_.find(n);
      if (it != tensors_.end()) {
        return Error(pos, "duplicate name '" + n + "' (first defined at " + PosText(it->second.pos) +
                              "), expected a new name");
      }
      tensors_[n] = TensorDecl{nullptr, pos};
      return Status::OK();
    };
    for (const AstDecl& decl : ast_.decls) {
      if (decl.is_input) {
        TF_RETURN_IF_ERROR(add(ast_.inputs[decl.index].name, ast_.inputs[decl.index].pos));
      } else {
        TF_RETURN_IF_ERROR(add(ast_.stages[decl.index].name, ast_.stages[decl.index].pos));
      }
    }
    return Status::OK();
  }

  Result<int64_t> Extent(const AstExpr& e, const std::string& what) {
    TF_ASSIGN_OR_RETURN(int64_t v, EvalShapeExpr(e, params_, source_));
    if (v < 1 || v > kMaxDim) {
      return Error(e.start, what + " is " + std::to_string(v) + ", expected an extent in [1, " +
                                std::to_string(kMaxDim) + "]");
    }
    return v;
  }

  Status CheckElements(const std::vector<int64_t>& shape, const std::string& what, SourcePos pos) {
    int64_t n = 1;
    for (int64_t d : shape) {
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) {
        return Error(pos, what + " has more than 2^40 elements, expected a smaller shape");
      }
    }
    return Status::OK();
  }

  Status Input(const AstInput& in) {
    std::vector<int64_t> shape;
    std::string name(in.name);
    for (size_t d = 0; d < in.shape.size(); ++d) {
      TF_ASSIGN_OR_RETURN(int64_t v, Extent(*in.shape[d], "dimension " + std::to_string(d) + " of '" + name + "'"));
      shape.push_back(v);
    }
    TF_RETURN_IF_ERROR(CheckElements(shape, "input '" + name + "'", in.pos));
    auto node = std::make_shared<ir::BufferNode>(*ir::MakeBuffer(name, in.dtype, shape));
    node->constant = in.constant;
    ir::Buffer buffer = node;
    tensors_[name].buffer = buffer;
    w_.inputs.push_back(buffer);
    return Status::OK();
  }

  Status NewAxisName(const AstAxis& axis, const StageScope& scope) {
    std::string n(axis.name);
    if (params_.count(n)) return Error(axis.pos, "axis '" + n + "' has the name of a parameter, expected a new name");
    if (tensors_.count(n)) return Error(axis.pos, "axis '" + n + "' has the name of a tensor, expected a new name");
    if (scope.axes.count(n)) return Error(axis.pos, "duplicate axis '" + n + "' in this stage, expected a new name");
    return Status::OK();
  }

  Status Stage(const AstStage& st) {
    std::string name(st.name);
    StageScope scope;
    scope.source = &source_;
    scope.params = &params_;
    scope.tensors = &tensors_;
    ComputeStage stage;
    std::vector<int64_t> shape;
    for (const AstAxis& axis : st.axes) {
      TF_RETURN_IF_ERROR(NewAxisName(axis, scope));
      std::string axis_name(axis.name);
      int64_t extent;
      if (axis.extent) {
        TF_ASSIGN_OR_RETURN(extent, Extent(*axis.extent, "extent of axis '" + axis_name + "'"));
      } else {
        std::optional<int64_t> inferred = InferExtent(*st.body, axis.name, tensors_);
        if (!inferred) {
          return Error(axis.pos, "cannot infer the extent of axis '" + axis_name + "'; write " + name + "[" +
                                     axis_name + ": <extent>, ...], expected an extent or a use of '" +
                                     axis_name + "' as a tensor index");
        }
        extent = *inferred;
      }
      ir::Var var(axis_name, ir::DataType::Index());
      scope.axes[axis_name] = var;
      scope.ranges[var.get()] = ir::Interval{0, extent - 1};
      stage.axes.push_back(var);
      shape.push_back(extent);
    }
    TF_RETURN_IF_ERROR(CheckElements(shape, "stage '" + name + "'", st.pos));
    stage.reduce = st.reduce;
    std::vector<int64_t> reduce_shape;
    for (const AstAxis& axis : st.reduce_axes) {
      TF_RETURN_IF_ERROR(NewAxisName(axis, scope));
      std::string axis_name(axis.name);
      TF_ASSIGN_OR_RETURN(int64_t extent, Extent(*axis.extent, "extent of reduction axis '" + axis_name + "'"));
      ir::Var var(axis_name, ir::DataType::Index());
      scope.axes[axis_name] = var;
      scope.ranges[var.get()] = ir::Interval{0, extent - 1};
      stage.reduce_axes.push_back(var);
      stage.reduce_extents.push_back(extent);
      reduce_shape.push_back(extent);
    }
    TF_RETURN_IF_ERROR(CheckElements(reduce_shape, "the reduction of '" + name + "'", st.reduce_pos));
    TF_ASSIGN_OR_RETURN(stage.body, BuildStageBody(*st.body, scope));
    ir::DataType dtype = stage.body.dtype();
    if (st.reduce != ReduceKind::kNone && dtype.is_bool()) {
      return Error(st.reduce_pos, std::string(ReduceKindName(st.reduce)) +
                                      " of bool values, expected a numeric expression");
    }
    stage.output = ir::MakeBuffer(name, dtype, shape);
    tensors_[name].buffer = stage.output;
    w_.stages.push_back(std::move(stage));
    return Status::OK();
  }

  Status Outputs() {
    if (ast_.outputs.empty()) {
      return Error(ast_.close_pos, "workload '" + w_.name +
                                       "' has no outputs, expected 'output NAME' before the closing '}'");
    }
    std::set<std::string> seen;
    for (const AstOutput& out : ast_.outputs) {
      std::string name(out.name);
      auto it = tensors_.find(name);
      if (it == tensors_.end()) return Error(out.pos, "unknown tensor '" + name + "', expected the name of a stage");
      bool is_input = false;
      for (const ir::Buffer& b : w_.inputs) is_input = is_input || b == it->second.buffer;
      if (is_input) return Error(out.pos, "'" + name + "' is an input, expected the name of a compute stage");
      if (!seen.insert(name).second) return Error(out.pos, "duplicate output '" + name + "', expected each output once");
      w_.outputs.push_back(it->second.buffer);
    }
    return Status::OK();
  }

  const AstWorkload& ast_;
  const ParseOptions& options_;
  const std::string& source_;
  Workload w_;
  ParamMap params_;
  std::map<std::string, TensorDecl, std::less<>> tensors_;
};

}  // namespace

Result<int64_t> EvalShapeExpr(const AstExpr& e, const ParamMap& params, const std::string& source) {
  auto error = [&](SourcePos pos, const std::string& m) { return ErrorAt(source, pos, m); };
  switch (e.kind) {
    case AstExpr::Kind::kInt: return e.int_value;
    case AstExpr::Kind::kName: {
      auto it = params.find(e.text);
      if (it == params.end()) {
        return error(e.pos, "unknown parameter '" + std::string(e.text) +
                                "' in a shape, expected a parameter declared in workload(...)");
      }
      return it->second;
    }
    case AstExpr::Kind::kUnary: {
      if (e.op != Tok::kMinus) break;
      TF_ASSIGN_OR_RETURN(int64_t v, EvalShapeExpr(*e.args[0], params, source));
      if (v == INT64_MIN) return error(e.pos, "integer overflow in a shape, expected smaller values");
      return -v;
    }
    case AstExpr::Kind::kBinary:
    case AstExpr::Kind::kCall: {
      bool is_minmax = e.kind == AstExpr::Kind::kCall && (e.text == "min" || e.text == "max") && e.args.size() == 2;
      if (e.kind == AstExpr::Kind::kCall && !is_minmax) break;
      if (e.kind == AstExpr::Kind::kBinary && e.op != Tok::kPlus && e.op != Tok::kMinus &&
          e.op != Tok::kStar && e.op != Tok::kSlash && e.op != Tok::kPercent) {
        break;
      }
      TF_ASSIGN_OR_RETURN(int64_t a, EvalShapeExpr(*e.args[0], params, source));
      TF_ASSIGN_OR_RETURN(int64_t b, EvalShapeExpr(*e.args[1], params, source));
      int64_t r = 0;
      bool overflow = false;
      if (is_minmax) return e.text == "min" ? std::min(a, b) : std::max(a, b);
      switch (e.op) {
        case Tok::kPlus: overflow = __builtin_add_overflow(a, b, &r); break;
        case Tok::kMinus: overflow = __builtin_sub_overflow(a, b, &r); break;
        case Tok::kStar: overflow = __builtin_mul_overflow(a, b, &r); break;
        default: {
          if (b == 0) return error(e.pos, "division by zero in a shape, expected a non-zero divisor");
          if (a == INT64_MIN && b == -1) {
            overflow = true;
            break;
          }
          int64_t q = a / b, m = a % b;
          if (m != 0 && ((m < 0) != (b < 0))) {
            --q;
            m += b;
          }
          r = e.op == Tok::kSlash ? q : m;  // floor division and modulo, as in bodies
        }
      }
      if (overflow) return error(e.pos, "integer overflow in a shape, expected smaller values");
      return r;
    }
    default: break;
  }
  return error(e.start, "this is not allowed in a shape, expected an integer expression of the parameters "
                        "(numbers, parameters, + - * / %, min, max)");
}

Result<Workload> Analyze(const AstWorkload& ast, const ParseOptions& options) {
  return Analyzer(ast, options).Run();
}

}  // namespace tunefarm::wl
