// Syntax of the workload language: tokens -> AstWorkload, plus the public
// ParseWorkload / ParseWorkloadFile entry points.
//
// Map: ParseAst (the Parser class: header, statements, expressions by
// precedence climbing), then ParseWorkload = Lex + ParseAst + Analyze.
// Recursion is bounded twice: by the nesting counter (parentheses, unary
// operators, call arguments) and by the depth of the tree being built (long
// left-associative chains such as 1+1+1+... build deep trees without deep
// recursion), so that later recursive passes cannot overflow the stack.
#include <algorithm>
#include <fstream>
#include <sstream>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "workload_ast.h"
#include "workload_sema.h"

namespace tunefarm::wl {
namespace {

constexpr std::string_view kReserved[] = {
    "workload", "input", "output", "select", "sum",  "prod",  "min",  "max",  "exp",
    "log",      "sqrt",  "rsqrt",  "tanh",   "sigmoid", "abs", "pow", "floor", "ceil",
    "erf",      "f16",   "f32",    "f64",    "i8",   "i16",   "i32",  "i64",  "u8",
    "u16",      "u32",   "u64",    "bool",
};

int Precedence(Tok kind) {
  switch (kind) {
    case Tok::kOrOr: return 1;
    case Tok::kAndAnd: return 2;
    case Tok::kLt: case Tok::kLe: case Tok::kGt: case Tok::kGe: case Tok::kEq: case Tok::kNe:
      return 3;
    case Tok::kPlus: case Tok::kMinus: return 4;
    case Tok::kStar: case Tok::kSlash: case Tok::kPercent: return 5;
    default: return 0;
  }
}

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& source)
      : tokens_(tokens), source_(source) {}

  Result<AstWorkload> Run() {
    AstWorkload w;
    if (Cur().kind == Tok::kEnd) {
      return Error("empty workload text, expected 'workload NAME(PARAM = VALUE, ...) { ... }'");
    }
    if (!IsWord("workload")) {
      return Error("unexpected " + Describe(Cur()) + ", expected 'workload NAME(...) { ... }'");
    }
    Next();
    TF_RETURN_IF_ERROR(ExpectName("the workload's name", &w.name, &w.pos));
    w.params_pos = Cur().pos;
    if (Accept(Tok::kLParen)) {
      if (!Accept(Tok::kRParen)) {
        do {
          AstParam p;
          TF_RETURN_IF_ERROR(ExpectName("a parameter name", &p.name, &p.pos));
          TF_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' and the parameter's value"));
          TF_ASSIGN_OR_RETURN(p.value, ParseExpr());
          w.params.push_back(std::move(p));
        } while (Accept(Tok::kComma));
        TF_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')' after a parameter"));
      }
    }
    SourcePos open = Cur().pos;
    TF_RETURN_IF_ERROR(Expect(Tok::kLBrace, "'{' to open the workload's body"));
    bool after_separator = true;
    while (true) {
      if (Cur().kind == Tok::kEnd) {
        return Error("unterminated block: the '{' at " + PosText(open) +
                     " is never closed, expected '}'");
      }
      if (Accept(Tok::kRBrace)) break;
      if (Accept(Tok::kSemicolon)) {
        after_separator = true;
        continue;
      }
      if (!after_separator && !Cur().starts_line) {
        return Error("unexpected " + Describe(Cur()) +
                     " after the end of a statement, expected a new line or ';'");
      }
      TF_RETURN_IF_ERROR(ParseStatement(&w));
      after_separator = false;
    }
    w.close_pos = tokens_[pos_ - 1].pos;
    if (Cur().kind != Tok::kEnd) {
      return Error("unexpected " + Describe(Cur()) +
                   " after the end of the workload, expected end of file (one workload per text)");
    }
    return Result<AstWorkload>(std::move(w));
  }

 private:
  const Token& Cur() const { return tokens_[pos_]; }
  const Token& Peek(size_t k) const {
    return pos_ + k < tokens_.size() ? tokens_[pos_ + k] : tokens_.back();
  }
  void Next() {
    if (tokens_[pos_].kind != Tok::kEnd) ++pos_;
  }
  bool IsWord(std::string_view word) const {
    return Cur().kind == Tok::kIdent && Cur().text == word;
  }
  bool Accept(Tok kind) {
    if (Cur().kind != kind) return false;
    Next();
    return true;
  }
  Status Error(const std::string& message) const { return ErrorAt(source_, Cur().pos, message); }
  static std::string PosText(SourcePos p) {
    return std::to_string(p.line) + ":" + std::to_string(p.col);
  }
  Status Expect(Tok kind, const std::string& what) {
    if (Accept(kind)) return Status::OK();
    return Error("unexpected " + Describe(Cur()) + ", expected " + what);
  }
  Status ExpectName(const std::string& what, std::string_view* name, SourcePos* p) {
    if (Cur().kind != Tok::kIdent) return Error("unexpected " + Describe(Cur()) + ", expected " + what);
    if (IsReservedWord(Cur().text)) {
      return Error("'" + std::string(Cur().text) + "' is a reserved word, expected " + what);
    }
    *name = Cur().text;
    *p = Cur().pos;
    Next();
    return Status::OK();
  }

