// The workload language: the operator suite parses, validates, prints and
// re-parses to an equal workload; typing rules, extent inference, guarded
// accesses, parameter overrides, Flops, and WorkloadBuilder equivalence.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;
using ir::DataType;

std::vector<std::string> SuiteFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".tf") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Workload MustParse(std::string_view text, const ParseOptions& options = {}) {
  Result<Workload> r = ParseWorkload(text, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  if (!r.ok()) return Workload{};
  return std::move(r).value();
}

const ComputeStage& Stage(const Workload& w, const std::string& name) {
  for (const ComputeStage& s : w.stages) {
    if (s.output->name == name) return s;
  }
  static ComputeStage none;
  ADD_FAILURE() << "no stage " << name;
  return none;
}

TEST(WorkloadSuite, EveryFileParsesValidatesAndHasFlops) {
  std::vector<std::string> files = SuiteFiles();
  ASSERT_GE(files.size(), 14u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    Result<Workload> w = ParseWorkloadFile(path);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    EXPECT_TRUE(w->Validate().ok()) << w->Validate().ToString();
    EXPECT_GT(w->Flops(), 0.0);
    EXPECT_EQ(w->name, fs::path(path).stem().string()) << "workload name should match the file name";
  }
}

TEST(WorkloadSuite, PrintParseRoundTripIsStructurallyEqualWithSameNames) {
  for (const std::string& path : SuiteFiles()) {
    SCOPED_TRACE(path);
    Result<Workload> w = ParseWorkloadFile(path);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    std::string text = PrintWorkload(*w);
    Result<Workload> again = ParseWorkload(text);
    ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
    EXPECT_TRUE(StructurallyEqual(*w, *again)) << text;
    EXPECT_EQ(StructuralHash(*w), StructuralHash(*again));
    EXPECT_EQ(w->name, again->name);
    EXPECT_EQ(w->params, again->params);
    ASSERT_EQ(w->inputs.size(), again->inputs.size());
    for (size_t i = 0; i < w->inputs.size(); ++i) EXPECT_EQ(w->inputs[i]->name, again->inputs[i]->name);
    ASSERT_EQ(w->stages.size(), again->stages.size());
    for (size_t i = 0; i < w->stages.size(); ++i) {
      EXPECT_EQ(w->stages[i].output->name, again->stages[i].output->name);
      for (size_t a = 0; a < w->stages[i].axes.size(); ++a) {
        EXPECT_EQ(w->stages[i].axes[a].name(), again->stages[i].axes[a].name());
      }
    }
    // Printing is canonical: printing the re-parsed workload gives the same text.
    EXPECT_EQ(text, PrintWorkload(*again));
  }
}

TEST(WorkloadSuite, RequiredFilesHaveTheirShapes) {
  fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  Result<Workload> conv = ParseWorkloadFile((dir / "c2d_resnet_3x3.tf").string());
  ASSERT_TRUE(conv.ok()) << conv.status().ToString();
  EXPECT_EQ(conv->inputs[0]->shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_EQ(conv->inputs[1]->shape, (std::vector<int64_t>{64, 64, 3, 3}));
  EXPECT_EQ(conv->outputs[0]->shape, (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_DOUBLE_EQ(conv->Flops(), 2.0 * 64 * 56 * 56 * 64 * 9);

  Result<Workload> gmm = ParseWorkloadFile((dir / "gmm_1024.tf").string());
  ASSERT_TRUE(gmm.ok());
  EXPECT_DOUBLE_EQ(gmm->Flops(), 2.0 * 1024 * 1024 * 1024);

  Result<Workload> dep = ParseWorkloadFile((dir / "dep_3x3_c256_28.tf").string());
  ASSERT_TRUE(dep.ok());
  EXPECT_EQ(dep->outputs[0]->shape, (std::vector<int64_t>{1, 256, 28, 28}));
  EXPECT_DOUBLE_EQ(dep->Flops(), 2.0 * 256 * 28 * 28 * 9);

  Result<Workload> q = ParseWorkloadFile((dir / "gmm_int8.tf").string());
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->outputs[0]->dtype, DataType::Int(32));
  EXPECT_DOUBLE_EQ(q->Flops(), 2.0 * 512 * 512 * 512);

  Result<Workload> dense = ParseWorkloadFile((dir / "dense_bias_relu.tf").string());
  ASSERT_TRUE(dense.ok());
  // matmul (2 per MAC) + bias add + relu max per output element.
  EXPECT_DOUBLE_EQ(dense->Flops(), 2.0 * 128 * 3072 * 768 + 2.0 * 128 * 3072);
}

TEST(WorkloadParser, InfersAxisExtentsFromBareIndexUses) {
  Workload w = MustParse(R"(
    workload t(M = 3, N = 5) {
      A = input f32[M, N]
      B = input f32[N]
      C[i, j] = A[i, j] + B[j]
      D[j, i: 7] = C[0, j] * 2.0
      output C, D
    })");
  ASSERT_EQ(w.stages.size(), 2u);
  EXPECT_EQ(w.stages[0].output->shape, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(w.stages[1].output->shape, (std::vector<int64_t>{5, 7}));
  EXPECT_EQ(w.stages[0].axes[0].dtype(), DataType::Index());
  EXPECT_EQ(w.outputs.size(), 2u);
}

TEST(WorkloadParser, LiteralsAdoptTheOtherOperandsType) {
  Workload w = MustParse(R"(
    workload t(N = 4) {
      X = input f16[N]
      Y = input i8[N]
      a[i] = X[i] * 2 + 0.5
      b[i] = Y[i] + 3
      c[i] = select(X[i] > 0, X[i], 0)
      d[i] = f32(Y[i]) / N
      e[i: 4] = 1.5
      f[i: 4] = 7
      output a, b, c, d, e, f
    })");
  EXPECT_EQ(Stage(w, "a").output->dtype, DataType::Float(16));
  EXPECT_EQ(Stage(w, "b").output->dtype, DataType::Int(8));
  EXPECT_EQ(Stage(w, "c").output->dtype, DataType::Float(16));
  EXPECT_EQ(Stage(w, "d").output->dtype, DataType::Float(32));
  EXPECT_EQ(Stage(w, "e").output->dtype, DataType::Float(32));
  EXPECT_EQ(Stage(w, "f").output->dtype, DataType::Int(64));
  // `X[i] * 2`: the 2 is an f16 immediate.
  const auto* add = Stage(w, "a").body.as<ir::BinaryNode<ir::IRNodeKind::kAdd>>();
  ASSERT_NE(add, nullptr);
  const auto* mul = add->a.as<ir::BinaryNode<ir::IRNodeKind::kMul>>();
  ASSERT_NE(mul, nullptr);
  ASSERT_NE(mul->b.as<ir::FloatImm>(), nullptr);
  EXPECT_EQ(mul->b.dtype(), DataType::Float(16));
  // A parameter in a body is a constant: N / 4.0.
  const auto* div = Stage(w, "d").body.as<ir::BinaryNode<ir::IRNodeKind::kDiv>>();
  ASSERT_NE(div, nullptr);
  ASSERT_NE(div->b.as<ir::FloatImm>(), nullptr);
  EXPECT_EQ(div->b.as<ir::FloatImm>()->value, 4.0);
}

TEST(WorkloadParser, TypedLiteralsAndNegationsRoundTrip) {
  Workload w = MustParse(R"(
    workload t(N = 8) {
      X = input i32[N]
      F = input f64[N]
      a[i: 8] = i32(5)
      b[i] = -X[i] + i32(-3) * X[i]
      c[i: 8] = f16(-0.0)
      d[i] = max(F[i], -1e300) - -2.5
      e[i] = i64(i32(7)) + i64(X[i] % 3)
      g[i] = !(X[i] < 2) || X[i] == 7
      h[i] = select(g[i], f64(X[i] / 2), pow(F[i], 2) + exp(F[i]))
      k[i: 8] = 1 + 2 * 3 - (4 - 5)
      m[i: 8] = u8(200)
      output a, b, c, d, e, g, h, k, m
    })");
  EXPECT_EQ(Stage(w, "a").body.dtype(), DataType::Int(32));
  EXPECT_EQ(Stage(w, "c").body.dtype(), DataType::Float(16));
  EXPECT_TRUE(std::signbit(Stage(w, "c").body.as<ir::FloatImm>()->value));
  EXPECT_EQ(Stage(w, "g").body.dtype(), DataType::Bool());
  EXPECT_EQ(Stage(w, "m").body.dtype(), DataType::UInt(8));
  std::string text = PrintWorkload(w);
  Result<Workload> again = ParseWorkload(text);
  ASSERT_TRUE(again.ok()) << again.status().ToString() << "\n" << text;
  EXPECT_TRUE(StructurallyEqual(w, *again)) << text << "\n---\n" << PrintWorkload(*again);
  EXPECT_EQ(text, PrintWorkload(*again));
}

TEST(WorkloadParser, DeepButAcceptedExpressionsRoundTrip) {
  // Found by the fuzzer: the printed form of a long chain of negations must
  // not be deeper than what the parser accepts.
  std::string negations(200, '-');
  std::string casts = "i";
  for (int n = 0; n < 100; ++n) casts = "X[i32(" + casts + ") % 4]";
  for (const std::string& body : {negations + "(X[i] + 1)", casts, negations + "f32(i32(i))"}) {
    SCOPED_TRACE(body);
    Result<Workload> w = ParseWorkload("workload t(N = 4) {\n X = input i64[N]\n y[i: 4] = " + body + "\n output y\n}");
    if (!w.ok()) {
      EXPECT_NE(w.status().message().find("nested too deeply"), std::string::npos) << w.status().message();
      continue;
    }
    Result<Workload> again = ParseWorkload(PrintWorkload(*w));
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(StructurallyEqual(*w, *again));
  }
}

TEST(WorkloadParser, GuardedAccessesAreAccepted) {
  // Padding guards in several spellings: on the index expression, on the
  // variable, through negation and through an else branch.
  Workload w = MustParse(R"(
    workload t(H = 10) {
      X = input f32[H]
      a[h: H + 2] = select(h - 1 >= 0 && h - 1 < H, X[h - 1], 0.0)
      b[h: H + 2] = select(h >= 1 && h <= H, X[h - 1], 0.0)
      c[h: H + 2] = select(!(h < 1 || h > H), X[h - 1], 0.0)
      d[h: H + 2] = select(h < 1 || h > H, 0.0, X[h - 1])
      e[h: H] = X[min(h + 1, H - 1)] + X[max(h - 1, 0)] + X[(h + 3) % H]
      output a, b, c, d, e
    })");
  EXPECT_EQ(w.stages.size(), 5u);
}

TEST(WorkloadParser, GuardedButUnprovableAccessIsAcceptedUnguardedIsNot) {
  // A guard that mentions the index's variable but does not prove the bound.
  EXPECT_TRUE(ParseWorkload(R"(
    workload t(H = 10) {
      X = input f32[H]
      a[h: H] = select(h % 2 == 0, X[h + 1], 0.0)
      output a
    })").ok());
  Result<Workload> bad = ParseWorkload(R"(
    workload t(H = 10) {
      X = input f32[H]
      a[h: H] = X[h + 1]
      output a
    })");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("can be out of range"), std::string::npos);
}

TEST(WorkloadParser, ParamOverridesShrinkTheWorkload) {
  fs::path path = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads" / "c2d_resnet_3x3.tf";
  ParseOptions options;
  options.param_overrides = {{"C", 4}, {"K", 8}, {"H", 6}, {"W", 5}};
  Result<Workload> w = ParseWorkloadFile(path.string(), options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->inputs[0]->shape, (std::vector<int64_t>{1, 4, 6, 5}));
  EXPECT_EQ(w->outputs[0]->shape, (std::vector<int64_t>{1, 8, 6, 5}));
  EXPECT_DOUBLE_EQ(w->Flops(), 2.0 * 8 * 6 * 5 * 4 * 9);
  // The printed params carry the overridden values.
  EXPECT_NE(PrintWorkload(*w).find("C = 4"), std::string::npos);
}

TEST(WorkloadParser, ParamDefaultsMayUseEarlierParams) {
  Workload w = MustParse(R"(
    workload t(H = 7, OH = (H - 1) * 2 + 3) {
      X = input f32[OH]
      y[i] = X[i]
      output y
    })");
  EXPECT_EQ(w.inputs[0]->shape, (std::vector<int64_t>{15}));
  ParseOptions options;
  options.param_overrides = {{"H", 2}};
  Workload small = MustParse(R"(
    workload t(H = 7, OH = (H - 1) * 2 + 3) {
      X = input f32[OH]
      y[i] = X[i]
      output y
    })", options);
  EXPECT_EQ(small.inputs[0]->shape, (std::vector<int64_t>{5}));
}

TEST(WorkloadParser, SeparatorsCommentsAndCrlf) {
  Workload a = MustParse("workload t(N = 4) { X = input f32[N]; y[i] = X[i] * 2.0; output y }");
  Workload b = MustParse("# header\r\nworkload t(N = 4) {  # c\r\n X = input f32[N]\r\n y[i] =\r\n   X[i] *\r\n 2.0\r\n output y\r\n}\r\n");
  EXPECT_TRUE(StructurallyEqual(a, b));
}

TEST(WorkloadParser, FlopsCountsReductionsCallsAndSkipsIndexMath) {
  Workload w = MustParse(R"(
    workload t(M = 4, N = 8) {
      X = input f32[M, N]
      Q = input i8[M, N]
      mx[i] = max(j: N) X[i, j]
      e[i, j] = exp(X[i, j] - mx[i])
      p[i: M, j: N] = X[(i + 1) % M, j * 1]
      q[i, j] = i32(Q[i, j]) * 3 + i32(Q[i, j])
      output mx, e, p, q
    })");
  // mx: 1 combine x 32; e: sub + exp x 32; p: 0; q: mul + add x 32.
  EXPECT_DOUBLE_EQ(w.Flops(), 32.0 + 64.0 + 0.0 + 64.0);
}

TEST(WorkloadParser, ParseWorkloadFileReportsMissingFiles) {
  Result<Workload> w = ParseWorkloadFile("/nonexistent/dir/x.tf");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kNotFound);
  EXPECT_NE(w.status().message().find("/nonexistent/dir/x.tf"), std::string::npos);
}

TEST(WorkloadBuilder, BuildsTheSameWorkloadAsTheText) {
  WorkloadBuilder b("dense_bias_relu");
  b.Param("M", 128).Param("N", 3072).Param("K", 768);
  ir::Buffer A = b.Input("A", DataType::Float(32), {128, 768});
  ir::Buffer W = b.ConstantInput("W", DataType::Float(32), {3072, 768});
  ir::Buffer bias = b.ConstantInput("bias", DataType::Float(32), {3072});
  ir::Var i = b.Axis("i"), j = b.Axis("j"), k = b.Axis("k");
  ir::Buffer acc = b.Compute("acc", {128, 3072}, {i, j}, ReduceKind::kSum, {k}, {768},
                             ir::Mul::Make(ir::Load::Make(A, {i, k}), ir::Load::Make(W, {j, k})));
  ir::Var i2 = b.Axis("i"), j2 = b.Axis("j");
  ir::Buffer out = b.Compute(
      "out", {128, 3072}, {i2, j2},
      ir::Max::Make(ir::Add::Make(ir::Load::Make(acc, {i2, j2}), ir::Load::Make(bias, {j2})),
                    ir::FloatImm::Make(DataType::Float(32), 0.0)));
  b.Output(out);
  Result<Workload> built = b.Build();
  ASSERT_TRUE(built.ok()) << built.status().ToString();

  Result<Workload> parsed =
      ParseWorkloadFile((fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads" / "dense_bias_relu.tf").string());
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(StructurallyEqual(*built, *parsed));
  EXPECT_EQ(StructuralHash(*built), StructuralHash(*parsed));
  EXPECT_EQ(PrintWorkload(*built), PrintWorkload(*parsed));
  EXPECT_DOUBLE_EQ(built->Flops(), parsed->Flops());
}

TEST(WorkloadBuilder, BuildRejectsInvalidWorkloads) {
  {
    WorkloadBuilder b("no_outputs");
    ir::Buffer A = b.Input("A", DataType::Float(32), {4});
    ir::Var i = b.Axis("i");
    b.Compute("B", {4}, {i}, ir::Load::Make(A, {i}));
    Result<Workload> w = b.Build();
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("no outputs"), std::string::npos);
  }
  {
    WorkloadBuilder b("free_var");
    ir::Buffer A = b.Input("A", DataType::Float(32), {4});
    ir::Var i = b.Axis("i"), stray = b.Axis("stray");
    b.Output(b.Compute("B", {4}, {i}, ir::Load::Make(A, {stray})));
    Result<Workload> w = b.Build();
    ASSERT_FALSE(w.ok());
    EXPECT_NE(w.status().message().find("stray"), std::string::npos);
  }
  {
    WorkloadBuilder b("reads_later");
    ir::Buffer A = b.Input("A", DataType::Float(32), {4});
    ir::Buffer later = ir::MakeBuffer("later", DataType::Float(32), {4});
    ir::Var i = b.Axis("i");
    b.Output(b.Compute("B", {4}, {i}, ir::Add::Make(ir::Load::Make(A, {i}), ir::Load::Make(later, {i}))));
    EXPECT_FALSE(b.Build().ok());
  }
  {
    WorkloadBuilder b("bad_shape");
    ir::Buffer A = b.Input("A", DataType::Float(32), {0});
    ir::Var i = b.Axis("i");
    b.Output(b.Compute("B", {4}, {i}, ir::Load::Make(A, {i})));
    EXPECT_FALSE(b.Build().ok());
  }
  {
    WorkloadBuilder b("reduce_mismatch");
    ir::Buffer A = b.Input("A", DataType::Float(32), {4, 4});
    ir::Var i = b.Axis("i"), k = b.Axis("k");
    b.Output(b.Compute("B", {4}, {i}, ReduceKind::kSum, {k}, {}, ir::Load::Make(A, {i, k})));
    EXPECT_FALSE(b.Build().ok());
  }
  {
    WorkloadBuilder b("undefined_body");
    b.Input("A", DataType::Float(32), {4});
    b.Output(b.Compute("B", {4}, {b.Axis("i")}, ir::Expr()));
    EXPECT_FALSE(b.Build().ok());
  }
}

TEST(WorkloadBuilder, ReduceKindNames) {
  EXPECT_STREQ(ReduceKindName(ReduceKind::kSum), "sum");
  EXPECT_STREQ(ReduceKindName(ReduceKind::kMax), "max");
  EXPECT_STREQ(ReduceKindName(ReduceKind::kMin), "min");
  EXPECT_STREQ(ReduceKindName(ReduceKind::kProd), "prod");
}

}  // namespace
}  // namespace tunefarm
