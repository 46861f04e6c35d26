// The int8 dot-product annotation (pragma_dot_product, codegen_llvm_dot.cpp):
// on AArch64 with dotprod the annotated nest is `sdot`/`udot`; on any other
// target, and for every nest it does not fit, the generic code runs and
// equals the interpreter. (Runs of the sdot code itself are under qemu:
// tests/tuner/sketch_int8_dot_qemu_test.cpp.)
#include <cstring>

#include "../codegen_test_util.h"
#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

using testing::MatchesInterpreter;

constexpr const char* kDotTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod";
constexpr const char* kNeonTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon";

// C[i, j] = sum(k) i32(A[i, k]) * i32(B[j, k]) with A, B of `a_type`,
// `b_type` and C of `c_type`.
ir::PrimFunc Gemm(int64_t m, int64_t n, int64_t k, const std::string& a_type = "i8", const std::string& b_type = "i8",
                  const std::string& c_type = "i32") {
  const std::string text = "workload dot(M = " + std::to_string(m) + ", N = " + std::to_string(n) +
                           ", K = " + std::to_string(k) + ") {\n  A = input " + a_type + "[M, K]\n  B = input " +
                           b_type + "[N, K]\n  C[i, j] = sum(k: K) " + c_type + "(A[i, k]) * " + c_type +
                           "(B[j, k])\n  output C\n}\n";
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

struct DotNest {
  int64_t lanes = 4;        // j's inner split, vectorized when vectorize is set
  int64_t steps = 4;        // k's inner split, annotated
  bool vectorize = true;
  bool annotate = true;
  bool b_outer = false;     // j outside i (B's rows reused across i)
};

// i, j/lanes, k/steps, j%lanes (vectorized), k%steps (annotated).
Result<ir::PrimFunc> Schedule4x4(const ir::PrimFunc& base, const DotNest& nest) {
  Schedule sch(base);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, nest.lanes}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> k, sch.Split(loops[2], {-1, nest.steps}));
  if (nest.b_outer) {
    TF_RETURN_IF_ERROR(sch.Reorder({j[0], loops[0], k[0], j[1], k[1]}));
  } else {
    TF_RETURN_IF_ERROR(sch.Reorder({loops[0], j[0], k[0], j[1], k[1]}));
  }
  if (nest.vectorize) TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
  if (nest.annotate) TF_RETURN_IF_ERROR(sch.Annotate(k[1], ir::kDotProductAnnotation, ir::kDotProductSteps));
  return sch.func();
}

