// int8 dot products on AArch64 (`sdot`/`udot`), run under qemu-aarch64: the
// object loader's driver (tests/runtime/aarch64/) runs each kernel and the
// outputs must equal the interpreter's run of the default program.
//
//   - hand-scheduled nests, one per way the code generator builds the dot
//     product's operands (codegen_llvm_dot.cpp): a 4-byte word per lane, a
//     broadcast word, one load of a short span and a shuffle, a gather of
//     bytes; signed and unsigned;
//   - programs drawn from the CPU rules for gmm_int8 at odd sizes, for
//     AArch64 with dotprod: every one equals the interpreter, and those the
//     dot-product rule chose (counted; some must be) contain sdot. Their
//     operands come from copies packed [N/4, K/4, 4, 4]: 16 contiguous bytes.
//
// qemu's default CPU ("max") has the dot product instructions.
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "qemu_int8_reference.h"
#include "tunefarm/compiler/ir/loop_annotations.h"

namespace tunefarm::tuner {
namespace {

using testing::GmmInt8;
using testing::Int8Gemm;
using testing::Lowered;
using testing::Reference;

constexpr const char* kDotTarget = "llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod";

// 128-bit SDOT/UDOT (vector) words in an object: 0 1 U 01110 100 Rm 100101 Rn Rd.
int DotInstructions(const std::string& object) {
  return testing::CountInstructionWords(object, 0xDFE0FC00u, 0x4E809400u);
}

// i, j / 4, k / 4, j % 4 vectorized, k % 4 annotated; `b_outer` puts j / 4 first.
Result<ir::PrimFunc> DotSchedule(const ir::PrimFunc& base, bool b_outer) {
  Schedule sch(base);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> j, sch.Split(loops[1], {-1, 4}));
  TF_ASSIGN_OR_RETURN(std::vector<LoopRV> k, sch.Split(loops[2], {-1, 4}));
  if (b_outer) {
    TF_RETURN_IF_ERROR(sch.Reorder({j[0], loops[0], k[0], j[1], k[1]}));
  } else {
    TF_RETURN_IF_ERROR(sch.Reorder({loops[0], j[0], k[0], j[1], k[1]}));
  }
  TF_RETURN_IF_ERROR(sch.Vectorize(j[1]));
  TF_RETURN_IF_ERROR(sch.Annotate(k[1], ir::kDotProductAnnotation, ir::kDotProductSteps));
  return sch.func();
}

TEST(SketchInt8DotQemuTest, HandScheduledNestsMatchTheInterpreter) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  const std::vector<testing::HandBuiltCase> cases = {
      {"rows: a word per lane, A broadcast", Int8Gemm(7, 12, 20, "i8", true), false},
      {"rows, j outside i", Int8Gemm(5, 8, 12, "i8", true), true},
      {"unsigned", Int8Gemm(7, 12, 20, "u8", true), false},
      {"columns: a 40-byte span", Int8Gemm(3, 12, 8, "i8", false), false},
      {"columns: bytes gathered", Int8Gemm(3, 24, 8, "i8", false), false},
  };
  testing::ExpectHandBuiltNestsMatch(kDotTarget, cases, DotSchedule, DotInstructions);
}

// gmm_int8 at sizes the rules tile differently: N a multiple of 4 or
// padded to one, K with few or many 4-steps, B constant or not.
TEST(SketchInt8DotQemuTest, DrawnProgramsMatchTheInterpreterAndUseSdot) {
  ASSERT_TRUE(tunefarm::testing::ToolsPresent());
  auto target = Target::Parse(kDotTarget);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto policy = MakeSketchPolicy(*target, std::string(TUNEFARM_SOURCE_DIR) + "/configs");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  const char* env = std::getenv("TUNEFARM_DOT_PROGRAMS");
  const int wanted = env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 10;
  int annotated = 0, total = 0;
  for (auto [m, n, k, constant_b] : std::vector<std::array<int64_t, 4>>{
           {7, 12, 20, 0}, {9, 10, 36, 0}, {13, 32, 64, 0}, {5, 16, 24, 1}}) {
    const ir::PrimFunc base = Lowered(GmmInt8(m, n, k, constant_b != 0));
    SCOPED_TRACE("gmm_int8 " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                 (constant_b ? ", B constant" : ""));
    Reference reference(base);
    EvolutionarySearch search(base, policy->get(), SearchOptions{}, /*seed=*/29);
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
      if (trace.find(ir::kDotProductAnnotation) != std::string::npos) {
        ++annotated;
        // The rule's nests are the shape the code generator fits.
        EXPECT_GE(DotInstructions(*object), 1);
      }
      ASSERT_TRUE(reference.Matches(c->func, *object, "p" + std::to_string(run)));
      ++run;
      ++total;
    }
  }
  RecordProperty("programs", total);
  RecordProperty("dot_product_programs", annotated);
  // Half of the programs draw the dot product where it fits; 40 draws
  // without one would be a broken rule.
  EXPECT_GE(annotated, 3) << "of " << total << " programs";
  EXPECT_LT(annotated, total);
}

}  // namespace
}  // namespace tunefarm::tuner
