// Syntax tree of the workload language (private to compiler/).
//
// The parser (workload_parser.cpp) builds it from tokens with no knowledge of
// names or types; semantic analysis (workload_sema.cpp) resolves names,
// evaluates shapes and turns stage bodies into IR (workload_expr_builder.cpp).
// Invariant: no expression tree is deeper than kMaxDepth, so every recursive
// walk over it (including destruction) has bounded stack use.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/compiler/workload/workload.h"
#include "workload_lexer.h"

namespace tunefarm::wl {

inline constexpr int kMaxDepth = 256;

struct AstExpr {
  enum class Kind : uint8_t {
    kInt,     // int_value
    kFloat,   // float_value
    kName,    // name: an axis or a parameter
    kAccess,  // name[args...]: a tensor element
    kUnary,   // op args[0]: '-' or '!'
    kBinary,  // args[0] op args[1]
    kCall,    // name(args...): select, min, max, math functions, casts
  };
  Kind kind = Kind::kInt;
  SourcePos pos;        // of the token that names the node (operator for unary/binary)
  SourcePos start;      // of the expression's first token
  int depth = 1;        // 1 + depth of the deepest child
  Tok op = Tok::kEnd;   // kUnary / kBinary
  int64_t int_value = 0;
  double float_value = 0.0;
  std::string_view text;  // literal spelling or name
  std::vector<std::unique_ptr<AstExpr>> args;
};
using AstExprPtr = std::unique_ptr<AstExpr>;

struct AstParam {
  std::string_view name;
  SourcePos pos;
  AstExprPtr value;
};

struct AstInput {
  std::string_view name;
  SourcePos pos;
  ir::DataType dtype;
  SourcePos dtype_pos;
  std::vector<AstExprPtr> shape;
  bool constant = false;  // declared `input const`
};

struct AstAxis {
  std::string_view name;
  SourcePos pos;
  AstExprPtr extent;  // null when to be inferred (output axes only)
};

struct AstStage {
  std::string_view name;
  SourcePos pos;
  std::vector<AstAxis> axes;
  ReduceKind reduce = ReduceKind::kNone;
  SourcePos reduce_pos;
  std::vector<AstAxis> reduce_axes;
  AstExprPtr body;
};

struct AstOutput {
  std::string_view name;
  SourcePos pos;
};

// Inputs and stages in source order: index into inputs or stages.
struct AstDecl {
  bool is_input;
  size_t index;
};

struct AstWorkload {
  std::string_view name;
  SourcePos pos;
  SourcePos params_pos;
  std::vector<AstParam> params;
  std::vector<AstInput> inputs;
  std::vector<AstStage> stages;
  std::vector<AstDecl> decls;
  std::vector<AstOutput> outputs;
  SourcePos close_pos;  // the closing '}'
};

// Words that cannot name a workload, parameter, tensor or axis.
bool IsReservedWord(std::string_view name);

// Element type names: f16 f32 f64 i8 i16 i32 i64 u8 u16 u32 u64 bool.
std::optional<ir::DataType> ParseDTypeName(std::string_view name);
// The inverse of ParseDTypeName ("f32"); other types get DataType::ToString.
std::string DTypeName(ir::DataType dtype);

// Parses tokens (from Lex) into a syntax tree.
Result<AstWorkload> ParseAst(const std::vector<Token>& tokens, const std::string& source);

}  // namespace tunefarm::wl