  Status ParseStatement(AstWorkload* w) {
    if (IsWord("output")) {
      Next();
      do {
        AstOutput out;
        TF_RETURN_IF_ERROR(ExpectName("the name of a tensor to output", &out.name, &out.pos));
        w->outputs.push_back(out);
      } while (Accept(Tok::kComma));
      return Status::OK();
    }
    if (!w->outputs.empty()) {
      return Error("unexpected " + Describe(Cur()) +
                   " after 'output', expected more 'output' lines or '}' (outputs come last)");
    }
    if (Cur().kind != Tok::kIdent) {
      return Error("unexpected " + Describe(Cur()) +
                   ", expected a statement: NAME = input ..., NAME[axes] = ..., or output NAME");
    }
    std::string_view name;
    SourcePos name_pos;
    TF_RETURN_IF_ERROR(ExpectName("a tensor name", &name, &name_pos));
    if (Accept(Tok::kAssign)) return ParseInput(w, name, name_pos);
    if (Cur().kind == Tok::kLBracket) return ParseStage(w, name, name_pos);
    return Error("unexpected " + Describe(Cur()) + " after '" + std::string(name) +
                 "', expected '= input DTYPE[...]' or '[axes] = expression'");
  }

  Status ParseInput(AstWorkload* w, std::string_view name, SourcePos name_pos) {
    if (!IsWord("input")) {
      return Error("unexpected " + Describe(Cur()) +
                   ", expected 'input DTYPE[shape]' (a compute stage is written NAME[axes] = ...)");
    }
    Next();
    AstInput in;
    in.name = name;
    in.pos = name_pos;
    // `input const`: the same value on every call (weights).
    if (IsWord("const")) {
      in.constant = true;
      Next();
    }
    in.dtype_pos = Cur().pos;
    std::optional<ir::DataType> dtype;
    if (Cur().kind == Tok::kIdent) dtype = ParseDTypeName(Cur().text);
    if (!dtype) {
      return Error("unexpected " + Describe(Cur()) +
                   ", expected an element type (f16 f32 f64 i8 i16 i32 i64 u8 bool)" +
                   std::string(in.constant ? "" : " or 'const'"));
    }
    in.dtype = *dtype;
    Next();
    TF_RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' and the input's shape"));
    do {
      TF_ASSIGN_OR_RETURN(AstExprPtr dim, ParseExpr());
      in.shape.push_back(std::move(dim));
    } while (Accept(Tok::kComma));
    TF_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']' after a dimension"));
    w->decls.push_back({true, w->inputs.size()});
    w->inputs.push_back(std::move(in));
    return Status::OK();
  }

  Status ParseAxis(bool extent_required, AstAxis* axis) {
    TF_RETURN_IF_ERROR(ExpectName("an axis name", &axis->name, &axis->pos));
    if (Accept(Tok::kColon)) {
      TF_ASSIGN_OR_RETURN(axis->extent, ParseExpr());
    } else if (extent_required) {
      return Error("unexpected " + Describe(Cur()) + ", expected ':' and the extent of axis '" +
                   std::string(axis->name) + "'");
    }
    return Status::OK();
  }

  static ReduceKind ReduceKindOf(std::string_view word) {
    if (word == "sum") return ReduceKind::kSum;
    if (word == "max") return ReduceKind::kMax;
    if (word == "min") return ReduceKind::kMin;
    if (word == "prod") return ReduceKind::kProd;
    return ReduceKind::kNone;
  }
  // True at `sum(k:`, `max(k:`, ...: the `name:` form tells a reduction from max(a, b).
  bool AtReduction() const {
    return Cur().kind == Tok::kIdent && ReduceKindOf(Cur().text) != ReduceKind::kNone &&
           Peek(1).kind == Tok::kLParen && Peek(2).kind == Tok::kIdent &&
           Peek(3).kind == Tok::kColon;
  }

