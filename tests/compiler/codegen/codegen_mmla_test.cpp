// The int8 matrix-multiply annotation (pragma_matrix_multiply_accumulate,
// codegen_llvm_mmla.cpp): on AArch64 with i8mm the annotated 2 x 2 x 8 nest
// is `smmla`/`ummla`; on any other target, and for every nest it does not
// fit, the generic code runs and equals the interpreter. (Runs of the smmla
// code itself are under qemu: tests/tuner/sketch_int8_mmla_qemu_test.cpp.)
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

constexpr const char* kMmlaTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+i8mm";
constexpr const char* kDotTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod";

// C[i, j] = sum(k) c_type(A[i, k]) * c_type(B[j, k]).
ir::PrimFunc Gemm(int64_t m, int64_t n, int64_t k, const std::string& a_type = "i8", const std::string& b_type = "i8",
                  const std::string& c_type = "i32") {
  const std::string text = "workload mm(M = " + std::to_string(m) + ", N = " + std::to_string(n) +
                           ", K = " + std::to_string(k) + ") {\n  A = input " + a_type + "[M, K]\n  B = input " +
                           b_type + "[N, K]\n  C[i, j] = sum(k: K) " + c_type + "(A[i, k]) * " + c_type +
                           "(B[j, k])\n  output C\n}\n";
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

struct MmlaNest {
  int64_t rows = 2;  // i's inner split
  int64_t cols = 2;  // j's inner split
  int64_t steps = 8;  // k's inner split, annotated
  bool vectorize_cols = false;
  bool b_outer = false;  // j / cols outside i / rows
  bool k_between = false;  // k / steps between the rows and the columns: no 2 x 2 nest
};

// i / rows, j / cols, k / steps, i % rows, j % cols, k % steps (annotated).
Result<ir::PrimFunc> ScheduleTile(const ir::PrimFunc& base, const MmlaNest& nest) {
  Schedule sch(base);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> i, sch.Split(loops[0], {-1, nest.rows}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, nest.cols}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> k, sch.Split(loops[2], {-1, nest.steps}));
  if (nest.k_between) {
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], i[1], k[0], j[1], k[1]}));
  } else if (nest.b_outer) {
    TF_RETURN_IF_ERROR(sch.Reorder({j[0], i[0], k[0], i[1], j[1], k[1]}));
  } else {
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], k[0], i[1], j[1], k[1]}));
  }
  if (nest.vectorize_cols) TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
  TF_RETURN_IF_ERROR(sch.Annotate(k[1], ir::kMatrixMultiplyAnnotation, ir::kMatrixMultiplySteps));
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

// SMMLA/UMMLA (vector) words in an object: 0 1 U 01110 100 Rm 101001 Rn Rd.
int MmlaInstructions(const std::string& object, bool is_unsigned) {
  const uint32_t want = is_unsigned ? 0x6E80A400u : 0x4E80A400u;
  int n = 0;
  for (size_t at = 0; at + 4 <= object.size(); at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, object.data() + at, 4);
    n += (word & 0xFFE0FC00u) == want;
  }
  return n;
}

