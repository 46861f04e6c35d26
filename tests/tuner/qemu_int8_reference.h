// The int8 qemu tests' harness (sketch_int8_dot_qemu_test.cpp,
// sketch_int8_mmla_qemu_test.cpp): a workload's default program run by the
// interpreter on random inputs, and AArch64 objects of scheduled programs
// run on the same inputs under qemu-aarch64 by the object loader's driver
// (tests/runtime/aarch64/), whose outputs must equal it exactly.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../runtime/aarch64/driver_run.h"
#include "sketch_test_util.h"

namespace tunefarm::tuner::testing {

inline ir::PrimFunc Lowered(const std::string& text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return *f;
}

// The workload's default program run by the interpreter on random inputs,
// and a scratch folder holding those inputs (in<i>) for the driver. Holds
// `base` by reference: it must outlive the Reference.
class Reference {
 public:
  explicit Reference(const ir::PrimFunc& base) : base_(base) {
    std::mt19937_64 rng(11);
    for (size_t i = 0; i < base.params.size(); ++i) {
      expected_.push_back(HostBuffer::Like(base.params[i]));
      if (i < base.num_inputs) expected_.back().FillRandom(rng);
    }
    for (size_t i = 0; i < base.num_inputs; ++i) {
      dir_.Write("in" + std::to_string(i), expected_[i].data(), size_t(expected_[i].size_bytes()));
    }
    std::vector<HostBuffer*> pointers;
    for (HostBuffer& b : expected_) pointers.push_back(&b);
    Status s = Interpret(base, pointers);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  // Runs `object` (emitted from `scheduled`) under qemu as program `sub`.
  ::testing::AssertionResult Matches(const ir::PrimFunc& scheduled, const std::string& object, const std::string& sub) {
    std::filesystem::create_directories(dir_.path() / sub);
    dir_.Write(sub + "/kernel.o", object);
    dir_.Write(sub + "/manifest.txt", tunefarm::testing::KernelRunManifest(base_, scheduled, [&](size_t i) {
                 return i < base_.num_inputs ? "../in" + std::to_string(i) : std::string("-");
               }));
    auto [rc, output] = dir_.RunDriver(sub);
    if (rc != 0) return ::testing::AssertionFailure() << "driver exit " << rc << ": " << output;
    for (size_t i = base_.num_inputs; i < base_.params.size(); ++i) {
      const std::string bytes = dir_.Read(sub + "/out" + std::to_string(i));
      HostBuffer actual = HostBuffer::Like(base_.params[i]);
      if (bytes.size() != size_t(actual.size_bytes())) return ::testing::AssertionFailure() << "output " << i << " size";
      std::memcpy(actual.data(), bytes.data(), bytes.size());
      CompareResult r = CompareBuffers(actual, expected_[i], 0, 0);
      if (!r.equal) return ::testing::AssertionFailure() << base_.params[i]->name << ": " << r.message;
    }
    std::filesystem::remove_all(dir_.path() / sub);
    return ::testing::AssertionSuccess();
  }

 private:
  const ir::PrimFunc& base_;
  std::vector<HostBuffer> expected_;
  tunefarm::testing::RunDir dir_;
};

// The suite's gmm_int8 at M x N x K; `constant_b`: B is constant (weights),
// its packed copy made ahead of the calls (split_prepack.h).
inline std::string GmmInt8(int64_t m, int64_t n, int64_t k, bool constant_b = false) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_int8.tf");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string sizes = "M = 512, N = 512, K = 512";
  const size_t at = text.find(sizes);
  EXPECT_NE(at, std::string::npos) << text;
  if (at == std::string::npos) return text;
  text.replace(at, sizes.size(), "M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k));
  const std::string b = "B = input i8";
  const size_t b_at = text.find(b);
  EXPECT_NE(b_at, std::string::npos) << text;
  if (constant_b && b_at != std::string::npos) text.replace(b_at, b.size(), "B = input const i8");
  return text;
}

// 32-bit instruction words of an AArch64 object that equal `pattern` under `mask`.
inline int CountInstructionWords(const std::string& object, uint32_t mask, uint32_t pattern) {
  int n = 0;
  for (size_t at = 0; at + 4 <= object.size(); at += 4) {
    uint32_t word = 0;
    std::memcpy(&word, object.data() + at, 4);
    n += (word & mask) == pattern;
  }
  return n;
}

// C[i, j] = sum(k) i32(A[i, k]) * i32(B[..]) with B [N, K] (`b_rows`) or [K, N].
inline std::string Int8Gemm(int64_t m, int64_t n, int64_t k, const std::string& type, bool b_rows) {
  return "workload mm(M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ") {\n  A = input " + type + "[M, K]\n  B = input " + type + (b_rows ? "[N, K]" : "[K, N]") +
         "\n  C[i, j] = sum(k: K) i32(A[i, k]) * i32(" + (b_rows ? "B[j, k]" : "B[k, j]") + ")\n  output C\n}\n";
}

// A hand-built nest: a workload text, and whether B's loop goes outside A's.
struct HandBuiltCase {
  std::string name, text;
  bool b_outer;
};

// Each case's default program scheduled by `schedule`, emitted for
// `target_text`, holds at least one instruction `count` finds in the object,
// and equals the interpreter under qemu.
inline void ExpectHandBuiltNestsMatch(const std::string& target_text, const std::vector<HandBuiltCase>& cases,
                                      const std::function<Result<ir::PrimFunc>(const ir::PrimFunc&, bool)>& schedule,
                                      const std::function<int(const std::string&)>& count) {
  auto target = Target::Parse(target_text);
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  int program = 0;
  for (const HandBuiltCase& c : cases) {
    SCOPED_TRACE(c.name);
    const ir::PrimFunc base = Lowered(c.text);
    auto scheduled = schedule(base, c.b_outer);
    ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
    auto object = EmitObject(*scheduled, *target);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    EXPECT_GE(count(*object), 1);
    Reference reference(base);
    EXPECT_TRUE(reference.Matches(*scheduled, *object, "h" + std::to_string(program++)));
  }
}

}  // namespace tunefarm::tuner::testing
