// Workload::Flops, Workload::Validate and WorkloadBuilder.
//
// Validate is the single statement of what a well-formed Workload is; the
// parser runs it on every result and WorkloadBuilder::Build on every build,
// so lowering and the rest of the compiler can rely on it without checks.
#include <set>

#include "tunefarm/compiler/workload/workload.h"

#include "tunefarm/compiler/lower/decompose_strided_gather.h"
#include "workload_ir_util.h"

namespace tunefarm {
namespace {

using ir::Expr;
using ir::IRNodeKind;

constexpr int64_t kMaxDim = int64_t{1} << 31;
constexpr int64_t kMaxElements = int64_t{1} << 40;
constexpr int kMaxBodyDepth = 4096;

bool ContainsLoadOrCall(const Expr& e) {
  if (e.kind() == IRNodeKind::kLoad || e.kind() == IRNodeKind::kCall) return true;
  for (const Expr& c : wl::ExprChildren(e)) {
    if (ContainsLoadOrCall(c)) return true;
  }
  return false;
}

// Operations per iteration. Float arithmetic always counts; integer
// arithmetic counts only on the value path of data (not index math, select
// conditions or comparisons), so an int8 matmul counts its multiply.
double CountOps(const Expr& e, bool value_path) {
  if (!e.defined() || e.kind() == IRNodeKind::kLoad) return 0;
  double n = 0;
  IRNodeKind k = e.kind();
  if (wl::IsArithmetic(k)) {
    if (e.dtype().is_float() || (value_path && e.dtype().is_integer() && ContainsLoadOrCall(e))) n += 1;
  } else if (k == IRNodeKind::kCall) {
    n += 1;
  }
  if (k == IRNodeKind::kSelect) {
    const auto* op = e.as<ir::Select>();
    return n + CountOps(op->condition, false) + CountOps(op->true_value, value_path) +
           CountOps(op->false_value, value_path);
  }
  bool child_path = value_path && !wl::IsComparison(k) && k != IRNodeKind::kAnd &&
                    k != IRNodeKind::kOr && k != IRNodeKind::kNot;
  for (const Expr& c : wl::ExprChildren(e)) n += CountOps(c, child_path);
  return n;
}

Status CheckShape(const ir::Buffer& b, const std::string& what) {
  if (!b) return Status::InvalidArgument(what + " has no buffer");
  if (b->name.empty()) return Status::InvalidArgument(what + " has an empty name");
  if (b->shape.empty()) return Status::InvalidArgument(what + " '" + b->name + "' has no dimensions");
  int64_t n = 1;
  for (int64_t d : b->shape) {
    if (d < 1 || d > kMaxDim) {
      return Status::InvalidArgument(what + " '" + b->name + "' has dimension " + std::to_string(d) +
                                     ", expected an extent in [1, 2^31]");
    }
    if (__builtin_mul_overflow(n, d, &n) || n > kMaxElements) {
      return Status::InvalidArgument(what + " '" + b->name + "' has more than 2^40 elements");
    }
  }
  return Status::OK();
}

class BodyChecker {
 public:
  BodyChecker(const std::string& stage, std::set<const ir::Variable*> vars,
              const std::set<const ir::BufferNode*>& readable)
      : stage_(stage), vars_(std::move(vars)), readable_(readable) {}

