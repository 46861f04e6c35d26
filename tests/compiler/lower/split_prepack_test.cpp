// Layout-free constant inputs: `input const` in the language, SplitPrepack's
// choice of statements, and the prepack / prepacked entries run through the
// interpreter, the JIT, a loaded object and PreparedCall, each against the
// whole program on random inputs.
#include <gtest/gtest.h>

#include "../schedule_test_util.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/lower/split_prepack.h"

namespace tunefarm::testing {
namespace {

// B copied into 16-wide panels once for the whole call, the copy parallel;
// A copied too (not constant: it must stay in the call); the matmul tiled.
Result<ir::PrimFunc> PackedMatmul(std::string_view text, bool copy_a, bool copy_b_at_loop = false) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc base, LowerText(text));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, ir::MemoryScope::kGlobal));
  if (copy_a) TF_RETURN_IF_ERROR(sch.CacheRead(c, 0, ir::MemoryScope::kGlobal).status());
  TF_ASSIGN_OR_RETURN(auto loops, sch.GetLoops(c));
  TF_ASSIGN_OR_RETURN(auto i, sch.Split(loops[0], {-1, 4}));
  TF_RETURN_IF_ERROR(sch.Parallel(i[0]));
  if (copy_b_at_loop) TF_RETURN_IF_ERROR(sch.ComputeAt(b_copy, i[0]));
  TF_RETURN_IF_ERROR(sch.PackLayout(b_copy, 1, 16, 0));
  if (!copy_b_at_loop) {
    TF_ASSIGN_OR_RETURN(auto copy_loops, sch.GetLoops(b_copy));
    TF_RETURN_IF_ERROR(sch.Parallel(copy_loops[0]));
  }
  return sch.func();
}

std::vector<std::string> Names(const std::vector<ir::Buffer>& buffers) {
  std::vector<std::string> out;
  for (const auto& b : buffers) out.push_back(b->name);
  return out;
}

// Runs f through PreparedCall on random inputs from `seed` and compares with
// the interpreter.
::testing::AssertionResult PreparedCallMatchesInterpreter(const JitKernel& kernel, const ir::PrimFunc& f,
                                                          uint64_t seed) {
  std::vector<HostBuffer> args = RandomArgs(f, seed);
  std::vector<HostBuffer> expected = CopyArgs(args);
  Status s = Interpret(f, HostPointers(expected));
  if (!s.ok()) return ::testing::AssertionFailure() << "Interpret: " << s.ToString();
  auto call = PreparedCall::Prepare(kernel, f, Pointers(args));
  if (!call.ok()) return ::testing::AssertionFailure() << "Prepare: " << call.status().ToString();
  s = (*call)->Run();
  if (!s.ok()) return ::testing::AssertionFailure() << "Run: " << s.ToString();
  return OutputsEqual(f, args, expected, 1e-4, 1e-4);
}

// Runs split.prepack then split.prepacked on copies of `args` (f's params)
// through the interpreter.
Status InterpretSplit(const PrepackSplit& split, std::vector<HostBuffer>& args) {
  std::vector<HostBuffer> packed;
  for (const auto& b : split.packed) packed.push_back(HostBuffer::Like(b));
  std::vector<HostBuffer*> prepack_args;
  for (size_t i : split.constant_params) prepack_args.push_back(&args[i]);
  for (auto& b : packed) prepack_args.push_back(&b);
  TF_RETURN_IF_ERROR(Interpret(split.prepack, prepack_args));
  std::vector<HostBuffer*> main_args = HostPointers(args);
  for (auto& b : packed) main_args.push_back(&b);
  return Interpret(split.prepacked, main_args);
}

TEST(ConstantInputTest, ParsesPrintsAndHashesApart) {
  auto with = ParseWorkload(kConstMatmul);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_FALSE(with->inputs[0]->constant);
  EXPECT_TRUE(with->inputs[1]->constant);
  EXPECT_NE(PrintWorkload(*with).find("B = input const f32[12, 32]"), std::string::npos) << PrintWorkload(*with);
  auto reparsed = ParseWorkload(PrintWorkload(*with));
  ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
  EXPECT_TRUE(StructurallyEqual(*with, *reparsed));
  EXPECT_EQ(StructuralHash(*with), StructuralHash(*reparsed));

  std::string plain(kConstMatmul);
  plain.replace(plain.find("const "), 6, "");
  auto without = ParseWorkload(plain);
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(StructurallyEqual(*with, *without));
  EXPECT_NE(StructuralHash(*with), StructuralHash(*without));
}

