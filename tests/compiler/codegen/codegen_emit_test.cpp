// Object, assembly and IR emission: ELF headers for x86-64 and AArch64, an
// x86-64 object linked into a shared library with the runtime and called
// through dlopen, zmm registers for the AVX-512 host, and clear errors for
// targets the LLVM backend cannot handle; SVE registers of the target's length.
#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../codegen_test_util.h"

namespace tunefarm {
namespace {

using namespace ir;  // NOLINT
namespace fs = std::filesystem;

const DataType kF32 = DataType::Float(32);

// out[i, j] = A[i, j] * 2 + B[j], i parallel, j vectorized (16 lanes).
PrimFunc AxpbFunc(const std::string& name) {
  Var i("i"), j("j");
  Buffer a = MakeBuffer("A", kF32, {8, 16}), b = MakeBuffer("B", kF32, {16}), out = MakeBuffer("out", kF32, {8, 16});
  PrimFunc f;
  f.name = name;
  f.params = {a, b, out};
  f.num_inputs = 2;
  f.body = For::Make(i, Expr(0), Expr(8), ForKind::kParallel,
                     For::Make(j, Expr(0), Expr(16), ForKind::kVectorized,
                               Store::Make(out, Load::Make(a, {i, j}) * Expr(2.0) + Load::Make(b, {j}), {i, j})));
  return f;
}

uint16_t ElfMachine(const std::string& object) {
  if (object.size() < sizeof(Elf64_Ehdr) || object.compare(0, 4, "\x7f" "ELF") != 0) return 0;
  Elf64_Ehdr header;
  std::memcpy(&header, object.data(), sizeof(header));
  return header.e_machine;
}

TEST(CodegenEmitTest, ObjectsForX86AndAArch64) {
  auto x86 = Target::Parse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4");
  ASSERT_TRUE(x86.ok()) << x86.status().ToString();
  auto obj = EmitObject(AxpbFunc("axpb"), *x86);
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_EQ(ElfMachine(*obj), EM_X86_64);

  auto arm = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  ASSERT_TRUE(arm.ok()) << arm.status().ToString();
  auto arm_obj = EmitObject(AxpbFunc("axpb"), *arm);
  ASSERT_TRUE(arm_obj.ok()) << arm_obj.status().ToString();
  EXPECT_EQ(ElfMachine(*arm_obj), EM_AARCH64);
  auto arm_asm = EmitAssembly(AxpbFunc("axpb"), *arm);
  ASSERT_TRUE(arm_asm.ok());
  EXPECT_NE(arm_asm->find(".4s"), std::string::npos) << *arm_asm;  // NEON 4 x f32 registers
}

size_t Count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// With a fixed SVE length a row of 16 f32 lives in SVE registers of that
// length: two z registers at 256 bits, one at 512 (a store each); without a
// length the vectors are NEON's four lanes.
TEST(CodegenEmitTest, FixedLengthSveUsesZRegistersOfThatLength) {
  auto sve256 = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve -sve-bits=256");
  ASSERT_TRUE(sve256.ok()) << sve256.status().ToString();
  auto text = EmitAssembly(AxpbFunc("axpb"), *sve256);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("ptrue\tp0.s"), std::string::npos) << *text;
  EXPECT_EQ(Count(*text, "st1w\t{ z"), 2u) << *text;

  auto sve512 = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve -sve-bits=512");
  ASSERT_TRUE(sve512.ok()) << sve512.status().ToString();
  text = EmitAssembly(AxpbFunc("axpb"), *sve512);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(Count(*text, "st1w\t{ z"), 1u) << *text;