  Status Check(const Expr& e, int depth) {
    if (!e.defined()) return Fail("has an undefined expression");
    if (depth > kMaxBodyDepth) return Fail("is nested deeper than " + std::to_string(kMaxBodyDepth));
    IRNodeKind k = e.kind();
    std::vector<Expr> children = wl::ExprChildren(e);
    for (const Expr& c : children) TF_RETURN_IF_ERROR(Check(c, depth + 1));
    if (k == IRNodeKind::kVariable && !vars_.count(e.as<ir::Variable>())) {
      return Fail("uses variable '" + e.as<ir::Variable>()->name + "', which is not an axis of the stage");
    }
    if (k == IRNodeKind::kLoad) {
      const auto* op = e.as<ir::Load>();
      if (!op->buffer || !readable_.count(op->buffer.get())) {
        return Fail("reads '" + (op->buffer ? op->buffer->name : std::string("?")) +
                    "', which is not an input or an earlier stage");
      }
      if (op->indices.size() != op->buffer->shape.size()) {
        return Fail("reads '" + op->buffer->name + "' with " + std::to_string(op->indices.size()) +
                    " indices, expected " + std::to_string(op->buffer->shape.size()));
      }
      for (const Expr& i : op->indices) {
        if (!i.dtype().is_integer()) return Fail("indexes '" + op->buffer->name + "' with a non-integer");
      }
    }
    if (wl::IsArithmetic(k) || wl::IsComparison(k) || k == IRNodeKind::kAnd || k == IRNodeKind::kOr) {
      if (!(children[0].dtype() == children[1].dtype())) return Fail("combines operands of different types");
      bool want_bool = wl::IsComparison(k) || k == IRNodeKind::kAnd || k == IRNodeKind::kOr;
      if (want_bool ? !e.dtype().is_bool() : !(e.dtype() == children[0].dtype())) {
        return Fail("has an operator whose type does not follow its operands");
      }
      if ((k == IRNodeKind::kAnd || k == IRNodeKind::kOr) && !children[0].dtype().is_bool()) {
        return Fail("applies a logical operator to non-bool operands");
      }
    }
    if (k == IRNodeKind::kNot && !children[0].dtype().is_bool()) return Fail("negates a non-bool value");
    if (k == IRNodeKind::kSelect) {
      if (!children[0].dtype().is_bool()) return Fail("has a select with a non-bool condition");
      if (!(children[1].dtype() == e.dtype()) || !(children[2].dtype() == e.dtype())) {
        return Fail("has a select whose branches differ in type");
      }
    }
    return Status::OK();
  }

 private:
  Status Fail(const std::string& what) const {
    return Status::InvalidArgument("stage '" + stage_ + "' " + what);
  }
  const std::string& stage_;
  std::set<const ir::Variable*> vars_;
  const std::set<const ir::BufferNode*>& readable_;
};

Status ValidateStage(const ComputeStage& s, const std::set<const ir::BufferNode*>& readable) {
  TF_RETURN_IF_ERROR(CheckShape(s.output, "stage output"));
  const std::string& name = s.output->name;
  auto fail = [&](const std::string& m) { return Status::InvalidArgument("stage '" + name + "' " + m); };
  if (s.axes.size() != s.output->shape.size()) return fail("has a different number of axes than dimensions");
  std::set<const ir::Variable*> vars;
  auto add_var = [&](const ir::Var& v) -> Status {
    if (!v.defined()) return fail("has an undefined axis");
    if (!(v.dtype() == ir::DataType::Index())) return fail("has axis '" + v.name() + "' that is not i64");
    if (!vars.insert(v.get()).second) return fail("binds axis '" + v.name() + "' twice");
    return Status::OK();
  };
  for (const ir::Var& v : s.axes) TF_RETURN_IF_ERROR(add_var(v));
  if ((s.reduce == ReduceKind::kNone) != s.reduce_axes.empty()) {
    return fail("has reduce axes without a reduction, or a reduction without axes");
  }
  if (s.reduce_axes.size() != s.reduce_extents.size()) return fail("has reduce axes and extents of different counts");
  int64_t iterations = 1;
  for (size_t i = 0; i < s.reduce_axes.size(); ++i) {
    TF_RETURN_IF_ERROR(add_var(s.reduce_axes[i]));
    int64_t d = s.reduce_extents[i];
    if (d < 1 || d > kMaxDim) return fail("has reduce extent " + std::to_string(d) + ", expected [1, 2^31]");
    if (__builtin_mul_overflow(iterations, d, &iterations) || iterations > kMaxElements) {
      return fail("reduces over more than 2^40 iterations");
    }
  }
  if (!s.body.defined()) return fail("has no body");
  if (!(s.body.dtype() == s.output->dtype)) return fail("has a body whose type differs from its output's");
  if (s.reduce != ReduceKind::kNone && s.body.dtype().is_bool()) return fail("reduces bool values");
  return BodyChecker(name, std::move(vars), readable).Check(s.body, 0);
}

}  // namespace

const char* ReduceKindName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kNone: return "none";
    case ReduceKind::kSum: return "sum";
    case ReduceKind::kMax: return "max";
    case ReduceKind::kMin: return "min";
    case ReduceKind::kProd: return "prod";
  }
  return "unknown";
}