TEST(ConstantInputTest, ConstWithoutATypeIsAnErrorNamingThePlace) {
  auto w = ParseWorkload("workload w(N = 4) {\n  X = input const [N]\n  Y[i] = X[i]\n  output Y\n}\n");
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("2:"), std::string::npos) << w.status().message();
  EXPECT_NE(w.status().message().find("element type"), std::string::npos) << w.status().message();
}

TEST(SplitPrepackTest, RootCopyOfAConstantInputMovesToThePrepackEntry) {
  auto f = PackedMatmul(kConstMatmul, /*copy_a=*/true);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto split = SplitPrepack(*f);
  ASSERT_TRUE(split.has_value()) << ir::ToString(*f);
  EXPECT_EQ(Names(split->packed), std::vector<std::string>{"B_global"});
  EXPECT_EQ(Names(split->prepack.params), (std::vector<std::string>{"B", "B_global"}));
  EXPECT_EQ(split->constant_params, std::vector<size_t>{1});
  EXPECT_EQ(split->prepack.num_inputs, 1u);
  EXPECT_EQ(Names(split->prepacked.params), (std::vector<std::string>{"A", "B", "C", "B_global"}));
  EXPECT_EQ(split->prepacked.num_inputs, 2u);
  EXPECT_EQ(split->prepack.name, "mm_prepack");
  EXPECT_EQ(split->prepacked.name, "mm_prepacked");
  // A's copy (not constant) stays in the call; B's is gone from it.
  std::string main_text = ir::ToString(split->prepacked);
  EXPECT_NE(main_text.find("A_global"), std::string::npos) << main_text;
  EXPECT_EQ(main_text.find("allocate B_global"), std::string::npos) << main_text;
  EXPECT_EQ(ir::ToString(split->prepack).find("A_global"), std::string::npos) << ir::ToString(split->prepack);

  // The interpreter: prepack then prepacked equals the whole program.
  std::vector<HostBuffer> expected = RandomArgs(*f, 5);
  std::vector<HostBuffer> actual = CopyArgs(expected);
  ASSERT_TRUE(Interpret(*f, HostPointers(expected)).ok());
  Status s = InterpretSplit(*split, actual);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(OutputsEqual(*f, actual, expected, 1e-5, 1e-5));
}

