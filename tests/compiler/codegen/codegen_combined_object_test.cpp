// Several kernels in one object (EmitCombinedObject): each keeps its entries,
// a sequence entry calls them in order on slots of one pointer array, a
// prepack split's entries are called by sequences as a compiled model calls
// them, and the errors: names taken twice, calls to no entry or with the
// wrong number of slots, a kind whose generator builds one kernel per object.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../codegen_test_util.h"
#include "../schedule_test_util.h"
#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/lower/split_prepack.h"

namespace tunefarm {
namespace {

using namespace ir;  // NOLINT
namespace fs = std::filesystem;

const DataType kF32 = DataType::Float(32);

// out[i, j] = A[i, j] * scale + B[j], i parallel, j vectorized.
PrimFunc Axpb(const std::string& name, double scale) {
  Var i("i"), j("j");
  Buffer a = MakeBuffer("A", kF32, {8, 16}), b = MakeBuffer("B", kF32, {16}), out = MakeBuffer("out", kF32, {8, 16});
  PrimFunc f;
  f.name = name;
  f.params = {a, b, out};
  f.num_inputs = 2;
  f.body = For::Make(i, Expr(0), Expr(8), ForKind::kParallel,
                     For::Make(j, Expr(0), Expr(16), ForKind::kVectorized,
                               Store::Make(out, Load::Make(a, {i, j}) * Expr(scale) + Load::Make(b, {j}), {i, j})));
  return f;
}

// kConstMatmul (C = A x B, B constant) with B copied into 16-wide panels at
// the root: a prepack split.
Result<PrimFunc> PackedMatmul() {
  TF_ASSIGN_OR_RETURN(PrimFunc base, testing::LowerText(testing::kConstMatmul));
  Schedule sch(base, 1);
  TF_ASSIGN_OR_RETURN(BlockRV c, sch.GetBlock("C"));
  TF_ASSIGN_OR_RETURN(BlockRV b_copy, sch.CacheRead(c, 1, MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(b_copy, 1, 16, 0));
  return sch.func();
}

// An object's bytes linked with the runtime into a library, loaded; removed with its folder.
class LoadedObject {
 public:
  explicit LoadedObject(const std::string& object) {
    dir_ = fs::temp_directory_path() / ("tunefarm_combined_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::string o = (dir_ / "k.o").string(), so = (dir_ / "k.so").string();
    std::ofstream(o, std::ios::binary).write(object.data(), std::streamsize(object.size()));
    std::string runtime_dir = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    std::string cmd = "cc -shared -o '" + so + "' '" + o + "' -L'" + runtime_dir +
                      "' -ltunefarm_runtime -Wl,-rpath,'" + runtime_dir + "' -lm";
    if (std::system(cmd.c_str()) == 0) handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  ~LoadedObject() {
    if (handle_ != nullptr) dlclose(handle_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  bool loaded() const { return handle_ != nullptr; }
  void* Symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

 private:
  fs::path dir_;
  void* handle_ = nullptr;
};

using Sequence = int32_t (*)(void* const*);

TEST(CombinedObjectTest, ASequenceCallsItsKernelsInOrderOnItsSlots) {
  PrimFunc twice = Axpb("axpb_twice", 2.0), thrice = Axpb("axpb_thrice", 3.0);
  // Slots: 0 A, 1 B, 2 middle, 3 out. out = (A * 2 + B) * 3 + B.
  SequenceEntry run{"both_run", {{"axpb_twice", {0, 1, 2}}, {"axpb_thrice", {2, 1, 3}}}};
  auto object = EmitCombinedObject({twice, thrice}, {run}, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  LoadedObject lib(*object);
  ASSERT_TRUE(lib.loaded()) << dlerror();
  for (const char* entry : {"axpb_twice", "axpb_twice_packed", "axpb_thrice", "axpb_thrice_packed", "both_run"}) {
    EXPECT_NE(lib.Symbol(entry), nullptr) << entry;
  }
  auto sequence = reinterpret_cast<Sequence>(lib.Symbol("both_run"));
  ASSERT_NE(sequence, nullptr);
  std::vector<float> a(8 * 16), b(16), middle(8 * 16, -1.0f), out(8 * 16, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3.0f;
  for (size_t j = 0; j < b.size(); ++j) b[j] = 0.5f * float(j);
  void* slots[] = {a.data(), b.data(), middle.data(), out.data()};
  ASSERT_EQ(sequence(slots), 0);
  for (size_t i = 0; i < out.size(); ++i) {
    const float expected = (a[i] * 2.0f + b[i % 16]) * 3.0f + b[i % 16];
    ASSERT_FLOAT_EQ(out[i], expected) << "element " << i;
  }
  // The kernels are entries of their own too.
  auto direct = reinterpret_cast<int32_t (*)(void*, void*, void*)>(lib.Symbol("axpb_thrice"));
  ASSERT_NE(direct, nullptr);
  std::vector<float> again(8 * 16);
  ASSERT_EQ(direct(a.data(), b.data(), again.data()), 0);
  EXPECT_FLOAT_EQ(again[17], a[17] * 3.0f + b[1]);
}

TEST(CombinedObjectTest, SequencesCallAPrepackSplitsEntries) {
  auto f = PackedMatmul();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto split = SplitPrepack(*f);
  ASSERT_TRUE(split.has_value());
  ASSERT_EQ(split->constant_params, std::vector<size_t>{1});
  ASSERT_EQ(split->packed.size(), 1u);
  // Slots: 0 A, 1 B, 2 C, 3 the packed B.
  SequenceEntry prepack{"m_prepack", {{split->prepack.name, {1, 3}}}};
  SequenceEntry run{"m_run", {{split->prepacked.name, {0, 1, 2, 3}}}};
  auto object = EmitCombinedObject({*f}, {prepack, run}, Target::Host());
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  LoadedObject lib(*object);
  ASSERT_TRUE(lib.loaded()) << dlerror();
  EXPECT_NE(lib.Symbol("mm"), nullptr);  // the whole entry, as EmitObject emits it
  auto do_prepack = reinterpret_cast<Sequence>(lib.Symbol("m_prepack"));
  auto do_run = reinterpret_cast<Sequence>(lib.Symbol("m_run"));
  ASSERT_NE(do_prepack, nullptr);
  ASSERT_NE(do_run, nullptr);
  std::vector<HostBuffer> args = testing::RandomArgs(*f, 7);
  std::vector<HostBuffer> expected = testing::CopyArgs(args);
  ASSERT_TRUE(Interpret(*f, testing::HostPointers(expected)).ok());
  HostBuffer packed = HostBuffer::Like(split->packed[0]);
  void* slots[] = {args[0].data(), args[1].data(), args[2].data(), packed.data()};
  ASSERT_EQ(do_prepack(slots), 0);
  ASSERT_EQ(do_run(slots), 0);
  EXPECT_TRUE(testing::OutputsEqual(*f, args, expected, 1e-4, 1e-4));
}

TEST(CombinedObjectTest, NamesTakenTwiceAndBadCallsAreInvalidArguments) {
  auto twice = EmitCombinedObject({Axpb("k", 2.0), Axpb("k", 3.0)}, {}, Target::Host());
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("'k'"), std::string::npos) << twice.status().message();
  // A sequence named like a kernel's packed entry.
  auto clash = EmitCombinedObject({Axpb("k", 2.0)}, {{"k_packed", {}}}, Target::Host());
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.status().message().find("'k_packed'"), std::string::npos) << clash.status().message();

  auto unknown = EmitCombinedObject({Axpb("k", 2.0)}, {{"run", {{"k", {0, 1, 2}}, {"nope", {0}}}}}, Target::Host());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'run', call 1: 'nope' is not a kernel entry"), std::string::npos)
      << unknown.status().message();
  auto arity = EmitCombinedObject({Axpb("k", 2.0)}, {{"run", {{"k", {0, 1}}}}}, Target::Host());
  ASSERT_FALSE(arity.ok());
  EXPECT_NE(arity.status().message().find("'k' takes 3 buffers, not 2"), std::string::npos)
      << arity.status().message();
  EXPECT_EQ(EmitCombinedObject({}, {}, Target::Host()).status().code(), StatusCode::kInvalidArgument);
}

TEST(CombinedObjectTest, TheRegistrysGeneratorsSayWhetherTheyCombine) {
  auto llvm = CodeGeneratorFor(Target::Host());
  ASSERT_TRUE(llvm.ok());
  auto object = (*llvm)->EmitCombinedObject({Axpb("k", 2.0)}, {{"run", {{"k", {0, 1, 2}}}}}, Target::Host(),
                                            CodegenOptions());
  EXPECT_TRUE(object.ok()) << object.status().ToString();
  auto cuda_target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(cuda_target.ok()) << cuda_target.status().ToString();
  auto cuda = CodeGeneratorFor(*cuda_target);
  ASSERT_TRUE(cuda.ok());
  auto refused = (*cuda)->EmitCombinedObject({Axpb("k", 2.0)}, {}, *cuda_target, CodegenOptions());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(refused.status().message().find("one kernel per object"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace tunefarm
