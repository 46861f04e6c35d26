// int8 matrix tiles on AArch64 (`smmla`/`ummla`), run under qemu-aarch64:
// the object loader's driver (tests/runtime/aarch64/) runs each kernel and
// the outputs must equal the interpreter's run of the default program
// exactly (qemu_int8_reference.h).
//
//   - hand-scheduled 2 x 2 x 8 nests, one per way the code generator builds
//     the operands (codegen_llvm_mmla.cpp): one 8-byte load per row, one load
//     of a short span and a shuffle, bytes gathered; the accumulator tile
//     contiguous or not; signed and unsigned;
//   - programs drawn from the CPU rules for gmm_int8 at odd sizes, for
//     AArch64 with dotprod and i8mm: every one equals the interpreter, and
//     those the rule tiled for smmla (counted; some must be) contain it.
//
// qemu's default CPU ("max") has the int8 matrix multiply instructions.
#include <array>
#include <cstring>
#include <set>

#include "qemu_drawn_programs.h"
#include "qemu_int8_reference.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::tuner {
namespace {

using testing::GmmInt8;
using testing::Int8Gemm;
using testing::Lowered;
using testing::Reference;

constexpr const char* kMmlaTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod,+i8mm";

// SMMLA/UMMLA (vector) words in an object: 0 1 U 01110 100 Rm 101001 Rn Rd.
int MmlaInstructions(const std::string& object) {
  return testing::CountInstructionWords(object, 0xDFE0FC00u, 0x4E80A400u);
}

// i / 2, j / 2, k / 8, i % 2, j % 2, k % 8 (annotated); `b_outer` puts j / 2
// first.
Result<ir::PrimFunc> TileSchedule(const ir::PrimFunc& base, bool b_outer) {
  Schedule sch(base);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> i, sch.Split(loops[0], {-1, 2}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, 2}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> k, sch.Split(loops[2], {-1, ir::kMatrixMultiplySteps}));
  if (b_outer) {
    TF_RETURN_IF_ERROR(sch.Reorder({j[0], i[0], k[0], i[1], j[1], k[1]}));
  } else {
    TF_RETURN_IF_ERROR(sch.Reorder({i[0], j[0], k[0], i[1], j[1], k[1]}));
  }
  TF_RETURN_IF_ERROR(sch.Annotate(k[1], ir::kMatrixMultiplyAnnotation, ir::kMatrixMultiplySteps));
  return sch.func();
}

TEST(SketchInt8MmlaQemuTest, HandScheduledNestsMatchTheInterpreter) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  const std::vector<testing::HandBuiltCase> cases = {
      {"rows: an 8-byte load per row", Int8Gemm(6, 10, 24, "i8", true), false},
      {"rows, j outside i", Int8Gemm(4, 6, 16, "i8", true), true},
      {"the tile one 16-byte load (N = 2)", Int8Gemm(4, 2, 16, "i8", true), false},
      {"unsigned", Int8Gemm(6, 10, 24, "u8", true), false},
      {"columns: a 30-byte span", Int8Gemm(2, 4, 8, "i8", false), false},
      {"columns: bytes gathered", Int8Gemm(4, 12, 16, "i8", false), false},
  };
  testing::ExpectHandBuiltNestsMatch(kMmlaTarget, cases, TileSchedule, MmlaInstructions);
}

// gmm_int8 at odd sizes: M or N odd (the vector axis padded to whole
// vectors; the other axis's odd tiles are no smmla rows, its even ones are),
// N prime, K a multiple of 8 or not (then neither sdot nor smmla), M = 1.
TEST(SketchInt8MmlaQemuTest, DrawnProgramsMatchTheInterpreterAndUseSmmla) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  auto target = Target::Parse(kMmlaTarget);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto policy = MakeSketchPolicy(*target, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  const int wanted = testing::ProgramCount("TUNEFARM_MMLA_PROGRAMS", 8);
  int tiled = 0, dot = 0, total = 0;
  for (auto [m, n, k, constant_b] : std::vector<std::array<int64_t, 4>>{
           {7, 17, 24, 0}, {7, 12, 16, 0}, {8, 7, 16, 0}, {12, 7, 24, 0}, {1, 12, 8, 0}, {16, 101, 8, 0},
           {18, 13, 40, 1}, {4, 9, 17, 0}}) {
    const ir::PrimFunc base = Lowered(GmmInt8(m, n, k, constant_b != 0));
    SCOPED_TRACE("gmm_int8 " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                 (constant_b ? ", B constant" : ""));
    Reference reference(base);
    EvolutionarySearch search(base, policy->get(), SearchOptions{}, /*seed=*/47);
    std::set<std::string> seen;
    int run = 0;
    for (int attempt = 0; run < wanted && attempt < 4 * wanted; ++attempt) {
      auto c = search.Sample();
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      const std::string trace = c->trace.ToText();
      if (!seen.insert(trace).second) continue;
      SCOPED_TRACE("program " + std::to_string(run) + ":\n" + trace);
      auto object = EmitObject(c->func, *target);
      ASSERT_TRUE(object.ok()) << object.status().ToString();
      dot += trace.find(ir::kDotProductAnnotation) != std::string::npos;
      if (trace.find(ir::kMatrixMultiplyAnnotation) != std::string::npos) {
        ++tiled;
        // The rule's nests are the shape the code generator fits.
        EXPECT_GE(MmlaInstructions(*object), 1);
      }
      ASSERT_TRUE(reference.Matches(c->func, *object, "p" + std::to_string(run)));
      ++run;
      ++total;
    }
  }
  RecordProperty("programs", total);
  RecordProperty("smmla_programs", tiled);
  RecordProperty("sdot_programs", dot);
  EXPECT_GE(tiled, 3) << "of " << total << " programs (" << dot << " with sdot)";
  EXPECT_LT(tiled, total);
}

}  // namespace
}  // namespace tunefarm::tuner