double Workload::Flops() const {
  double total = 0;
  for (const ComputeStage& written : stages) {
    if (!written.output || !written.body.defined()) continue;
    // Counted as lowered: a strided gather's skipped taps are no work.
    const ComputeStage s = DecomposeStridedGathers(written);
    double iterations = 1;
    for (int64_t d : s.output->shape) iterations *= static_cast<double>(d);
    for (int64_t d : s.reduce_extents) iterations *= static_cast<double>(d);
    double ops = CountOps(s.body, true) + (s.reduce != ReduceKind::kNone ? 1 : 0);
    total += ops * iterations;
  }
  return total;
}

Status Workload::Validate() const {
  std::set<std::string> names;
  std::set<const ir::BufferNode*> readable;
  for (const ir::Buffer& b : inputs) {
    TF_RETURN_IF_ERROR(CheckShape(b, "input"));
    if (!names.insert(b->name).second) return Status::InvalidArgument("duplicate tensor name '" + b->name + "'");
    readable.insert(b.get());
  }
  for (const ComputeStage& s : stages) {
    TF_RETURN_IF_ERROR(ValidateStage(s, readable));
    if (!names.insert(s.output->name).second) {
      return Status::InvalidArgument("duplicate tensor name '" + s.output->name + "'");
    }
    readable.insert(s.output.get());
  }
  if (outputs.empty()) return Status::InvalidArgument("workload '" + name + "' has no outputs");
  std::set<const ir::BufferNode*> seen;
  for (const ir::Buffer& out : outputs) {
    bool is_stage = false;
    for (const ComputeStage& s : stages) is_stage = is_stage || s.output == out;
    if (!out || !is_stage) {
      return Status::InvalidArgument("output '" + (out ? out->name : std::string("?")) +
                                     "' is not the output of a stage of workload '" + name + "'");
    }
    if (!seen.insert(out.get()).second) return Status::InvalidArgument("output '" + out->name + "' is listed twice");
  }
  return Status::OK();
}

// ------------------------------------------------------------ WorkloadBuilder

WorkloadBuilder::WorkloadBuilder(std::string name) { workload_.name = std::move(name); }

WorkloadBuilder& WorkloadBuilder::Param(std::string name, int64_t value) {
  workload_.params.emplace_back(std::move(name), value);
  return *this;
}

ir::Buffer WorkloadBuilder::Input(std::string name, ir::DataType dtype, std::vector<int64_t> shape) {
  ir::Buffer b = ir::MakeBuffer(std::move(name), dtype, std::move(shape));
  workload_.inputs.push_back(b);
  return b;
}

ir::Buffer WorkloadBuilder::ConstantInput(std::string name, ir::DataType dtype, std::vector<int64_t> shape) {
  auto node = std::make_shared<ir::BufferNode>(*ir::MakeBuffer(std::move(name), dtype, std::move(shape)));
  node->constant = true;
  ir::Buffer b = node;
  workload_.inputs.push_back(b);
  return b;
}

ir::Var WorkloadBuilder::Axis(std::string name) { return ir::Var(std::move(name), ir::DataType::Index()); }

ir::Buffer WorkloadBuilder::Compute(std::string name, std::vector<int64_t> shape, std::vector<ir::Var> axes,
                                    ir::Expr body) {
  return Compute(std::move(name), std::move(shape), std::move(axes), ReduceKind::kNone, {}, {},
                 std::move(body));
}

ir::Buffer WorkloadBuilder::Compute(std::string name, std::vector<int64_t> shape, std::vector<ir::Var> axes,
                                    ReduceKind reduce, std::vector<ir::Var> reduce_axes,
                                    std::vector<int64_t> reduce_extents, ir::Expr body) {
  // An undefined body still gets a buffer; Build reports it.
  ir::DataType dtype = body.defined() ? body.dtype() : ir::DataType::Float(32);
  ComputeStage s;
  s.output = ir::MakeBuffer(std::move(name), dtype, std::move(shape));
  s.axes = std::move(axes);
  s.reduce = reduce;
  s.reduce_axes = std::move(reduce_axes);
  s.reduce_extents = std::move(reduce_extents);
  s.body = std::move(body);
  workload_.stages.push_back(s);
  return s.output;
}

WorkloadBuilder& WorkloadBuilder::Output(const ir::Buffer& tensor) {
  workload_.outputs.push_back(tensor);
  return *this;
}

Result<Workload> WorkloadBuilder::Build() const {
  Status s = workload_.Validate();
  if (!s.ok()) return Status::InvalidArgument("workload '" + workload_.name + "': " + s.message());
  return workload_;
}

}  // namespace tunefarm
