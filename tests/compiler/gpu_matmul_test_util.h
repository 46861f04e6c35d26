// A hand-built GPU matmul, the shape the CUDA sketch rules produce: a block
// computes a TM x TN tile of C with one thread per element; a serial k0 loop
// fetches TM x TK of A and TK x TN of B into shared memory cooperatively
// (inner loops bound to the same threadIdx.x as the thread's own loop), then
// accumulates into a kLocal buffer, and the tile is written back guarded.
// Built over the params of the default matmul PrimFunc (kMatmul), so that
// both run on the same buffers.
#pragma once

#include <cstdint>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::testing {

struct GpuMatmulOptions {
  int64_t tm = 4, tn = 8, tk = 5;     // tm * tk must not exceed tm * tn (A's fetch has one pass)
  bool barriers = true;               // the barrier after the fetch and the one ending the k0 body
  int drop_barrier = -1;              // with barriers: leave out the first (0) or the second (1)
  bool shared_under_threads = false;  // the shared Allocates inside the threadIdx.x loop (compute_at)
};

inline ir::PrimFunc GpuMatmul(const ir::PrimFunc& base, const GpuMatmulOptions& o = {}) {
  using namespace ir;
  const Buffer a = base.params[0], b = base.params[1], c = base.params[2];
  const int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
  const int64_t threads = o.tm * o.tn;
  const DataType f32 = DataType::Float(32);
  Buffer a_sh = MakeBuffer("A_shared", f32, {o.tm, o.tk}, MemoryScope::kShared);
  Buffer b_sh = MakeBuffer("B_shared", f32, {o.tk, o.tn}, MemoryScope::kShared);
  Buffer acc = MakeBuffer("C_local", f32, {1}, MemoryScope::kLocal);
  Var by("by"), bx("bx"), tx("tx"), k0("k0"), k1("k1"), fa("fa"), fo("fo"), fb("fb");
  Expr row0 = Expr(by) * o.tm, col0 = Expr(bx) * o.tn;
  auto in_range = [](Expr i, int64_t hi, Expr j, int64_t hj) {
    return And::Make(LT::Make(i, Expr(hi)), LT::Make(j, Expr(hj)));
  };

  Expr ar = Expr(fa) / o.tk, ac = Expr(fa) % o.tk;
  Expr a_row = row0 + ar, a_col = Expr(k0) * o.tk + ac;
  Stmt fetch_a = For::Make(
      fa, Expr(0), Expr(o.tm * o.tk), ForKind::kThreadBinding,
      Store::Make(a_sh, Select::Make(in_range(a_row, m, a_col, k), Load::Make(a, {a_row, a_col}), Expr(0.0)), {ar, ac}),
      "threadIdx.x");
  Expr f = Expr(fo) * threads + fb;
  Expr br = f / o.tn, bc = f % o.tn;
  Expr b_row = Expr(k0) * o.tk + br, b_col = col0 + bc;
  Stmt store_b =
      Store::Make(b_sh, Select::Make(in_range(b_row, k, b_col, n), Load::Make(b, {b_row, b_col}), Expr(0.0)), {br, bc});
  Stmt fetch_b = For::Make(fo, Expr(0), Expr((o.tk * o.tn + threads - 1) / threads), ForKind::kSerial,
                           For::Make(fb, Expr(0), Expr(threads), ForKind::kThreadBinding,
                                     IfThenElse::Make(LT::Make(f, Expr(o.tk * o.tn)), store_b), "threadIdx.x"));
  Stmt compute = For::Make(k1, Expr(0), Expr(o.tk), ForKind::kSerial,
                           Store::Make(acc,
                                       Load::Make(acc, {Expr(0)}) + Load::Make(a_sh, {Expr(tx) / o.tn, k1}) *
                                                                        Load::Make(b_sh, {k1, Expr(tx) % o.tn}),
                                       {Expr(0)}));
  std::vector<Stmt> k_body = {fetch_a, fetch_b};
  if (o.barriers && o.drop_barrier != 0) k_body.push_back(Barrier::Make());
  k_body.push_back(compute);
  if (o.barriers && o.drop_barrier != 1) k_body.push_back(Barrier::Make());

  Expr row = row0 + Expr(tx) / o.tn, col = col0 + Expr(tx) % o.tn;
  Stmt thread_body = Allocate::Make(
      acc, SeqStmt::Make(
               {Store::Make(acc, Expr(0.0), {Expr(0)}),
                For::Make(k0, Expr(0), Expr((k + o.tk - 1) / o.tk), ForKind::kSerial, SeqStmt::Make(k_body)),
                IfThenElse::Make(in_range(row, m, col, n), Store::Make(c, Load::Make(acc, {Expr(0)}), {row, col}))}));
  auto with_shared = [&](Stmt s) { return Allocate::Make(a_sh, Allocate::Make(b_sh, std::move(s))); };
  if (o.shared_under_threads) thread_body = with_shared(thread_body);
  Stmt block = For::Make(tx, Expr(0), Expr(threads), ForKind::kThreadBinding, thread_body, "threadIdx.x");
  if (!o.shared_under_threads) block = with_shared(block);
  Stmt kernel = For::Make(
      by, Expr(0), Expr((m + o.tm - 1) / o.tm), ForKind::kThreadBinding,
      For::Make(bx, Expr(0), Expr((n + o.tn - 1) / o.tn), ForKind::kThreadBinding, block, "blockIdx.x"), "blockIdx.y");
  return PrimFunc{base.name + "_gpu", base.params, base.num_inputs, kernel};
}

}  // namespace tunefarm::testing