TEST(SplitPrepackTest, NothingToSplitWithoutConstantsOrWithACopyPerTask) {
  std::string plain(kConstMatmul);
  plain.replace(plain.find("const "), 6, "");
  auto f = PackedMatmul(plain, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(SplitPrepack(*f).has_value());
  // A copy made per parallel task is inside the kernel's loop: not a root statement.
  auto at_loop = PackedMatmul(kConstMatmul, false, /*copy_b_at_loop=*/true);
  ASSERT_TRUE(at_loop.ok()) << at_loop.status().ToString();
  EXPECT_FALSE(SplitPrepack(*at_loop).has_value()) << ir::ToString(*at_loop);
  // The default schedule copies nothing.
  auto base = LowerText(kConstMatmul);
  ASSERT_TRUE(base.ok());
  EXPECT_FALSE(SplitPrepack(*base).has_value());
}

// What a measured call runs, lowered: the prepacked entry when there is a
// split (the packing of B is left out), the whole program otherwise.
TEST(SplitPrepackTest, LowerMeasuredCallLeavesThePackingOut) {
  auto packed = PackedMatmul(kConstMatmul, /*copy_a=*/false);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  auto split = SplitPrepack(*packed);
  ASSERT_TRUE(split.has_value());
  auto measured = LowerMeasuredCall(*packed);
  ASSERT_TRUE(measured.ok()) << measured.status().ToString();
  auto expected = LowerForCodegen(split->prepacked);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(ir::ToString(*measured), ir::ToString(*expected));
  EXPECT_EQ(ir::ToString(*measured).find("allocate B_global"), std::string::npos) << ir::ToString(*measured);

  std::string plain(kConstMatmul);
  plain.replace(plain.find("const "), 6, "");
  auto whole = PackedMatmul(plain, false);
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  auto measured_whole = LowerMeasuredCall(*whole);
  ASSERT_TRUE(measured_whole.ok()) << measured_whole.status().ToString();
  auto expected_whole = LowerForCodegen(*whole);
  ASSERT_TRUE(expected_whole.ok());
  EXPECT_EQ(ir::ToString(*measured_whole), ir::ToString(*expected_whole));
  EXPECT_NE(ir::ToString(*measured_whole).find("B_global"), std::string::npos) << ir::ToString(*measured_whole);
}

TEST(SplitPrepackTest, PreparedCallPacksOnceAndMatchesTheWholeKernel) {
  auto f = PackedMatmul(kConstMatmul, true);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto kernel = JitCompile(*f, Target::Host());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  ASSERT_TRUE((*kernel)->has_prepack());
  // The whole entry still packs per call and is correct on its own.
  EXPECT_TRUE(KernelMatchesInterpreter(**kernel, *f, 3, 1e-4, 1e-4));

  std::vector<HostBuffer> args = RandomArgs(*f, 9);
  auto call = PreparedCall::Prepare(**kernel, *f, Pointers(args));
  ASSERT_TRUE(call.ok()) << call.status().ToString();
  EXPECT_TRUE((*call)->prepacked());
  EXPECT_EQ((*call)->packed_bytes(), 12 * 32 * 4);
  // Packed once: a call after B changed still computes with the B it was
  // prepared with (the contract says prepare again after changing it).
  {
    std::vector<HostBuffer> expected = CopyArgs(args);
    ASSERT_TRUE(Interpret(*f, HostPointers(expected)).ok());
    std::vector<HostBuffer> saved_b = CopyArgs(args);
    std::mt19937_64 other(77);
    args[1].FillRandom(other);
    ASSERT_TRUE((*call)->Run().ok());
    EXPECT_TRUE(CompareBuffers(args[2], expected[2], 1e-4, 1e-4).equal);
    std::memcpy(args[1].data(), saved_b[1].data(), size_t(args[1].size_bytes()));
  }
  // New activations on every call, the same weights: the packed copy made
  // once serves them all.
  std::mt19937_64 rng(21);
  for (int round = 0; round < 3; ++round) {
    args[0].FillRandom(rng);
    args[2].FillRandom(rng);
    std::vector<HostBuffer> expected = CopyArgs(args);
    ASSERT_TRUE(Interpret(*f, HostPointers(expected)).ok());
    Status s = (*call)->Run();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(OutputsEqual(*f, args, expected, 1e-4, 1e-4)) << "round " << round;
  }
}

TEST(SplitPrepackTest, MeasurementBuildHasOnlyTheSplitEntries) {
  auto f = PackedMatmul(kConstMatmul, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  CodegenOptions options;
  options.whole_entry = false;
  auto kernel = JitCompile(*f, Target::Host(), options);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  std::vector<HostBuffer> args = RandomArgs(*f, 4);
  EXPECT_EQ((*kernel)->Run(Pointers(args)).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(PreparedCallMatchesInterpreter(**kernel, *f, 4));
}

// Statements that must stay in the call, built by hand at the root.
TEST(SplitPrepackTest, OnlyCopiesOfConstantsIntoTheirOwnRootBuffersMove) {
  auto w = ParseWorkload(kConstMatmul);
  ASSERT_TRUE(w.ok());
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok());
  const ir::Buffer& A = base->params[0];
  const ir::Buffer& B = base->params[1];
  const ir::Buffer& C = base->params[2];
  ir::Buffer P = ir::MakeBuffer("P", B->dtype, B->shape);
  ir::Buffer L = ir::MakeBuffer("L", B->dtype, B->shape, ir::MemoryScope::kLocal);
  auto copy = [&](const ir::Buffer& to) {  // to = B
    ir::Var k("k", ir::DataType::Index()), n("n", ir::DataType::Index());
    return ir::For::Make(k, int64_t(0), B->shape[0], ir::ForKind::kSerial,
                         ir::For::Make(n, int64_t(0), B->shape[1], ir::ForKind::kSerial,
                                       ir::Store::Make(to, ir::Load::Make(B, {k, n}), {k, n})));
  };
  auto use = [&](const ir::Buffer& from) {  // C[0, 0] = from[0, 0] + A[0, 0]
    return ir::Store::Make(C, ir::Load::Make(from, {int64_t(0), int64_t(0)}) + ir::Load::Make(A, {int64_t(0), int64_t(0)}),
                           {int64_t(0), int64_t(0)});
  };
  auto func = [&](ir::Stmt body) {
    ir::PrimFunc f = *base;
    f.body = body;
    return f;
  };
  // The plain case moves.
  EXPECT_TRUE(SplitPrepack(func(ir::Allocate::Make(P, ir::SeqStmt::Make({copy(P), use(P)})))).has_value());
  // Written by a kept statement too: stays.
  ir::Stmt overwrite = ir::Store::Make(P, ir::Load::Make(A, {int64_t(0), int64_t(0)}), {int64_t(0), int64_t(0)});
  EXPECT_FALSE(SplitPrepack(func(ir::Allocate::Make(P, ir::SeqStmt::Make({copy(P), overwrite, use(P)})))).has_value());
  // Read before it is written: stays.
  EXPECT_FALSE(SplitPrepack(func(ir::Allocate::Make(P, ir::SeqStmt::Make({use(P), copy(P), use(P)})))).has_value());
  // Into an output, or into a local buffer: stays.
  ir::PrimFunc into_output = func(copy(C));
  EXPECT_FALSE(SplitPrepack(into_output).has_value());
  EXPECT_FALSE(SplitPrepack(func(ir::Allocate::Make(L, ir::SeqStmt::Make({copy(L), use(L)})))).has_value());
  // A copy that also reads a non-constant input: stays.
  ir::Var k("k", ir::DataType::Index());
  ir::Stmt mixed = ir::For::Make(k, int64_t(0), int64_t(8), ir::ForKind::kSerial,
                                 ir::Store::Make(P, ir::Load::Make(B, {k, k}) + ir::Load::Make(A, {k, k}), {k, k}));
  EXPECT_FALSE(SplitPrepack(func(ir::Allocate::Make(P, ir::SeqStmt::Make({mixed, use(P)})))).has_value());
}

TEST(SplitPrepackTest, AnObjectWithoutTheSplitEntriesIsACompileErrorNamingThem) {
  auto f = PackedMatmul(kConstMatmul, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  // The same kernel name, built from the default schedule: no split entries.
  auto base = LowerText(kConstMatmul);
  ASSERT_TRUE(base.ok());
  auto object = EmitObject(*base, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  auto kernel = JitLoadObject(*object, *f, Target::Host());
  ASSERT_FALSE(kernel.ok());
  EXPECT_NE(kernel.status().message().find("mm_prepack"), std::string::npos) << kernel.status().ToString();
}

TEST(SplitPrepackTest, LoadedObjectKeepsTheSplitEntries) {
  auto f = PackedMatmul(kConstMatmul, false);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  CodegenOptions options;
  options.whole_entry = false;
  auto object = EmitObject(*f, Target::Host(), options);
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  auto kernel = JitLoadObject(*object, *f, Target::Host());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_TRUE((*kernel)->has_prepack());
  EXPECT_TRUE(PreparedCallMatchesInterpreter(**kernel, *f, 8));
}

TEST(SplitPrepackTest, WeightCopyAfterANonConstantStageMovesAlone) {
  // The padding stage reads X (not constant) and stays; the weights' copy,
  // made after it, moves ahead of it into the prepack entry.
  std::string text(kPaddedConv);
  text.replace(text.find("Wt = input f32"), 14, "Wt = input const f32");
  auto base = LowerText(text, {{"K", 16}});
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  Schedule sch(*base, 1);
  auto steps = [&]() -> Status {
    TF_ASSIGN_OR_RETURN(BlockRV conv, sch.GetBlock("out"));
    TF_ASSIGN_OR_RETURN(BlockRV w_copy, sch.CacheRead(conv, 1, ir::MemoryScope::kGlobal));
    return sch.PackLayout(w_copy, 0, 16, 0);
  };
  Status s = steps();
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto split = SplitPrepack(sch.func());
  ASSERT_TRUE(split.has_value()) << ir::ToString(sch.func());
  EXPECT_EQ(Names(split->prepack.params), (std::vector<std::string>{"Wt", "Wt_global"}));
  EXPECT_NE(ir::ToString(split->prepacked).find("pad"), std::string::npos);
  std::vector<HostBuffer> expected = RandomArgs(sch.func(), 6);
  std::vector<HostBuffer> actual = CopyArgs(expected);
  ASSERT_TRUE(Interpret(*base, HostPointers(expected)).ok());
  s = InterpretSplit(*split, actual);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(OutputsEqual(sch.func(), actual, expected, 1e-4, 1e-4));
  EXPECT_TRUE(MatchesInterpreter(sch.func(), {2}));
}

}  // namespace
}  // namespace tunefarm::testing
