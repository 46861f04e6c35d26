// The check both task tests make: a workload's default program, compiled
// with LLVM, computes what the reference interpreter computes on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"

namespace tunefarm::frontend::testing {

inline void ExpectCompiledEqualsInterpreted(const Workload& w) {
  auto f = LowerToPrimFunc(w);
  ASSERT_TRUE(f.ok()) << w.name << ": " << f.status().ToString();
  std::mt19937_64 rng(3);
  std::vector<HostBuffer> ref, jitted;
  for (size_t i = 0; i < f->params.size(); ++i) {
    ref.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) ref.back().FillRandom(rng);
    jitted.push_back(HostBuffer::Like(f->params[i]));
    std::memcpy(jitted.back().data(), ref.back().data(), size_t(ref.back().size_bytes()));
  }
  std::vector<HostBuffer*> ref_ptrs;
  std::vector<void*> raw;
  for (auto& b : ref) ref_ptrs.push_back(&b);
  for (auto& b : jitted) raw.push_back(b.data());
  Status interpreted = Interpret(*f, ref_ptrs);
  ASSERT_TRUE(interpreted.ok()) << w.name << ": " << interpreted.ToString();
  auto jit = JitCompile(*f, Target::Host());
  ASSERT_TRUE(jit.ok()) << w.name << ": " << jit.status().ToString();
  ASSERT_TRUE((*jit)->Run(raw).ok()) << w.name;
  CompareResult cmp = CompareBuffers(jitted.back(), ref.back(), 1e-4, 1e-4);
  EXPECT_TRUE(cmp.equal) << w.name << ": " << cmp.message;
}

}  // namespace tunefarm::frontend::testing