  Status ParseStage(AstWorkload* w, std::string_view name, SourcePos name_pos) {
    AstStage st;
    st.name = name;
    st.pos = name_pos;
    Next();  // '['
    do {
      AstAxis axis;
      TF_RETURN_IF_ERROR(ParseAxis(false, &axis));
      st.axes.push_back(std::move(axis));
    } while (Accept(Tok::kComma));
    TF_RETURN_IF_ERROR(Expect(Tok::kRBracket, "',' or ']' after an axis"));
    TF_RETURN_IF_ERROR(Expect(Tok::kAssign, "'=' and the stage's expression"));
    if (AtReduction()) {
      st.reduce = ReduceKindOf(Cur().text);
      st.reduce_pos = Cur().pos;
      Next();
      Next();  // '('
      do {
        AstAxis axis;
        TF_RETURN_IF_ERROR(ParseAxis(true, &axis));
        st.reduce_axes.push_back(std::move(axis));
      } while (Accept(Tok::kComma));
      TF_RETURN_IF_ERROR(Expect(Tok::kRParen, "',' or ')' after a reduction axis"));
    } else if (Cur().kind == Tok::kIdent && (Cur().text == "sum" || Cur().text == "prod")) {
      return ErrorAt(source_, Peek(1).kind == Tok::kLParen ? Peek(2).pos : Peek(1).pos,
                     "a reduction needs its axes, expected '" + std::string(Cur().text) +
                         "(k: EXTENT, ...) expression'");
    }
    TF_ASSIGN_OR_RETURN(st.body, ParseExpr());
    w->decls.push_back({false, w->stages.size()});
    w->stages.push_back(std::move(st));
    return Status::OK();
  }

  // ------------------------------------------------------------ expressions

  AstExprPtr MakeNode(AstExpr::Kind kind, SourcePos p) {
    auto node = std::make_unique<AstExpr>();
    node->kind = kind;
    node->pos = p;
    node->start = p;
    return node;
  }
  Status AddChild(AstExpr* parent, AstExprPtr child) {
    parent->depth = std::max(parent->depth, child->depth + 1);
    parent->args.push_back(std::move(child));
    if (parent->depth > kMaxDepth) {
      return ErrorAt(source_, parent->pos,
                     "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                         " levels), expected a simpler expression or intermediate stages");
    }
    return Status::OK();
  }

  // Counts nesting of the recursive descent; see the file comment.
  struct NestGuard {
    explicit NestGuard(int* n) : n_(n) { ++*n_; }
    ~NestGuard() { --*n_; }
    int* n_;
  };
  // Recursion per tree level is at most a few calls (operand, parenthesis,
  // unary), so this limit only guards the stack; the tree depth limit is the
  // one users meet.
  Status CheckNesting() const {
    if (nesting_ > 4 * kMaxDepth) {
      return Error("expression nested too deeply (more than " + std::to_string(kMaxDepth) +
                   " levels), expected a simpler expression");
    }
    return Status::OK();
  }

  Result<AstExprPtr> ParseExpr() { return ParseBinary(1); }

  Result<AstExprPtr> ParseBinary(int min_prec) {
    TF_ASSIGN_OR_RETURN(AstExprPtr lhs, ParseUnary());
    while (true) {
      Tok op = Cur().kind;
      int prec = Precedence(op);
      if (prec == 0 || prec < min_prec) return Result<AstExprPtr>(std::move(lhs));
      SourcePos op_pos = Cur().pos;
      Next();
      TF_ASSIGN_OR_RETURN(AstExprPtr rhs, ParseBinaryOperand(prec + 1));
      AstExprPtr node = MakeNode(AstExpr::Kind::kBinary, op_pos);
      node->op = op;
      node->start = lhs->start;
      TF_RETURN_IF_ERROR(AddChild(node.get(), std::move(lhs)));
      TF_RETURN_IF_ERROR(AddChild(node.get(), std::move(rhs)));
      lhs = std::move(node);
    }
  }
  Result<AstExprPtr> ParseBinaryOperand(int min_prec) {
    NestGuard guard(&nesting_);
    TF_RETURN_IF_ERROR(CheckNesting());
    return ParseBinary(min_prec);
  }

  Result<AstExprPtr> ParseUnary() {
    NestGuard guard(&nesting_);
    TF_RETURN_IF_ERROR(CheckNesting());
    if (Cur().kind == Tok::kMinus || Cur().kind == Tok::kBang) {
      AstExprPtr node = MakeNode(AstExpr::Kind::kUnary, Cur().pos);
      node->op = Cur().kind;
      Next();
      TF_ASSIGN_OR_RETURN(AstExprPtr operand, ParseUnary());
      TF_RETURN_IF_ERROR(AddChild(node.get(), std::move(operand)));
      return Result<AstExprPtr>(std::move(node));
    }
    return ParsePrimary();
  }

