// The code generator registry (codegen.h): `llvm` is LLVM's generator and
// builds what EmitObject builds; an unregistered kind names itself and the
// registered ones; a new kind plugs in by registering, once.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm {
namespace {

ir::PrimFunc SmallMatmul() {
  auto w = ParseWorkload("workload mm(M = 8, N = 8, K = 8) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

TEST(CodegenRegistryTest, LlvmTargetsGetTheLlvmGeneratorWhichEmitsWhatEmitObjectEmits) {
  auto generator = CodeGeneratorFor(Target::Host());
  ASSERT_TRUE(generator.ok()) << generator.status().ToString();
  EXPECT_EQ((*generator)->kind(), "llvm");
  EXPECT_TRUE((*generator)->can_jit());
  ir::PrimFunc f = SmallMatmul();
  auto object = (*generator)->EmitObject(f, Target::Host(), CodegenOptions());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  auto direct = EmitObject(f, Target::Host());
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_EQ(*object, *direct);
  auto jit = (*generator)->JitCompile(f, Target::Host(), CodegenOptions());
  ASSERT_TRUE(jit.ok()) << jit.status().ToString();
  EXPECT_EQ((*jit)->name(), f.name);
  // One generator per kind: asking twice gives the same one.
  EXPECT_EQ(*CodeGeneratorFor(Target::Host()), *generator);
}

TEST(CodegenRegistryTest, AKindWithoutAGeneratorIsInvalidArgumentNamingTheRegisteredOnes) {
  Target rocm;  // a kind Target::Parse does not know, let alone a generator
  rocm.kind = "rocm";
  auto generator = CodeGeneratorFor(rocm);
  ASSERT_FALSE(generator.ok());
  EXPECT_EQ(generator.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(generator.status().message().find("no code generator for target kind 'rocm'"), std::string::npos)
      << generator.status().message();
  EXPECT_NE(generator.status().message().find("registered for: cuda, llvm"), std::string::npos)
      << generator.status().message();
}

// A generator of its own kind: what a CUDA one would be, minus the code.
class FakeGenerator final : public CodeGenerator {
 public:
  std::string_view kind() const override { return "fake"; }
  Result<std::string> EmitObject(const ir::PrimFunc& f, const Target&, const CodegenOptions&) const override {
    return "object of " + f.name;
  }
  bool can_jit() const override { return false; }
  Result<std::unique_ptr<JitKernel>> JitCompile(const ir::PrimFunc&, const Target&,
                                                const CodegenOptions&) const override {
    return Status::Unimplemented("fake kernels do not run");
  }
};

TEST(CodegenRegistryTest, ANewKindPlugsInByRegisteringOnce) {
  ASSERT_TRUE(RegisterCodeGenerator(std::make_unique<FakeGenerator>()).ok());
  EXPECT_EQ(RegisterCodeGenerator(std::make_unique<FakeGenerator>()).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(RegisteredCodeGeneratorKinds(), (std::vector<std::string>{"cuda", "fake", "llvm"}));
  Target fake;
  fake.kind = "fake";
  auto generator = CodeGeneratorFor(fake);
  ASSERT_TRUE(generator.ok()) << generator.status().ToString();
  EXPECT_EQ((*generator)->kind(), "fake");
  EXPECT_EQ(*(*generator)->EmitObject(SmallMatmul(), fake, CodegenOptions()), "object of mm");
  EXPECT_FALSE((*generator)->can_jit());
  // The llvm generator is untouched.
  EXPECT_EQ((*CodeGeneratorFor(Target::Host()))->kind(), "llvm");
}

}  // namespace
}  // namespace tunefarm
