// Semantic analysis of the workload language (private to compiler/).
//
// Analyze (workload_sema.cpp) resolves names, applies parameter overrides,
// evaluates shapes, infers output axis extents and checks the statements;
// BuildStageBody (workload_expr_builder.cpp) turns one stage body into typed
// IR, applying the literal typing rules and checking every tensor access
// against the tensor's shape. All errors are positioned InvalidArgument.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "workload_ast.h"
#include "workload_bounds.h"

namespace tunefarm::wl {

// Limits on what a workload may describe, so that later stages never see
// overflowing sizes.
inline constexpr int64_t kMaxDim = int64_t{1} << 31;
inline constexpr int64_t kMaxElements = int64_t{1} << 40;
inline constexpr int64_t kMaxParam = int64_t{1} << 31;

using ParamMap = std::map<std::string, int64_t, std::less<>>;

struct TensorDecl {
  ir::Buffer buffer;  // null while the tensor is declared below the current stage
  SourcePos pos;
};

struct StageScope {
  const std::string* source = nullptr;
  const ParamMap* params = nullptr;
  // Every tensor of the workload by name; those not yet defined have no buffer.
  const std::map<std::string, TensorDecl, std::less<>>* tensors = nullptr;
  // The stage's axes and reduce axes by name, with their ranges.
  std::map<std::string, ir::Var, std::less<>> axes;
  VarRanges ranges;
};

// Evaluates an integer expression of the parameters (a shape, an extent, a
// parameter's default), overflow-checked.
Result<int64_t> EvalShapeExpr(const AstExpr& e, const ParamMap& params, const std::string& source);

// Builds the IR of a stage body.
Result<ir::Expr> BuildStageBody(const AstExpr& body, const StageScope& scope);

// The whole analysis: syntax tree -> validated Workload.
Result<Workload> Analyze(const AstWorkload& ast, const ParseOptions& options);

}  // namespace tunefarm::wl
