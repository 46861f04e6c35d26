// CudaKernelEmitter: vectorized loops of 2 or 4 lanes as float2 / float4
// (int4, double2, ...) loads and stores.
//
// The loop's body must be stores only (under guards that do not depend on
// the loop variable). Each lane's value is printed with the
// loop variable replaced by the lane; a load that every lane makes
// unconditionally, contiguous in the loop variable and aligned to the vector
// (its index without the loop variable is a provable multiple of the lanes),
// is one vector load ahead of the lanes, and each lane reads its component.
// Stores to global or shared memory must be contiguous and aligned (one vector
// store); stores to a thread's local array stay per lane (a vector store
// through a cast pointer would force the array out of registers). Anything
// else keeps the scalar loop (unrolled). Serial lane order is kept: a load of
// a buffer the loop stores must read the element its own lane stores.
#include <cstdlib>
#include <numeric>

#include "codegen_cuda_internal.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/linearize.h"

namespace tunefarm::cuda::detail {

using namespace ir;

namespace {

const char* const kLaneNames[] = {"x", "y", "z", "w"};

// The vector type of `lanes` elements of t, at most 16 bytes; empty when none.
std::string VectorType(DataType t, int64_t lanes) {
  if (lanes * t.bytes() > 16 || t.lanes != 1) return "";
  std::string base;
  if (t == DataType::Float(32)) {
    base = "float";
  } else if (t == DataType::Int(32)) {
    base = "int";
  } else if (t == DataType::UInt(32)) {
    base = "uint";
  } else if (t == DataType::Float(64)) {
    base = "double";
  } else if (t == DataType::Int(64)) {
    base = "longlong";
  } else if (t == DataType::UInt(64)) {
    base = "ulonglong";
  } else {
    return "";
  }
  return base + std::to_string(lanes);
}

// True when `flat` is base + v with base free of v and a provable multiple of lanes.
bool ContiguousAligned(const Expr& flat, const Variable* v, int64_t lanes) {
  int64_t v_coef = 0, divisor = 0;
  bool ok = Linearize(flat, 1, [&](const Expr& term, int64_t scale) {
    if (term.as<Variable>() == v) {
      v_coef += scale;
      return true;
    }
    if (UsesVar(term, v)) return false;
    int64_t d = scale;
    if (const int64_t* c = AsConstInt(term); c && __builtin_mul_overflow(scale, *c, &d)) d = 1;
    divisor = std::gcd(divisor, d < 0 ? -d : d);
    return true;
  });
  return ok && v_coef == 1 && divisor % lanes == 0;
}

// Loads in e, in order; `all` false leaves out those only some evaluations make
// (under a select's branches, the right side of && and ||).
void CollectLoads(const Expr& e, bool all, std::vector<const Load*>& out) {
  if (!e.defined()) return;
  if (const auto* op = e.as<Load>()) {
    out.push_back(op);
    if (all) {
      for (const Expr& i : op->indices) CollectLoads(i, all, out);
    }
    return;
  }
  if (const auto* op = e.as<Select>(); op && !all) return CollectLoads(op->condition, all, out);
  if (const auto* op = e.as<And>(); op && !all) return CollectLoads(op->a, all, out);
  if (const auto* op = e.as<Or>(); op && !all) return CollectLoads(op->a, all, out);
  struct Children : IRVisitor {
    std::vector<Expr> kids;
    void Visit(const Expr& x) override { kids.push_back(x); }
  } children;
  // The default hooks visit each direct child once through Visit(const Expr&).
  children.IRVisitor::Visit(e);
  for (const Expr& k : children.kids) {
    if (!k.same_as(e)) CollectLoads(k, all, out);
  }
}

}  // namespace

bool CudaKernelEmitter::TryEmitVectorLoop(const For* op) {
  const int64_t lanes = *AsConstInt(op->extent);
  const Variable* v = op->loop_var.get();
  // A guard that does not depend on the lanes (a non-divisible split's
  // predicate) is tested once for the whole vector.
  std::vector<Expr> guards;
  Stmt body = op->body;
  while (const auto* branch = body.as<IfThenElse>()) {
    if (branch->else_case.defined() || UsesVar(branch->condition, v)) break;
    guards.push_back(branch->condition);
    body = branch->then_case;
  }
  std::vector<const Store*> stores;
  if (const auto* s = body.as<Store>()) {
    stores.push_back(s);
  } else if (const auto* seq = body.as<SeqStmt>()) {
    for (const Stmt& item : seq->seq) {
      if (!item.as<Store>()) return false;
      stores.push_back(item.as<Store>());
    }
  } else {
    return false;
  }
  std::map<const BufferNode*, Expr> stored;
  std::vector<Expr> flats;
  for (const Store* s : stores) {
    Expr flat = FlatIndex(s->buffer, s->indices);
    auto [it, fresh] = stored.emplace(s->buffer.get(), flat);
    if (!fresh && !ExprEqual(it->second, flat)) return false;
    flats.push_back(flat);
    if (s->buffer->scope != MemoryScope::kLocal &&
        (VectorType(s->buffer->dtype, lanes).empty() || !ContiguousAligned(flat, v, lanes))) {
      return false;
    }
  }
  for (const Store* s : stores) {
    std::vector<const Load*> loads;
    CollectLoads(s->value, true, loads);
    for (const Load* l : loads) {
      auto it = stored.find(l->buffer.get());
      if (it != stored.end() && !ExprEqual(it->second, FlatIndex(l->buffer, l->indices))) return false;
    }
  }

  std::string guard;
  for (const Expr& g : guards) guard += (guard.empty() ? "" : " && ") + EmitExpr(g);
  Line((guard.empty() ? "{" : "if (" + guard + ") {") + std::string("  // ") + op->loop_var.name() + ": " +
       std::to_string(lanes) + " lanes");
  ++indent_;
  for (size_t i = 0; i < stores.size() && status_.ok(); ++i) {
    const Store* s = stores[i];
    std::vector<const Load*> loads;
    CollectLoads(s->value, false, loads);
    std::map<const Load*, std::string> vectors;
    lane_value_[v] = 0;
    for (const Load* l : loads) {
      std::string vt = VectorType(l->dtype, lanes);
      Expr flat = FlatIndex(l->buffer, l->indices);
      if (l->buffer->scope == MemoryScope::kLocal || vt.empty() || !ContiguousAligned(flat, v, lanes)) continue;
      std::string tmp = names_->Fresh(l->buffer->name + "_vec");
      NoteRead(l->buffer);
      Line("const " + vt + " " + tmp + " = *reinterpret_cast<const " + vt + "*>(" + BufferName(l->buffer) + " + " +
           EmitIndex(flat) + ");");
      vectors[l] = tmp;
    }
    std::vector<std::string> values;
    for (int64_t k = 0; k < lanes; ++k) {
      lane_value_[v] = k;
      for (const auto& [l, tmp] : vectors) load_subst_[l] = tmp + "." + kLaneNames[k];
      std::string value = EmitExpr(s->value);
      if (s->value.dtype() != s->buffer->dtype) value = "((" + CType(s->buffer->dtype) + ")" + value + ")";
      values.push_back(value);
    }
    load_subst_.clear();
    const Buffer& b = s->buffer;
    if (b->scope != MemoryScope::kLocal) {
      if (!on_chip_.count(b.get())) writes_.insert(b.get());
      std::string vt = VectorType(b->dtype, lanes);
      std::string out = names_->Fresh(b->name + "_out");
      Line(vt + " " + out + ";");
      for (int64_t k = 0; k < lanes; ++k) Line(out + "." + kLaneNames[k] + " = " + values[size_t(k)] + ";");
      lane_value_[v] = 0;
      Line("*reinterpret_cast<" + vt + "*>(" + BufferName(b) + " + " + EmitIndex(flats[i]) + ") = " + out + ";");
    } else {
      for (int64_t k = 0; k < lanes; ++k) {
        lane_value_[v] = k;
        Line(BufferName(b) + "[" + EmitIndex(flats[i]) + "] = " + values[size_t(k)] + ";");
      }
    }
    lane_value_.erase(v);
  }
  lane_value_.erase(v);
  --indent_;
  Line("}");
  return true;
}

}  // namespace tunefarm::cuda::detail
