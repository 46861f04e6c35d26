// StructuralHash and StructurallyEqual: workload identity up to renaming.
//
// Tensors are identified by declaration index (inputs first, then stages in
// order) and variables by binding position within their stage (axes, then
// reduce axes), so names, comments, whitespace and parameter names never
// matter, while shapes, dtypes, reductions, bodies and outputs do. The hash
// is the database key of a workload, so it must be stable across runs,
// compilers and machines: it uses only fixed-width arithmetic on values
// (FNV-1a style for strings, a splitmix64 finaliser for mixing), never
// std::hash or pointer values.
#include <bit>
#include <cstdio>
#include <map>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "workload_ir_util.h"

namespace tunefarm {
namespace {

using ir::Expr;
using ir::IRNodeKind;

uint64_t Mix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 31;
  return x;
}

uint64_t HashString(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

uint64_t HashType(ir::DataType t) {
  return (uint64_t(t.code) << 32) | (uint64_t(t.bits) << 16) | uint64_t(t.lanes);
}

// Positions of the workload's tensors and of one stage's variables.
struct Naming {
  std::map<const ir::BufferNode*, uint64_t> tensors;
  std::map<const ir::Variable*, uint64_t> vars;
};

Naming TensorNaming(const Workload& w) {
  Naming n;
  uint64_t i = 0;
  for (const ir::Buffer& b : w.inputs) n.tensors[b.get()] = i++;
  for (const ComputeStage& s : w.stages) n.tensors[s.output.get()] = i++;
  return n;
}

void BindStageVars(const ComputeStage& s, Naming* n) {
  n->vars.clear();
  uint64_t i = 0;
  for (const ir::Var& v : s.axes) n->vars[v.get()] = i++;
  for (const ir::Var& v : s.reduce_axes) n->vars[v.get()] = i++;
}

// Operators: their kind, dtype and children say all there is (and the
// statement kinds, which are not expressions).
#define TF_OPERATOR_CASES                                                                                  \
  case IRNodeKind::kAdd: case IRNodeKind::kSub: case IRNodeKind::kMul: case IRNodeKind::kDiv:              \
  case IRNodeKind::kMod: case IRNodeKind::kMin: case IRNodeKind::kMax: case IRNodeKind::kEQ:               \
  case IRNodeKind::kNE: case IRNodeKind::kLT: case IRNodeKind::kLE: case IRNodeKind::kGT:                  \
  case IRNodeKind::kGE: case IRNodeKind::kAnd: case IRNodeKind::kOr: case IRNodeKind::kNot:                \
  case IRNodeKind::kSelect: case IRNodeKind::kCast:                                                        \
  TF_STMT_KIND_CASES

uint64_t HashExpr(const Expr& e, const Naming& n) {
  if (!e.defined()) return 0x5EED;
  uint64_t h = Mix(uint64_t(e.kind()) + 1, HashType(e.dtype()));
  switch (e.kind()) {
    case IRNodeKind::kIntImm: h = Mix(h, uint64_t(e.as<ir::IntImm>()->value)); break;
    case IRNodeKind::kFloatImm: h = Mix(h, std::bit_cast<uint64_t>(e.as<ir::FloatImm>()->value)); break;
    case IRNodeKind::kVariable: {
      auto it = n.vars.find(e.as<ir::Variable>());
      h = it != n.vars.end() ? Mix(h, it->second) : Mix(h ^ 1, HashString(e.as<ir::Variable>()->name));
      break;
    }
    case IRNodeKind::kLoad: {
      const ir::Buffer& b = e.as<ir::Load>()->buffer;
      auto it = n.tensors.find(b.get());
      h = it != n.tensors.end() ? Mix(h, it->second) : Mix(h ^ 1, b ? HashString(b->name) : 0);
      break;
    }
    case IRNodeKind::kCall: h = Mix(h, uint64_t(e.as<ir::Call>()->op)); break;
    TF_OPERATOR_CASES
      break;
  }
  std::vector<Expr> children = wl::ExprChildren(e);
  h = Mix(h, children.size());
  for (const Expr& c : children) h = Mix(h, HashExpr(c, n));
  return h;
}

uint64_t HashBuffer(uint64_t h, const ir::Buffer& b) {
  if (!b) return Mix(h, 0xDEAD);
  h = Mix(h, HashType(b->dtype));
  h = Mix(h, b->shape.size());
  for (int64_t d : b->shape) h = Mix(h, uint64_t(d));
  // Mixed in only when set: workloads without `const` keep their hashes.
  if (b->constant) h = Mix(h, 0xC0157);
  return h;
}

bool EqualExpr(const Expr& a, const Naming& na, const Expr& b, const Naming& nb) {
  if (a.defined() != b.defined()) return false;
  if (!a.defined()) return true;
  if (a.kind() != b.kind() || !(a.dtype() == b.dtype())) return false;
  switch (a.kind()) {
    case IRNodeKind::kIntImm:
      if (a.as<ir::IntImm>()->value != b.as<ir::IntImm>()->value) return false;
      break;
    case IRNodeKind::kFloatImm:
      if (std::bit_cast<uint64_t>(a.as<ir::FloatImm>()->value) !=
          std::bit_cast<uint64_t>(b.as<ir::FloatImm>()->value)) {
        return false;
      }
      break;
    case IRNodeKind::kVariable: {
      auto ia = na.vars.find(a.as<ir::Variable>());
      auto ib = nb.vars.find(b.as<ir::Variable>());
      if (ia == na.vars.end() || ib == nb.vars.end()) {
        // Free variables (not valid in a workload) compare by name.
        if (ia != na.vars.end() || ib != nb.vars.end()) return false;
        if (a.as<ir::Variable>()->name != b.as<ir::Variable>()->name) return false;
      } else if (ia->second != ib->second) {
        return false;
      }
      break;
    }
    case IRNodeKind::kLoad: {
      auto ia = na.tensors.find(a.as<ir::Load>()->buffer.get());
      auto ib = nb.tensors.find(b.as<ir::Load>()->buffer.get());
      if (ia == na.tensors.end() || ib == nb.tensors.end() || ia->second != ib->second) return false;
      break;
    }
    case IRNodeKind::kCall:
      if (a.as<ir::Call>()->op != b.as<ir::Call>()->op) return false;
      break;
    TF_OPERATOR_CASES
      break;
  }
  std::vector<Expr> ca = wl::ExprChildren(a), cb = wl::ExprChildren(b);
  if (ca.size() != cb.size()) return false;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (!EqualExpr(ca[i], na, cb[i], nb)) return false;
  }
  return true;
}

bool EqualBuffer(const ir::Buffer& a, const ir::Buffer& b) {
  if (!a || !b) return !a && !b;
  return a->dtype == b->dtype && a->shape == b->shape && a->constant == b->constant;
}

std::vector<uint64_t> OutputIndices(const Workload& w, const Naming& n) {
  std::vector<uint64_t> out;
  for (const ir::Buffer& b : w.outputs) {
    auto it = n.tensors.find(b.get());
    out.push_back(it != n.tensors.end() ? it->second : ~uint64_t{0});
  }
  return out;
}

}  // namespace

