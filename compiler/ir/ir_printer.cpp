// Readable IR text. Expressions print fully parenthesised except at the top,
// integer index immediates print bare, other immediates carry their type
// (`0f`, `1.5f`, `(i8)3`), and statements print as an indented tree:
//
//   func matmul(A: f32[64, 64], B: f32[64, 64], C: f32[64, 64]) {
//     for i in [0, 64) parallel {
//       block C(vi: 64 = i, vk: 64 reduce = k) {
//         init { C[vi, vj] = 0f }
//         C[vi, vj] = (C[vi, vj] + (A[vi, vk] * B[vk, vj]))
//       }
//     }
//   }
#include "tunefarm/compiler/ir/ir_printer.h"

#include <cstdio>
#include <ostream>
#include <sstream>

#include "tunefarm/compiler/ir/ir_visitor.h"

namespace tunefarm::ir {

namespace {

std::string FormatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class Printer : public IRVisitor {
 public:
  explicit Printer(std::ostream& os) : os_(os) {}
  using IRVisitor::Visit;

  void PrintFunc(const PrimFunc& f) {
    os_ << "func " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Buffer& b = f.params[i];
      os_ << (i ? ", " : "") << b->name << ": " << b->dtype.ToString() << ShapeString(b->shape);
    }
    os_ << ") {\n";
    indent_ = 1;
    Visit(f.body);
    os_ << "}\n";
  }

 protected:
  void Indent() {
    for (int i = 0; i < indent_; ++i) os_ << "  ";
  }

  void VisitIntImm(const IntImm* op) override {
    if (op->dtype == DataType::Index()) {
      os_ << op->value;
    } else if (op->dtype.is_bool()) {
      os_ << (op->value ? "true" : "false");
    } else {
      os_ << "(" << op->dtype.ToString() << ")" << op->value;
    }
  }
  void VisitFloatImm(const FloatImm* op) override {
    os_ << FormatFloat(op->value);
    if (op->dtype == DataType::Float(32)) {
      os_ << "f";
    } else {
      os_ << "(" << op->dtype.ToString() << ")";
    }
  }
  void VisitVariable(const Variable* op) override { os_ << op->name; }

