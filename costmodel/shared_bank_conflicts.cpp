// Vector width and bank conflicts of one shared-memory access (the header
// says what is modelled).
//
// Addresses are evaluated, not derived from linear forms: the accesses of a
// kernel's compute are affine, but the same code also meets a fused index
// (floor division and modulo of a fused thread variable), and evaluating at
// 32 lane values is exact for both. The cost is a few dozen walks of small
// index trees per shared load of a GPU store; CPU stores never get here.
#include "shared_bank_conflicts.h"

#include <algorithm>
#include <array>

#include "tunefarm/compiler/ir/floor_div.h"

namespace tunefarm::costmodel::detail {

using namespace ir;

int BankConflictWays(std::span<const int64_t> lane_bytes, int64_t access_bytes) {
  if (lane_bytes.empty()) return 0;
  access_bytes = std::max<int64_t>(access_bytes, 1);
  // Lanes served together: 32 for up to 4 bytes each, 16 for 8, 8 for 16
  // (one phase moves at most 128 bytes, one word per bank).
  const int64_t per_phase =
      std::clamp<int64_t>(kSharedBanks * kBankBytes / std::max<int64_t>(access_bytes, kBankBytes), 1, kWarpSize);
  int worst = 0;
  std::array<std::vector<int64_t>, kSharedBanks> words;  // distinct words per bank in the phase
  for (size_t begin = 0; begin < lane_bytes.size(); begin += static_cast<size_t>(per_phase)) {
    for (auto& w : words) w.clear();
    const size_t end = std::min(lane_bytes.size(), begin + static_cast<size_t>(per_phase));
    for (size_t lane = begin; lane < end; ++lane) {
      const int64_t first = FloorDiv(lane_bytes[lane], kBankBytes);
      const int64_t last = FloorDiv(lane_bytes[lane] + access_bytes - 1, kBankBytes);
      for (int64_t word = first; word <= last; ++word) {
        auto& bank = words[static_cast<size_t>(FloorMod(word, kSharedBanks))];
        if (std::find(bank.begin(), bank.end(), word) == bank.end()) bank.push_back(word);
      }
    }
    for (const auto& w : words) worst = std::max(worst, static_cast<int>(w.size()));
  }
  return worst;
}

std::optional<int64_t> EvalIndexAt(const Expr& e, const LoopStack& loops, std::span<const int64_t> values) {
  if (!e.defined()) return std::nullopt;
  auto binary = [&](const auto* op) -> std::optional<std::pair<int64_t, int64_t>> {
    auto a = EvalIndexAt(op->a, loops, values);
    if (!a) return std::nullopt;
    auto b = EvalIndexAt(op->b, loops, values);
    if (!b) return std::nullopt;
    return std::make_pair(*a, *b);
  };
  // Each case evaluates its operands and combines them; a failed operand
  // fails the whole expression.
#define TF_EVAL_BINARY(K, EXPR)               \
  case IRNodeKind::k##K: {                    \
    auto ab = binary(e.as<K>());              \
    if (!ab) return std::nullopt;             \
    const int64_t a = ab->first;              \
    const int64_t b = ab->second;             \
    (void)a;                                  \
    (void)b;                                  \
    EXPR;                                     \
  }
  switch (e.kind()) {
    case IRNodeKind::kIntImm: return e.as<IntImm>()->value;
    case IRNodeKind::kVariable: {
      const int d = loops.DepthOf(e.as<Variable>());
      if (d < 0 || static_cast<size_t>(d) >= values.size()) return std::nullopt;
      return values[static_cast<size_t>(d)];
    }
    TF_EVAL_BINARY(Add, int64_t r = 0; if (__builtin_add_overflow(a, b, &r)) return std::nullopt; return r)
    TF_EVAL_BINARY(Sub, int64_t r = 0; if (__builtin_sub_overflow(a, b, &r)) return std::nullopt; return r)
    TF_EVAL_BINARY(Mul, int64_t r = 0; if (__builtin_mul_overflow(a, b, &r)) return std::nullopt; return r)
    TF_EVAL_BINARY(Div, if (b == 0) return std::nullopt; return FloorDiv(a, b))
    TF_EVAL_BINARY(Mod, if (b == 0) return std::nullopt; return FloorMod(a, b))
    TF_EVAL_BINARY(Min, return std::min(a, b))
    TF_EVAL_BINARY(Max, return std::max(a, b))
    TF_EVAL_BINARY(EQ, return a == b)
    TF_EVAL_BINARY(NE, return a != b)
    TF_EVAL_BINARY(LT, return a < b)
    TF_EVAL_BINARY(LE, return a <= b)
    TF_EVAL_BINARY(GT, return a > b)
    TF_EVAL_BINARY(GE, return a >= b)
    TF_EVAL_BINARY(And, return a != 0 && b != 0)
    TF_EVAL_BINARY(Or, return a != 0 || b != 0)
#undef TF_EVAL_BINARY
    case IRNodeKind::kNot: {
      auto a = EvalIndexAt(e.as<Not>()->a, loops, values);
      if (!a) return std::nullopt;
      return *a == 0;
    }
    case IRNodeKind::kSelect: {
      const auto* op = e.as<Select>();
      auto c = EvalIndexAt(op->condition, loops, values);
      if (!c) return std::nullopt;
      return EvalIndexAt(*c != 0 ? op->true_value : op->false_value, loops, values);
    }
    case IRNodeKind::kCast: {
      const auto* op = e.as<Cast>();
      if (op->value.dtype().is_float() || e.dtype().is_float()) return std::nullopt;
      return EvalIndexAt(op->value, loops, values);
    }
    case IRNodeKind::kFloatImm:
    case IRNodeKind::kLoad:
    case IRNodeKind::kCall:
    TF_STMT_KIND_CASES
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// Flattened (row-major) element offset of buffer[indices] at `values`.
std::optional<int64_t> FlatOffset(const BufferNode& buffer, const std::vector<Expr>& indices, const LoopStack& loops,
                                  std::span<const int64_t> values) {
  int64_t offset = 0;
  for (size_t k = 0; k < indices.size(); ++k) {
    auto i = EvalIndexAt(indices[k], loops, values);
    if (!i) return std::nullopt;
    const int64_t dim = k < buffer.shape.size() ? buffer.shape[k] : 1;
    if (__builtin_mul_overflow(offset, dim, &offset) || __builtin_add_overflow(offset, *i, &offset)) {
      return std::nullopt;
    }
  }
  return offset;
}

bool IsStraightLine(ForKind kind) { return kind == ForKind::kUnrolled || kind == ForKind::kVectorized; }

}  // namespace

std::optional<SharedAccessEstimate> AnalyzeSharedAccess(const BufferNode& buffer, const std::vector<Expr>& indices,
                                                        const LoopStack& loops) {
  const int depth = std::min(loops.depth(), kMaxDepth);
  std::array<int64_t, kMaxDepth> base_values{};
  std::array<int, 3> thread_depth{-1, -1, -1};
  for (int d = 0; d < depth; ++d) {
    const LoopInfo& l = loops.at(d);
    base_values[static_cast<size_t>(d)] = l.min;
    const int axis = static_cast<int>(l.binding) - static_cast<int>(Binding::kThreadX);
    if (axis < 0 || axis > 2) continue;
    if (thread_depth[static_cast<size_t>(axis)] >= 0) return std::nullopt;
    thread_depth[static_cast<size_t>(axis)] = d;
  }
  if (thread_depth[0] < 0 && thread_depth[1] < 0 && thread_depth[2] < 0) return std::nullopt;
  const std::span<int64_t> values(base_values.data(), static_cast<size_t>(depth));
  auto offset_at = [&](std::span<const int64_t> v) { return FlatOffset(buffer, indices, loops, v); };

  const auto base = offset_at(values);
  if (!base) return std::nullopt;
  const int64_t elem_bytes = std::max<int64_t>(buffer.dtype.bytes(), 1);
  SharedAccessEstimate est;

  // Vector width: the innermost run of unrolled or vectorized loops is
  // straight-line code, where the code generator (a vectorized loop) or
  // NVVM's load-store vectorizer (unrolled copies) joins adjacent aligned
  // elements into one ld.shared.v2/v4.
  std::array<int64_t, kMaxDepth> step{};  // element offset change when loop d advances by one
  for (int d = 0; d < depth; ++d) {
    if (loops.at(d).extent < 2) continue;
    values[static_cast<size_t>(d)] += 1;
    const auto moved = offset_at(values);
    values[static_cast<size_t>(d)] -= 1;
    if (!moved) return std::nullopt;
    step[static_cast<size_t>(d)] = *moved - *base;
  }
  // Only a single loop's consecutive elements count: those copies sit next
  // to each other in the unrolled code. Elements that two loops make
  // consecutive (k_ii then k_i) are a whole inner tile of copies apart, and
  // nvcc's PTX of the GMM 1024 kernel (docs/cuda.md) shows them not joined:
  // unpacked, its A operand is read 2 wide (k_ii), packed 4 wide.
  for (int d = depth - 1; d >= 0 && IsStraightLine(loops.at(d).kind); --d) {
    const int64_t extent = loops.at(d).extent;
    if (step[static_cast<size_t>(d)] != 1) continue;
    for (int64_t w : {int64_t{4}, int64_t{2}}) {
      if (w <= est.lanes || w * elem_bytes > kMaxAccessBytes || extent % w != 0 || *base % w != 0) continue;
      // Evaluated, not assumed from the first step: an index taken modulo
      // a packed run is affine only piecewise.
      bool aligned = true;
      for (int64_t c = 2; c < w && aligned; ++c) {
        values[static_cast<size_t>(d)] = loops.at(d).min + c;
        const auto at = offset_at(values);
        aligned = at && *at == *base + c;
      }
      values[static_cast<size_t>(d)] = loops.at(d).min;
      for (int e = 0; e < depth && aligned; ++e) {
        if (e != d && loops.at(e).extent > 1) aligned = step[static_cast<size_t>(e)] % w == 0;
      }
      if (aligned) est.lanes = static_cast<int>(w);
    }
  }

  // The first warp: threadIdx.x fastest, then y, then z.
  std::array<int64_t, 3> extent{1, 1, 1};
  for (int a = 0; a < 3; ++a) {
    if (thread_depth[static_cast<size_t>(a)] >= 0) extent[static_cast<size_t>(a)] = loops.at(thread_depth[static_cast<size_t>(a)]).extent;
  }
  est.warp_lanes = std::min<int64_t>(kWarpSize, extent[0] * extent[1] * extent[2]);
  std::array<int64_t, kWarpSize> lane_bytes{};
  for (int64_t lane = 0; lane < est.warp_lanes; ++lane) {
    const int64_t coord[3] = {lane % extent[0], lane / extent[0] % extent[1], lane / (extent[0] * extent[1])};
    for (int a = 0; a < 3; ++a) {
      const int d = thread_depth[static_cast<size_t>(a)];
      if (d >= 0) values[static_cast<size_t>(d)] = loops.at(d).min + coord[a];
    }
    const auto offset = offset_at(values);
    if (!offset) return std::nullopt;
    lane_bytes[static_cast<size_t>(lane)] = *offset * elem_bytes;
  }
  est.ways = BankConflictWays(std::span<const int64_t>(lane_bytes.data(), static_cast<size_t>(est.warp_lanes)),
                              est.lanes * elem_bytes);
  est.scalar_ways =
      BankConflictWays(std::span<const int64_t>(lane_bytes.data(), static_cast<size_t>(est.warp_lanes)), elem_bytes);
  return est;
}

}  // namespace tunefarm::costmodel::detail
