// StructuralHash / StructurallyEqual: invariant under renaming, whitespace
// and comments; sensitive to shapes, dtypes, reductions, bodies and outputs.
#include <gtest/gtest.h>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

constexpr const char* kMatmul = R"(
workload mm(M = 64, N = 32, K = 16) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  D[i, j] = max(C[i, j], 0.0)
  output D
})";

Workload Parse(std::string_view text) {
  Result<Workload> r = ParseWorkload(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  return r.ok() ? std::move(r).value() : Workload{};
}

void ExpectSame(std::string_view a, std::string_view b) {
  Workload wa = Parse(a), wb = Parse(b);
  EXPECT_TRUE(StructurallyEqual(wa, wb)) << b;
  EXPECT_EQ(StructuralHash(wa), StructuralHash(wb)) << b;
  EXPECT_EQ(StructuralHashHex(wa), StructuralHashHex(wb));
}

void ExpectDifferent(std::string_view a, std::string_view b) {
  Workload wa = Parse(a), wb = Parse(b);
  EXPECT_FALSE(StructurallyEqual(wa, wb)) << b;
  EXPECT_NE(StructuralHash(wa), StructuralHash(wb)) << b;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(StructuralHash, IgnoresNamesWhitespaceAndComments) {
  ExpectSame(kMatmul, R"(
# a renamed copy, laid out differently
workload other_name(P = 64, Q = 32, R = 16) {   # params renamed
  lhs = input f32[P, R]
  rhs = input f32[R, Q]
  p[x, y] = sum(r: R)
      lhs[x, r] * rhs[r, y]
  relu[a: 64, b: 32] = max(p[a, b],
                           0.0)
  output relu
})");
}

TEST(StructuralHash, IgnoresHowShapesAreWritten) {
  ExpectSame(kMatmul, R"(
workload mm() {
  A = input f32[64, 16]
  B = input f32[8 * 2, 30 + 2]
  C[i, j] = sum(k: 16) A[i, k] * B[k, j]
  D[i, j] = max(C[i, j], 0.0)
  output D
})");
}

TEST(StructuralHash, AxesAreIdentifiedByBindingPosition) {
  // Swapping the names of i and j everywhere is a renaming...
  ExpectSame(kMatmul, R"(
workload mm(M = 64, N = 32, K = 16) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[j, i] = sum(k: K) A[j, k] * B[k, i]
  D[j, i] = max(C[j, i], 0.0)
  output D
})");
  // ...but transposing the access is not.
  ExpectDifferent(kMatmul, R"(
workload mm(M = 64, N = 32, K = 32) {
  A = input f32[M, K]
  B = input f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[j, k]
  D[i, j] = max(C[i, j], 0.0)
  output D
})");
}

TEST(StructuralHash, DependsOnShapes) {
  ExpectDifferent(kMatmul, Replace(kMatmul, "M = 64", "M = 65"));
  ExpectDifferent(kMatmul, Replace(kMatmul, "K = 16", "K = 17"));
}

TEST(StructuralHash, DependsOnDtypes) {
  ExpectDifferent(kMatmul, Replace(kMatmul, "A = input f32[M, K]\n  B = input f32[K, N]",
                                   "A = input f64[M, K]\n  B = input f64[K, N]"));
}

TEST(StructuralHash, DependsOnBodiesAndReductions) {
  ExpectDifferent(kMatmul, Replace(kMatmul, "A[i, k] * B[k, j]", "A[i, k] + B[k, j]"));
  ExpectDifferent(kMatmul, Replace(kMatmul, "sum(k: K)", "max(k: K)"));
  ExpectDifferent(kMatmul, Replace(kMatmul, "max(C[i, j], 0.0)", "max(C[i, j], 0.5)"));
  ExpectDifferent(kMatmul, Replace(kMatmul, "max(C[i, j], 0.0)", "min(C[i, j], 0.0)"));
  ExpectDifferent(kMatmul, Replace(kMatmul, "max(C[i, j], 0.0)", "max(0.0, C[i, j])"));
}

TEST(StructuralHash, DependsOnOutputsAndTensorOrder) {
  ExpectDifferent(kMatmul, Replace(kMatmul, "output D", "output C, D"));
  // Same computation with the inputs declared in the other order reads
  // different declaration indices.
  ExpectDifferent(kMatmul, R"(
workload mm(M = 64, N = 32, K = 16) {
  B = input f32[K, N]
  A = input f32[M, K]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  D[i, j] = max(C[i, j], 0.0)
  output D
})");
}

TEST(StructuralHash, ParamOverridesChangeTheHashLikeEditingTheText) {
  ParseOptions options;
  options.param_overrides = {{"M", 65}};
  Result<Workload> overridden = ParseWorkload(kMatmul, options);
  ASSERT_TRUE(overridden.ok());
  Workload edited = Parse(Replace(kMatmul, "M = 64", "M = 65"));
  EXPECT_EQ(StructuralHash(*overridden), StructuralHash(edited));
  EXPECT_NE(StructuralHash(*overridden), StructuralHash(Parse(kMatmul)));
}

TEST(StructuralHash, HexIsSixteenLowercaseDigits) {
  std::string hex = StructuralHashHex(Parse(kMatmul));
  ASSERT_EQ(hex.size(), 16u);
  for (char c : hex) EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << hex;
}

TEST(StructuralHash, IsStableAcrossBuilds) {
  // The hash keys workloads in the tuning database: changing it orphans
  // every stored record. Update this value only with a database migration.
  EXPECT_EQ(StructuralHashHex(Parse(kMatmul)), "83457977d747ca95");
}

}  // namespace
}  // namespace tunefarm
