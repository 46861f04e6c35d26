// Exported kernels called with a caller's ordinary buffers: the C entries of
// an object `tunefarm compile` builds (the whole kernel, and the prepack /
// prepacked pair when the schedule packs its weights) take f32 pointers at any
// 4-byte alignment -- numpy arrays and malloc memory are 16-byte aligned, a
// slice of an array is 4. Default and sampled (tuned-like) schedules of a
// matmul whose sizes are not multiples of 16, a stride-2 depthwise conv and a
// softmax are called with every buffer 4 and 16 bytes past a 64-byte boundary
// and checked against the reference interpreter.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../compiler/schedule_test_util.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir_printer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::tuner {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kOddMatmul = R"(
workload odd_mm(M = 37, N = 53, K = 29) {
  A = input f32[M, K]
  B = input const f32[K, N]
  C[i, j] = sum(k: K) A[i, k] * B[k, j]
  output C
}
)";

constexpr std::string_view kDepthwiseStride2 = R"(
workload dw_s2(N = 1, C = 24, H = 15, W = 15, R = 3, S = 3, P = 1) {
  X  = input f32[N, C, H, W]
  Wt = input const f32[C, R, S]
  out[n, c, h: (H + 2 * P - R) / 2 + 1, w: (W + 2 * P - S) / 2 + 1] = sum(r: R, s: S)
      select(h * 2 + r - P >= 0 && h * 2 + r - P < H && w * 2 + s - P >= 0 && w * 2 + s - P < W,
             X[n, c, h * 2 + r - P, w * 2 + s - P], 0.0) * Wt[c, r, s]
  output out
}
)";

// The sampled schedules per workload: enough to draw vectorized, packed and
// parallel programs from the CPU rules.
constexpr int kSampledSchedules = 6;

// A buffer whose data starts `offset` bytes past a 64-byte boundary.
class OffsetBuffer {
 public:
  OffsetBuffer(const HostBuffer& like, size_t offset)
      : bytes_(static_cast<size_t>(like.size_bytes())),
        block_(static_cast<char*>(std::aligned_alloc(64, RoundUp(bytes_ + offset))), &std::free),
        data_(block_.get() + offset) {
    std::memcpy(data_, like.data(), bytes_);
  }
  void* data() const { return data_; }
  void CopyTo(HostBuffer& out) const { std::memcpy(out.data(), data_, bytes_); }

 private:
  static size_t RoundUp(size_t n) { return (n + 63) / 64 * 64; }
  size_t bytes_;
  std::unique_ptr<char, decltype(&std::free)> block_;
  char* data_;
};

// Calls `int32_t fn(void*...)` with `args` (every entry takes pointers only).
int32_t CallEntry(void* fn, const std::vector<void*>& a) {
  using P = void*;
  switch (a.size()) {
    case 1: return reinterpret_cast<int32_t (*)(P)>(fn)(a[0]);
    case 2: return reinterpret_cast<int32_t (*)(P, P)>(fn)(a[0], a[1]);
    case 3: return reinterpret_cast<int32_t (*)(P, P, P)>(fn)(a[0], a[1], a[2]);
    case 4: return reinterpret_cast<int32_t (*)(P, P, P, P)>(fn)(a[0], a[1], a[2], a[3]);
    case 5: return reinterpret_cast<int32_t (*)(P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4]);
    case 6: return reinterpret_cast<int32_t (*)(P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]);
    default: ADD_FAILURE() << "no call shape for " << a.size() << " arguments"; return -1;
  }
}