  Result<AstExprPtr> ParsePrimary() {
    const Token& t = Cur();
    if (t.kind == Tok::kInt || t.kind == Tok::kFloat) {
      AstExprPtr node = MakeNode(t.kind == Tok::kInt ? AstExpr::Kind::kInt : AstExpr::Kind::kFloat, t.pos);
      node->int_value = t.int_value;
      node->float_value = t.float_value;
      node->text = t.text;
      Next();
      return Result<AstExprPtr>(std::move(node));
    }
    if (Accept(Tok::kLParen)) {
      SourcePos open_pos = t.pos;
      TF_ASSIGN_OR_RETURN(AstExprPtr inner, ParseExpr());
      inner->start = open_pos;
      TF_RETURN_IF_ERROR(Expect(Tok::kRParen, "')' to close the parenthesis"));
      return Result<AstExprPtr>(std::move(inner));
    }
    if (t.kind != Tok::kIdent) {
      return Error("unexpected " + Describe(t) + ", expected an expression");
    }
    if (AtReduction() || ((t.text == "sum" || t.text == "prod") && Peek(1).kind == Tok::kLParen)) {
      return Error("a reduction must be the whole body of a stage, expected an expression "
                   "(compute the reduction in its own stage)");
    }
    SourcePos name_pos = t.pos;
    std::string_view name = t.text;
    Next();
    Tok open = Cur().kind;
    if (open != Tok::kLParen && open != Tok::kLBracket) {
      AstExprPtr node = MakeNode(AstExpr::Kind::kName, name_pos);
      node->text = name;
      return Result<AstExprPtr>(std::move(node));
    }
    AstExprPtr node =
        MakeNode(open == Tok::kLParen ? AstExpr::Kind::kCall : AstExpr::Kind::kAccess, name_pos);
    node->text = name;
    Next();
    Tok close = open == Tok::kLParen ? Tok::kRParen : Tok::kRBracket;
    if (!Accept(close)) {
      do {
        TF_ASSIGN_OR_RETURN(AstExprPtr arg, ParseExpr());
        TF_RETURN_IF_ERROR(AddChild(node.get(), std::move(arg)));
      } while (Accept(Tok::kComma));
      TF_RETURN_IF_ERROR(Expect(close, close == Tok::kRParen ? "',' or ')' after an argument"
                                                             : "',' or ']' after an index"));
    }
    return Result<AstExprPtr>(std::move(node));
  }

  const std::vector<Token>& tokens_;
  const std::string& source_;
  size_t pos_ = 0;
  int nesting_ = 0;
};

}  // namespace

bool IsReservedWord(std::string_view name) {
  for (std::string_view word : kReserved) {
    if (word == name) return true;
  }
  return false;
}

std::optional<ir::DataType> ParseDTypeName(std::string_view name) {
  struct Entry {
    std::string_view name;
    ir::DataType dtype;
  };
  static constexpr Entry kTypes[] = {
      {"f16", ir::DataType::Float(16)}, {"f32", ir::DataType::Float(32)},
      {"f64", ir::DataType::Float(64)}, {"i8", ir::DataType::Int(8)},
      {"i16", ir::DataType::Int(16)},   {"i32", ir::DataType::Int(32)},
      {"i64", ir::DataType::Int(64)},   {"u8", ir::DataType::UInt(8)},
      {"u16", ir::DataType::UInt(16)},  {"u32", ir::DataType::UInt(32)},
      {"u64", ir::DataType::UInt(64)},  {"bool", ir::DataType::Bool()},
  };
  for (const Entry& e : kTypes) {
    if (e.name == name) return e.dtype;
  }
  return std::nullopt;
}

std::string DTypeName(ir::DataType dtype) {
  if (dtype.lanes == 1) {
    switch (dtype.code) {
      case ir::DataType::Code::kFloat: return "f" + std::to_string(dtype.bits);
      case ir::DataType::Code::kInt: return "i" + std::to_string(dtype.bits);
      case ir::DataType::Code::kUInt: return "u" + std::to_string(dtype.bits);
      case ir::DataType::Code::kBool: return "bool";
      default: break;
    }
  }
  return dtype.ToString();
}

Result<AstWorkload> ParseAst(const std::vector<Token>& tokens, const std::string& source) {
  return Parser(tokens, source).Run();
}

}  // namespace tunefarm::wl

namespace tunefarm {

Result<Workload> ParseWorkload(std::string_view text, const ParseOptions& options) {
  TF_ASSIGN_OR_RETURN(std::vector<wl::Token> tokens, wl::Lex(text, options.source_name));
  TF_ASSIGN_OR_RETURN(wl::AstWorkload ast, wl::ParseAst(tokens, options.source_name));
  return wl::Analyze(ast, options);
}

Result<Workload> ParseWorkloadFile(const std::string& path, const ParseOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open workload file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read workload file '" + path + "'");
  ParseOptions with_name = options;
  with_name.source_name = path;
  return ParseWorkload(text.str(), with_name);
}

}  // namespace tunefarm