Target Parsed(const char* text) {
  auto t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

std::string Assembly(const ir::PrimFunc& f, const char* target) {
  auto text = EmitAssembly(f, Parsed(target));
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// At opt level 0 the loop metadata that says why a nest is generic survives.
std::string LlvmIR(const ir::PrimFunc& f, const char* target, int opt_level = 3) {
  CodegenOptions options;
  options.opt_level = opt_level;
  auto text = EmitLLVMIR(f, Parsed(target), options);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// 128-bit SDOT (vector) words in an object: 0 1 U 01110 100 Rm 100101 Rn Rd.
int DotInstructions(const std::string& object, bool is_unsigned) {
  const uint32_t want = is_unsigned ? 0x6E809400u : 0x4E809400u;
  int n = 0;
  for (size_t at = 0; at + 4 <= object.size(); at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, object.data() + at, 4);
    n += (word & 0xFFE0FC00u) == want;
  }
  return n;
}

TEST(CodegenDotTest, SdotOnAArch64WithDotprod) {
  auto f = Schedule4x4(Gemm(7, 12, 20), {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const std::string ir = LlvmIR(*f, kDotTarget);
  EXPECT_NE(ir.find("llvm.aarch64.neon.sdot.v4i32.v16i8"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("tunefarm.dot_product.fallback"), std::string::npos) << ir;
  EXPECT_NE(Assembly(*f, kDotTarget).find("sdot\tv"), std::string::npos) << Assembly(*f, kDotTarget);
  auto object = EmitObject(*f, Parsed(kDotTarget));
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  EXPECT_GE(DotInstructions(*object, false), 1);
  // The CPU name implies the feature as well.
  EXPECT_NE(Assembly(*f, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-n1").find("sdot\tv"), std::string::npos);
}

TEST(CodegenDotTest, UdotForUnsignedOperands) {
  auto f = Schedule4x4(Gemm(5, 8, 12, "u8", "u8"), {.b_outer = true});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(Assembly(*f, kDotTarget).find("udot\tv"), std::string::npos) << Assembly(*f, kDotTarget);
  EXPECT_TRUE(MatchesInterpreter(*f));
}

// Where the annotation changes nothing: x86, and AArch64 without dotprod.
TEST(CodegenDotTest, GenericCodeElsewhereMatchesTheInterpreter) {
  for (bool b_outer : {false, true}) {
    auto f = Schedule4x4(Gemm(7, 12, 20), {.b_outer = b_outer});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(MatchesInterpreter(*f, {7, 8}));
    const std::string host_ir = LlvmIR(*f, "llvm", 0);
    EXPECT_EQ(host_ir.find("sdot"), std::string::npos);
    EXPECT_NE(host_ir.find("has no dot product instructions"), std::string::npos) << host_ir;
    const std::string neon = Assembly(*f, kNeonTarget);
    EXPECT_EQ(neon.find("sdot"), std::string::npos) << neon;
  }
}

// Nests the annotation does not fit: the generic path, the reason in the
// loop's metadata, and on the host the interpreter's results.
TEST(CodegenDotTest, NestsItDoesNotFitTakeTheGenericPath) {
  struct Case {
    std::string name;
    ir::PrimFunc base;
    DotNest nest;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"two lanes", Gemm(7, 12, 20), {.lanes = 2}, "does not have 4 lanes"},
      {"f32", Gemm(3, 8, 8, "f32", "f32", "f32"), {}, "is not i32"},
      {"i16 operands", Gemm(3, 8, 8, "i16", "i16"), {}, "not of two 8-bit integers"},
      {"mixed signs", Gemm(3, 8, 8, "i8", "u8"), {}, "one operand is signed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto f = Schedule4x4(c.base, c.nest);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const std::string ir = LlvmIR(*f, kDotTarget, 0);
    EXPECT_EQ(ir.find("neon.sdot"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("neon.udot"), std::string::npos) << ir;
    EXPECT_NE(ir.find(c.reason), std::string::npos) << ir;
    EXPECT_TRUE(MatchesInterpreter(*f, {7}, 1e-4, 1e-3));
  }
  // Not vectorized: a plain loop nest, no dot product and no crash.
  auto serial = Schedule4x4(Gemm(7, 12, 20), {.vectorize = false});
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_EQ(LlvmIR(*serial, kDotTarget).find("neon.sdot"), std::string::npos);
  EXPECT_TRUE(MatchesInterpreter(*serial));
}

TEST(CodegenDotTest, AnnotateRefusesOtherValuesAndExtents) {
  Schedule sch(Gemm(7, 12, 24));
  auto c = sch.GetBlock("C");
  ASSERT_TRUE(c.ok());
  auto loops = sch.GetLoops(*c);
  ASSERT_TRUE(loops.ok());
  auto k = sch.Split((*loops)[2], {-1, 8});
  ASSERT_TRUE(k.ok());
  Status extent = sch.Annotate((*k)[1], ir::kDotProductAnnotation, 4);
  EXPECT_EQ(extent.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(extent.message().find("extent 8"), std::string::npos) << extent.ToString();
  auto k4 = sch.Split((*k)[1], {-1, 4});
  ASSERT_TRUE(k4.ok());
  Status value = sch.Annotate((*k4)[1], ir::kDotProductAnnotation, 8);
  EXPECT_EQ(value.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(value.message().find("must be 4"), std::string::npos) << value.ToString();
  EXPECT_TRUE(sch.Annotate((*k4)[1], ir::kDotProductAnnotation, 4).ok());
}

// An annotation written into the IR directly, bypassing Annotate's checks:
// a wrong value or extent is generic code, never a miscompile.
TEST(CodegenDotTest, HandWrittenBadAnnotationsAreGeneric) {
  auto f = Schedule4x4(Gemm(4, 8, 16), {.steps = 8, .annotate = false});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (int64_t value : {4, 8}) {
    SCOPED_TRACE(value);
    // Put the annotation on the innermost loop (k % 8) by rewriting the nest.
    class Annotator : public ir::IRMutator {
     public:
      explicit Annotator(int64_t v) : value_(v) {}
      using ir::IRMutator::Mutate;

     protected:
      ir::Stmt MutateFor(const ir::For* op, const ir::Stmt& self) override {
        ir::Stmt body = Mutate(op->body);
        auto annotations = op->annotations;
        if (body.as<ir::Block>() != nullptr) annotations[ir::kDotProductAnnotation] = value_;
        return ir::For::Make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, annotations);
      }

     private:
      int64_t value_;
    };
    ir::PrimFunc g = *f;
    g.body = Annotator(value).Mutate(g.body);
    const std::string ir = LlvmIR(g, kDotTarget, 0);
    EXPECT_EQ(ir.find("neon.sdot"), std::string::npos) << ir;
    EXPECT_NE(ir.find(value == 4 ? "the annotated loop's extent is not 4" : "annotation value 8 is not 4"),
              std::string::npos)
        << ir;
    EXPECT_TRUE(MatchesInterpreter(g));
  }
}

}  // namespace
}  // namespace tunefarm