// The object of `f` linked into a shared library against the runtime and
// loaded, as a user's program would link the object `tunefarm compile` wrote.
class LoadedKernel {
 public:
  static std::unique_ptr<LoadedKernel> Build(const ir::PrimFunc& f, const fs::path& dir, int index) {
    auto object = EmitObject(f, Target::Host());
    EXPECT_TRUE(object.ok()) << object.status().ToString();
    if (!object.ok()) return nullptr;
    fs::path o = dir / (f.name + std::to_string(index) + ".o");
    fs::path so = dir / (f.name + std::to_string(index) + ".so");
    std::ofstream(o, std::ios::binary) << *object;
    std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    std::string link = "cc -shared -o " + so.string() + " " + o.string() + " -L" + runtime +
                       " -ltunefarm_runtime -Wl,-rpath," + runtime + " -lm";
    EXPECT_EQ(std::system(link.c_str()), 0) << link;
    void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib, nullptr) << dlerror();
    if (lib == nullptr) return nullptr;
    return std::unique_ptr<LoadedKernel>(new LoadedKernel(lib));
  }
  ~LoadedKernel() { dlclose(lib_); }
  void* Entry(const std::string& name) const {
    void* fn = dlsym(lib_, name.c_str());
    EXPECT_NE(fn, nullptr) << "no exported entry " << name;
    return fn;
  }

 private:
  explicit LoadedKernel(void* lib) : lib_(lib) {}
  void* lib_;
};

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("tunefarm_unaligned_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Runs the exported entries of `scheduled` on buffers `offset` bytes past a
// 64-byte boundary and compares the outputs with the interpreter's run of the
// default program on the same inputs.
void ExpectCorrectAtOffset(const ir::PrimFunc& reference, const ir::PrimFunc& scheduled, const LoadedKernel& kernel,
                           size_t offset, const std::string& what) {
  SCOPED_TRACE(what + ", buffers " + std::to_string(offset) + " bytes past a 64-byte boundary");
  std::mt19937_64 rng(11 + offset);
  std::vector<HostBuffer> expected;
  std::vector<HostBuffer*> expected_ptrs;
  for (size_t i = 0; i < reference.params.size(); ++i) {
    expected.push_back(HostBuffer::Like(reference.params[i]));
    if (i < reference.num_inputs) expected.back().FillRandom(rng);
  }
  for (auto& b : expected) expected_ptrs.push_back(&b);
  ASSERT_TRUE(Interpret(reference, expected_ptrs).ok());

  std::vector<std::unique_ptr<OffsetBuffer>> args;
  std::vector<void*> raw;
  for (size_t i = 0; i < reference.params.size(); ++i) {
    HostBuffer start = HostBuffer::Like(reference.params[i]);
    if (i < reference.num_inputs) std::memcpy(start.data(), expected[i].data(), size_t(start.size_bytes()));
    args.push_back(std::make_unique<OffsetBuffer>(start, offset));
    raw.push_back(args.back()->data());
  }

  // The whole kernel.
  ASSERT_EQ(CallEntry(kernel.Entry(scheduled.name), raw), 0);
  auto check_outputs = [&](const char* entry) {
    for (size_t i = reference.num_inputs; i < reference.params.size(); ++i) {
      HostBuffer got = HostBuffer::Like(reference.params[i]);
      args[i]->CopyTo(got);
      CompareResult cmp = CompareBuffers(got, expected[i], 1e-3, 1e-3);
      EXPECT_TRUE(cmp.equal) << entry << ": " << cmp.message << "\n" << ir::ToString(scheduled);
    }
  };
  check_outputs("whole kernel");

  // The prepack / prepacked pair, with the packed weights at the same offset.
  auto split = SplitPrepack(scheduled);
  if (!split.has_value()) return;
  std::vector<std::unique_ptr<OffsetBuffer>> packed;
  std::vector<void*> prepack_args, prepacked_args = raw;
  for (size_t index : split->constant_params) prepack_args.push_back(raw[index]);
  for (const auto& b : split->packed) {
    packed.push_back(std::make_unique<OffsetBuffer>(HostBuffer::Like(b), offset));
    prepack_args.push_back(packed.back()->data());
    prepacked_args.push_back(packed.back()->data());
  }
  ASSERT_EQ(CallEntry(kernel.Entry(scheduled.name + kPrepackSuffix), prepack_args), 0);
  for (size_t i = reference.num_inputs; i < reference.params.size(); ++i) {
    std::memset(args[i]->data(), 0, size_t(expected[i].size_bytes()));
  }
  ASSERT_EQ(CallEntry(kernel.Entry(scheduled.name + kPrepackedSuffix), prepacked_args), 0);
  check_outputs("prepacked entry");
}

// `overrides` resize a shared test workload to sizes of this test's own.
void CheckWorkload(std::string_view text, std::map<std::string, int64_t> overrides = {}) {
  ParseOptions options;
  options.param_overrides = std::move(overrides);
  auto w = ParseWorkload(text, options);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto reference = LowerToPrimFunc(*w);
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();

  std::vector<std::pair<std::string, ir::PrimFunc>> programs{{"default schedule", *reference}};
  auto policy = MakeCpuSketchPolicy();
  EvolutionarySearch search(*reference, policy.get(), SearchOptions{}, /*seed=*/7);
  for (int i = 0; i < kSampledSchedules; ++i) {
    auto c = search.Sample();
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    programs.emplace_back("sampled schedule " + c->trace.ToText(), c->func);
  }

  TempDir dir;
  for (size_t p = 0; p < programs.size(); ++p) {
    auto kernel = LoadedKernel::Build(programs[p].second, dir.path, static_cast<int>(p));
    ASSERT_NE(kernel, nullptr) << programs[p].first;
    for (size_t offset : {size_t{4}, size_t{16}, size_t{0}}) {
      ExpectCorrectAtOffset(*reference, programs[p].second, *kernel, offset, programs[p].first);
    }
  }
}

TEST(UnalignedBuffersTest, MatmulWithSizesNotMultiplesOf16) { CheckWorkload(kOddMatmul); }

TEST(UnalignedBuffersTest, Stride2DepthwiseConv) { CheckWorkload(kDepthwiseStride2); }

TEST(UnalignedBuffersTest, Softmax) { CheckWorkload(testing::kSoftmax, {{"M", 13}, {"N", 37}}); }

}  // namespace
}  // namespace tunefarm::tuner