TEST(CodegenMmlaTest, SmmlaOnAArch64WithI8mm) {
  for (bool vectorize_cols : {false, true}) {
    SCOPED_TRACE(vectorize_cols ? "columns vectorized" : "columns serial");
    auto f = ScheduleTile(Gemm(6, 10, 24), {.vectorize_cols = vectorize_cols});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const std::string ir = LlvmIR(*f, kMmlaTarget);
    EXPECT_NE(ir.find("llvm.aarch64.neon.smmla.v4i32.v16i8"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("tunefarm.mmla.fallback"), std::string::npos) << ir;
    const std::string assembly = Assembly(*f, kMmlaTarget);
    EXPECT_NE(assembly.find("smmla\tv"), std::string::npos) << assembly;
    auto object = EmitObject(*f, Parsed(kMmlaTarget));
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    EXPECT_GE(MmlaInstructions(*object, false), 1);
    EXPECT_EQ(MmlaInstructions(*object, true), 0);
  }
  // The CPU name implies the feature as well.
  auto f = ScheduleTile(Gemm(6, 10, 24), {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_NE(Assembly(*f, "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1").find("smmla\tv"), std::string::npos);
}

// Operands in mmla order and a contiguous tile: each one 16-byte load.
// (A[i, k] of K = 8 is both rows' 8 bytes in a row; C of N = 2 the tile.)
TEST(CodegenMmlaTest, InOrderOperandsAndTileAreWholeLoads) {
  auto f = ScheduleTile(Gemm(4, 2, 8), {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const std::string ir = LlvmIR(*f, kMmlaTarget, 0);
  EXPECT_NE(ir.find("load <4 x i32>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store <4 x i32>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("load <16 x i8>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("neon.smmla"), std::string::npos) << ir;
}

TEST(CodegenMmlaTest, UmmlaForUnsignedOperands) {
  auto f = ScheduleTile(Gemm(4, 6, 16, "u8", "u8"), {.b_outer = true});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  const std::string assembly = Assembly(*f, kMmlaTarget);
  EXPECT_NE(assembly.find("ummla\tv"), std::string::npos) << assembly;
  EXPECT_EQ(assembly.find("smmla"), std::string::npos) << assembly;
  auto object = EmitObject(*f, Parsed(kMmlaTarget));
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  EXPECT_GE(MmlaInstructions(*object, true), 1);
  EXPECT_TRUE(MatchesInterpreter(*f));
}

// Where the annotation changes nothing: x86, and AArch64 with dotprod but
// no i8mm.
TEST(CodegenMmlaTest, GenericCodeElsewhereMatchesTheInterpreter) {
  for (bool b_outer : {false, true}) {
    SCOPED_TRACE(b_outer ? "j outside i" : "i outside j");
    auto f = ScheduleTile(Gemm(6, 10, 24), {.b_outer = b_outer});
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_TRUE(MatchesInterpreter(*f, {7, 8}));
    const std::string host_ir = LlvmIR(*f, "llvm", 0);
    EXPECT_EQ(host_ir.find("neon.smmla"), std::string::npos) << host_ir;
    EXPECT_NE(host_ir.find("has no int8 matrix multiply instructions"), std::string::npos) << host_ir;
    EXPECT_EQ(Assembly(*f, "llvm").find("mmla"), std::string::npos);
    const std::string dot = Assembly(*f, kDotTarget);
    EXPECT_EQ(dot.find("smmla"), std::string::npos) << dot;
    EXPECT_NE(LlvmIR(*f, kDotTarget, 0).find("has no int8 matrix multiply instructions"), std::string::npos);
  }
}

// Nests the annotation does not fit: the generic path, the reason in the
// annotated loop's metadata, and on the host the interpreter's results.
TEST(CodegenMmlaTest, NestsItDoesNotFitTakeTheGenericPath) {
  struct Case {
    std::string name;
    ir::PrimFunc base;
    MmlaNest nest;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"four columns", Gemm(6, 12, 24), {.cols = 4}, "are not of 2"},
      {"no 2 x 2 nest", Gemm(6, 10, 24), {.k_between = true}, "are not of 2"},
      {"f32", Gemm(4, 4, 16, "f32", "f32", "f32"), {}, "is not i32"},
      {"i16 operands", Gemm(4, 4, 16, "i16", "i16"), {}, "not of two 8-bit integers"},
      {"mixed signs", Gemm(4, 4, 16, "i8", "u8"), {}, "one operand is signed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto f = ScheduleTile(c.base, c.nest);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    const std::string ir = LlvmIR(*f, kMmlaTarget, 0);
    EXPECT_EQ(ir.find("neon.smmla"), std::string::npos) << ir;
    EXPECT_EQ(ir.find("neon.ummla"), std::string::npos) << ir;
    EXPECT_NE(ir.find("tunefarm.mmla.fallback"), std::string::npos) << ir;
    EXPECT_NE(ir.find(c.reason), std::string::npos) << ir;
    EXPECT_TRUE(MatchesInterpreter(*f, {7}, 1e-4, 1e-3));
  }
}

// An annotation written into the IR directly, bypassing the schedule: a
// wrong value is generic code, never a miscompile; so is an annotated loop
// with no loops of 2 around it.
TEST(CodegenMmlaTest, HandWrittenBadAnnotationsAreGeneric) {
  class Annotator : public ir::IRMutator {
   public:
    explicit Annotator(int64_t v) : value_(v) {}
    using ir::IRMutator::Mutate;

   protected:
    ir::Stmt MutateFor(const ir::For* op, const ir::Stmt& self) override {
      ir::Stmt body = Mutate(op->body);
      auto annotations = op->annotations;
      if (body.as<ir::Block>() != nullptr) annotations[ir::kMatrixMultiplyAnnotation] = value_;
      return ir::For::Make(op->loop_var, op->min, op->extent, op->kind, body, op->thread_tag, annotations);
    }

   private:
    int64_t value_;
  };
  // The tile with the value 4 instead of 8.
  auto tile = ScheduleTile(Gemm(4, 4, 16), {});
  ASSERT_TRUE(tile.ok()) << tile.status().ToString();
  ir::PrimFunc g = *tile;
  g.body = Annotator(4).Mutate(g.body);
  std::string ir = LlvmIR(g, kMmlaTarget, 0);
  EXPECT_EQ(ir.find("neon.smmla"), std::string::npos) << ir;
  EXPECT_NE(ir.find("annotation value 4 is not 8"), std::string::npos) << ir;
  EXPECT_TRUE(MatchesInterpreter(g));
  // The default nest (i, j, k of 16): k annotated, no loops of 2 around it.
  ir::PrimFunc plain = Gemm(4, 4, 16);
  plain.body = Annotator(8).Mutate(plain.body);
  ir = LlvmIR(plain, kMmlaTarget, 0);
  EXPECT_EQ(ir.find("neon.smmla"), std::string::npos) << ir;
  EXPECT_NE(ir.find("tunefarm.mmla.fallback"), std::string::npos) << ir;
  EXPECT_TRUE(MatchesInterpreter(plain));
}

}  // namespace
}  // namespace tunefarm