  auto agnostic = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+sve");
  ASSERT_TRUE(agnostic.ok()) << agnostic.status().ToString();
  text = EmitAssembly(AxpbFunc("axpb"), *agnostic);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(Count(*text, "{ z"), 0u) << *text;
  EXPECT_NE(text->find(".4s"), std::string::npos) << *text;
}

TEST(CodegenEmitTest, X86ObjectLinksIntoSharedLibraryAndRuns) {
  PrimFunc f = AxpbFunc("axpb_linked");
  auto obj = EmitObject(f, Target::Host());
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  fs::path dir = fs::temp_directory_path() / ("tunefarm_emit_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string o = (dir / "k.o").string(), so = (dir / "k.so").string();
  std::ofstream(o, std::ios::binary).write(obj->data(), std::streamsize(obj->size()));
  std::string runtime_dir = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
  std::string cmd = "cc -shared -o '" + so + "' '" + o + "' -L'" + runtime_dir + "' -ltunefarm_runtime -Wl,-rpath,'" +
                    runtime_dir + "' -lm";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  // Both entries: the plain C signature and the packed one.
  auto plain = reinterpret_cast<int32_t (*)(void*, void*, void*)>(dlsym(handle, "axpb_linked"));
  auto packed = reinterpret_cast<int32_t (*)(void**)>(dlsym(handle, "axpb_linked_packed"));
  ASSERT_NE(plain, nullptr);
  ASSERT_NE(packed, nullptr);

  std::vector<HostBuffer> expected = testing::RandomArgs(f, 3);
  std::vector<HostBuffer> via_plain = testing::CopyArgs(expected), via_packed = testing::CopyArgs(expected);
  ASSERT_TRUE(Interpret(f, testing::HostPointers(expected)).ok());
  EXPECT_EQ(plain(via_plain[0].data(), via_plain[1].data(), via_plain[2].data()), 0);
  std::vector<void*> args = testing::Pointers(via_packed);
  EXPECT_EQ(packed(args.data()), 0);
  EXPECT_TRUE(testing::OutputsEqual(f, via_plain, expected, 1e-5, 1e-5));
  EXPECT_TRUE(testing::OutputsEqual(f, via_packed, expected, 1e-5, 1e-5));
  dlclose(handle);
  fs::remove_all(dir);
}

TEST(CodegenEmitTest, HostAssemblyUsesZmmWithAvx512) {
  Target host = Target::Host();
  if (host.VectorBits() < 512) GTEST_SKIP() << "host has no AVX-512: " << host.ToString();
  Var j("j");
  Buffer a = MakeBuffer("A", kF32, {16}), b = MakeBuffer("B", kF32, {16}), out = MakeBuffer("out", kF32, {16});
  PrimFunc f;
  f.name = "zmm";
  f.params = {a, b, out};
  f.num_inputs = 2;
  f.body = For::Make(j, Expr(0), Expr(16), ForKind::kVectorized,
                     Store::Make(out, Load::Make(a, {j}) * Load::Make(b, {j}) + Expr(1.0), {j}));
  auto text = EmitAssembly(f, host);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("zmm"), std::string::npos) << *text;
  EXPECT_NE(text->find("vfmadd"), std::string::npos) << *text;  // fp-contract=fast
}

TEST(CodegenEmitTest, LLVMIRHasBothEntriesAndParamAttributes) {
  auto text = EmitLLVMIR(AxpbFunc("axpb_ir"), Target::Host());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_NE(text->find("@axpb_ir("), std::string::npos);
  EXPECT_NE(text->find("@axpb_ir_packed("), std::string::npos);
  EXPECT_NE(text->find("noalias"), std::string::npos);
  // A caller's buffer may be aligned only to its element (numpy, malloc, a
  // slice): no parameter promises LLVM more, so it emits no aligned-only
  // vector move on one (tests/tuner/unaligned_buffers_test.cpp runs them).
  size_t define = text->find("define");
  while (define != std::string::npos) {
    std::string line = text->substr(define, text->find('\n', define) - define);
    EXPECT_EQ(line.find("align"), std::string::npos) << line;
    define = text->find("define", define + 1);
  }
}

TEST(CodegenEmitTest, ErrorsForTargetsTheBackendCannotHandle) {
  Target bogus = Target::Host();
  bogus.triple = "nosucharch-unknown-linux-gnu";
  auto obj = EmitObject(AxpbFunc("bad"), bogus);
  ASSERT_FALSE(obj.ok());
  EXPECT_EQ(obj.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(obj.status().message().find("nosucharch"), std::string::npos) << obj.status().message();

  auto cuda = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda.ok());
  EXPECT_FALSE(EmitObject(AxpbFunc("bad"), *cuda).ok());

  auto arm = Target::Parse("llvm -mtriple=aarch64-linux-gnu");
  ASSERT_TRUE(arm.ok());
  auto jit = JitCompile(AxpbFunc("bad"), *arm);
  ASSERT_FALSE(jit.ok());
  EXPECT_EQ(jit.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tunefarm