uint64_t StructuralHash(const Workload& w) {
  Naming n = TensorNaming(w);
  uint64_t h = Mix(0x7475'6E65'6661'726Dull, w.inputs.size());  // "tunefarm"
  for (const ir::Buffer& b : w.inputs) h = HashBuffer(h, b);
  h = Mix(h, w.stages.size());
  for (const ComputeStage& s : w.stages) {
    BindStageVars(s, &n);
    h = HashBuffer(h, s.output);
    h = Mix(h, s.axes.size());
    h = Mix(h, uint64_t(s.reduce));
    h = Mix(h, s.reduce_extents.size());
    for (int64_t d : s.reduce_extents) h = Mix(h, uint64_t(d));
    h = Mix(h, HashExpr(s.body, n));
  }
  for (uint64_t i : OutputIndices(w, n)) h = Mix(h, i);
  return h;
}

std::string StructuralHashHex(const Workload& w) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(StructuralHash(w)));
  return buf;
}

bool StructurallyEqual(const Workload& a, const Workload& b) {
  if (a.inputs.size() != b.inputs.size() || a.stages.size() != b.stages.size()) return false;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    if (!EqualBuffer(a.inputs[i], b.inputs[i])) return false;
  }
  Naming na = TensorNaming(a), nb = TensorNaming(b);
  for (size_t i = 0; i < a.stages.size(); ++i) {
    const ComputeStage& sa = a.stages[i];
    const ComputeStage& sb = b.stages[i];
    if (!EqualBuffer(sa.output, sb.output) || sa.axes.size() != sb.axes.size() || sa.reduce != sb.reduce ||
        sa.reduce_axes.size() != sb.reduce_axes.size() || sa.reduce_extents != sb.reduce_extents) {
      return false;
    }
    BindStageVars(sa, &na);
    BindStageVars(sb, &nb);
    if (!EqualExpr(sa.body, na, sb.body, nb)) return false;
  }
  return OutputIndices(a, na) == OutputIndices(b, nb);
}

}  // namespace tunefarm
