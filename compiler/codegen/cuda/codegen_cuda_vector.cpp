// CudaKernelEmitter: vectorized loops of 2 or 4 lanes as float2 / float4
// (int4, double2, ...) loads and stores.
//
// The loop's body must be stores only (under guards that do not depend on
// the lane once floor divisions by the lanes are split, LaneSplitter). Each lane's value is printed with the
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

// A number that provably divides e's value (0: e is 0), from its
// immediates: sums keep the gcd, products multiply, x % c keeps gcd(x's, c).
int64_t KnownDivisor(const Expr& e) {
  if (const int64_t* c = AsConstInt(e)) return *c < 0 ? -*c : *c;
  if (const auto* op = e.as<Add>()) return std::gcd(KnownDivisor(op->a), KnownDivisor(op->b));
  if (const auto* op = e.as<Sub>()) return std::gcd(KnownDivisor(op->a), KnownDivisor(op->b));
  if (const auto* op = e.as<Mul>()) {
    int64_t d = 0;
    return __builtin_mul_overflow(KnownDivisor(op->a), KnownDivisor(op->b), &d) ? 1 : d;
  }
  if (const auto* op = e.as<Mod>()) {
    const int64_t* c = AsConstInt(op->b);
    return c && *c > 0 ? std::gcd(KnownDivisor(op->a), *c) : 1;
  }
  if (const auto* op = e.as<Select>()) return std::gcd(KnownDivisor(op->true_value), KnownDivisor(op->false_value));
  return 1;
}

// Rewrites floor divisions by the lanes: where x = r + v with r a provable
// multiple of `lanes`, v the lane (in [0, lanes)) and c a multiple of
// `lanes`, x / c is r / c and x % c is r % c + v -- the lanes never cross a
// multiple of c. The cooperative fetch's fused index f splits into a row
// f / width and a column f % width this way, contiguous in the lane.
class LaneSplitter : public IRMutator {
 public:
  LaneSplitter(Var v, int64_t lanes) : v_(std::move(v)), lanes_(lanes) {}
  using IRMutator::Mutate;

 protected:
  Expr MutateDiv(const Div* op, const Expr& self) override { return Split(IRMutator::MutateDiv(op, self), true); }
  Expr MutateMod(const Mod* op, const Expr& self) override { return Split(IRMutator::MutateMod(op, self), false); }

 private:
  Expr Split(const Expr& e, bool is_div) {
    const Expr& a = is_div ? e.as<Div>()->a : e.as<Mod>()->a;
    const Expr& b = is_div ? e.as<Div>()->b : e.as<Mod>()->b;
    const int64_t* c = AsConstInt(b);
    if (!c || *c <= 0 || *c % lanes_ != 0 || !a.dtype().is_int()) return e;
    int64_t v_coef = 0;
    Expr rest = IntImm::Make(a.dtype(), 0);
    bool ok = Linearize(a, 1, [&](const Expr& term, int64_t scale) {
      if (term.as<Variable>() == v_.get()) {
        v_coef += scale;
        return true;
      }
      if (UsesVar(term, v_.get())) return false;
      rest = Add::Make(rest, Mul::Make(term, IntImm::Make(a.dtype(), scale)));
      return true;
    });
    if (!ok || v_coef != 1) return e;
    rest = Simplify(rest);
    if (KnownDivisor(rest) % lanes_ != 0) return e;
    return is_div ? Div::Make(rest, b) : Add::Make(Mod::Make(rest, b), Expr(v_));
  }

  Var v_;
  int64_t lanes_;
};

// True when `flat` is base + v with base free of v and a provable multiple of lanes.
bool ContiguousAligned(const Expr& flat_in, const For* loop, int64_t lanes) {
  const Variable* v = loop->loop_var.get();
  Expr flat = LaneSplitter(loop->loop_var, lanes).Mutate(flat_in);
  int64_t v_coef = 0, divisor = 0;
  bool ok = Linearize(flat, 1, [&](const Expr& term, int64_t scale) {
    if (term.as<Variable>() == v) {
      v_coef += scale;
      return true;
    }
    if (UsesVar(term, v)) return false;
    int64_t d = 1;
    if (__builtin_mul_overflow(scale, KnownDivisor(term), &d)) d = 1;
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
    if (branch->else_case.defined()) break;
    if (UsesVar(LaneSplitter(op->loop_var, lanes).Mutate(branch->condition), v)) break;
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
        (VectorType(s->buffer->dtype, lanes).empty() || !ContiguousAligned(flat, op, lanes))) {
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
  lane_value_[v] = 0;  // the guards hold for every lane or none: lane 0 says which
  for (const Expr& g : guards) guard += (guard.empty() ? "" : " && ") + EmitExpr(g);
  lane_value_.erase(v);
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
      if (l->buffer->scope == MemoryScope::kLocal || vt.empty() || !ContiguousAligned(flat, op, lanes)) continue;
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
      values.push_back(StoreValue(s->buffer, s->value.dtype(), EmitExpr(s->value)));
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