  void Binary(const Expr& a, const char* sym, const Expr& b) {
    os_ << "(";
    Visit(a);
    os_ << " " << sym << " ";
    Visit(b);
    os_ << ")";
  }
  void Func2(const char* name, const Expr& a, const Expr& b) {
    os_ << name << "(";
    Visit(a);
    os_ << ", ";
    Visit(b);
    os_ << ")";
  }
  void VisitAdd(const Add* op) override { Binary(op->a, "+", op->b); }
  void VisitSub(const Sub* op) override { Binary(op->a, "-", op->b); }
  void VisitMul(const Mul* op) override { Binary(op->a, "*", op->b); }
  void VisitDiv(const Div* op) override { Binary(op->a, "/", op->b); }
  void VisitMod(const Mod* op) override { Binary(op->a, "%", op->b); }
  void VisitMin(const Min* op) override { Func2("min", op->a, op->b); }
  void VisitMax(const Max* op) override { Func2("max", op->a, op->b); }
  void VisitEQ(const EQ* op) override { Binary(op->a, "==", op->b); }
  void VisitNE(const NE* op) override { Binary(op->a, "!=", op->b); }
  void VisitLT(const LT* op) override { Binary(op->a, "<", op->b); }
  void VisitLE(const LE* op) override { Binary(op->a, "<=", op->b); }
  void VisitGT(const GT* op) override { Binary(op->a, ">", op->b); }
  void VisitGE(const GE* op) override { Binary(op->a, ">=", op->b); }
  void VisitAnd(const And* op) override { Binary(op->a, "&&", op->b); }
  void VisitOr(const Or* op) override { Binary(op->a, "||", op->b); }
  void VisitNot(const Not* op) override {
    os_ << "!";
    Visit(op->a);
  }
  void VisitSelect(const Select* op) override {
    os_ << "select(";
    Visit(op->condition);
    os_ << ", ";
    Visit(op->true_value);
    os_ << ", ";
    Visit(op->false_value);
    os_ << ")";
  }
  void VisitCast(const Cast* op) override {
    os_ << op->dtype.ToString() << "(";
    Visit(op->value);
    os_ << ")";
  }
  void VisitLoad(const Load* op) override {
    os_ << op->buffer->name;
    PrintIndices(op->indices);
  }
  void VisitCall(const Call* op) override {
    os_ << CallOpName(op->op) << "(";
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i) os_ << ", ";
      Visit(op->args[i]);
    }
    os_ << ")";
  }
  void PrintIndices(const std::vector<Expr>& indices) {
    os_ << "[";
    for (size_t i = 0; i < indices.size(); ++i) {
      if (i) os_ << ", ";
      Visit(indices[i]);
    }
    os_ << "]";
  }

  void VisitBody(const Stmt& body) {
    ++indent_;
    Visit(body);
    --indent_;
  }

  void VisitFor(const For* op) override {
    Indent();
    os_ << "for " << op->loop_var.name() << " in [";
    Visit(op->min);
    os_ << ", ";
    if (AsConstInt(op->min) && *AsConstInt(op->min) == 0) {
      Visit(op->extent);
    } else {
      Visit(op->min + op->extent);
    }
    os_ << ")";
    if (op->kind != ForKind::kSerial) os_ << " " << ForKindName(op->kind);
    if (!op->thread_tag.empty()) os_ << "(\"" << op->thread_tag << "\")";
    for (const auto& [key, value] : op->annotations) os_ << " @" << key << "=" << value;
    os_ << " {\n";
    VisitBody(op->body);
    Indent();
    os_ << "}\n";
  }
  void VisitStore(const Store* op) override {
    Indent();
    os_ << op->buffer->name;
    PrintIndices(op->indices);
    os_ << " = ";
    Visit(op->value);
    os_ << "\n";
  }
  void VisitBarrier(const Barrier*) override {
    Indent();
    os_ << "barrier()\n";
  }
  void VisitAllocate(const Allocate* op) override {
    Indent();
    os_ << "allocate " << op->buffer->name << ": " << op->buffer->dtype.ToString()
        << ShapeString(op->buffer->shape) << " " << MemoryScopeName(op->buffer->scope) << "\n";
    Visit(op->body);
  }
  void VisitLetStmt(const LetStmt* op) override {
    Indent();
    os_ << "let " << op->var.name() << " = ";
    Visit(op->value);
    os_ << "\n";
    Visit(op->body);
  }
  void VisitIfThenElse(const IfThenElse* op) override {
    Indent();
    os_ << "if ";
    Visit(op->condition);
    os_ << " {\n";
    VisitBody(op->then_case);
    Indent();
    if (op->else_case.defined()) {
      os_ << "} else {\n";
      VisitBody(op->else_case);
      Indent();
    }
    os_ << "}\n";
  }
  void VisitSeqStmt(const SeqStmt* op) override {
    for (const Stmt& s : op->seq) Visit(s);
  }
  void VisitBlock(const Block* op) override {
    Indent();
    os_ << "block " << op->name << "(";
    for (size_t i = 0; i < op->iter_vars.size(); ++i) {
      const IterVar& iv = op->iter_vars[i];
      os_ << (i ? ", " : "") << iv.var.name() << ": " << iv.extent
          << (iv.kind == IterKind::kReduce ? " reduce" : "") << " = ";
      Visit(iv.binding);
    }
    os_ << ")";
    if (op->predicate.defined()) {
      os_ << " where ";
      Visit(op->predicate);
    }
    os_ << " {\n";
    ++indent_;
    if (op->init.defined()) {
      Indent();
      os_ << "init {\n";
      VisitBody(op->init);
      Indent();
      os_ << "}\n";
    }
    Visit(op->body);
    --indent_;
    Indent();
    os_ << "}\n";
  }
  void VisitEvaluate(const Evaluate* op) override {
    Indent();
    Visit(op->value);
    os_ << "\n";
  }

 private:
  std::ostream& os_;
  int indent_ = 0;
};

}  // namespace

std::string ToString(const Expr& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}
std::string ToString(const Stmt& s) {
  std::ostringstream os;
  os << s;
  return os.str();
}
std::string ToString(const PrimFunc& f) {
  std::ostringstream os;
  os << f;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  if (!e.defined()) return os << "<undefined>";
  Printer(os).Visit(e);
  return os;
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
  if (!s.defined()) return os << "<undefined>\n";
  Printer(os).Visit(s);
  return os;
}
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) {
  Printer(os).PrintFunc(f);
  return os;
}

}  // namespace tunefarm::ir
