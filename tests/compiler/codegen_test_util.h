// Shared helpers for the LLVM code generator tests: build small PrimFuncs and
// check a compiled kernel against the reference interpreter on random inputs.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/ir/ir_printer.h"

namespace tunefarm::testing {

// Random inputs (and random initial outputs, so partial writes are compared too).
inline std::vector<HostBuffer> RandomArgs(const ir::PrimFunc& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<HostBuffer> args;
  for (const auto& p : f.params) {
    args.push_back(HostBuffer::Like(p));
    args.back().FillRandom(rng);
  }
  return args;
}

inline std::vector<HostBuffer> CopyArgs(const std::vector<HostBuffer>& src) {
  std::vector<HostBuffer> out;
  for (const auto& b : src) {
    out.emplace_back(b.dtype(), b.shape());
    std::memcpy(out.back().data(), b.data(), static_cast<size_t>(b.size_bytes()));
  }
  return out;
}

inline std::vector<void*> Pointers(std::vector<HostBuffer>& bufs) {
  std::vector<void*> p;
  for (auto& b : bufs) p.push_back(b.data());
  return p;
}

inline std::vector<HostBuffer*> HostPointers(std::vector<HostBuffer>& bufs) {
  std::vector<HostBuffer*> p;
  for (auto& b : bufs) p.push_back(&b);
  return p;
}

// Compares every output buffer (params from num_inputs on).
inline ::testing::AssertionResult OutputsEqual(const ir::PrimFunc& f, const std::vector<HostBuffer>& actual,
                                               const std::vector<HostBuffer>& expected, double rtol, double atol) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    CompareResult r = CompareBuffers(actual[i], expected[i], rtol, atol);
    if (!r.equal) {
      return ::testing::AssertionFailure() << "buffer " << f.params[i]->name << ": " << r.message << "\n"
                                           << ir::ToString(f);
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs a compiled kernel and the interpreter on the same data (random from
// `seed`, or a copy of `preset`) and compares all buffers.
inline ::testing::AssertionResult KernelMatchesInterpreter(const JitKernel& kernel, const ir::PrimFunc& f,
                                                           uint64_t seed, double rtol, double atol,
                                                           const std::vector<HostBuffer>* preset = nullptr) {
  std::vector<HostBuffer> expected = preset ? CopyArgs(*preset) : RandomArgs(f, seed);
  std::vector<HostBuffer> actual = CopyArgs(expected);
  Status s = Interpret(f, HostPointers(expected));
  if (!s.ok()) return ::testing::AssertionFailure() << "Interpret: " << s.ToString();
  s = kernel.Run(Pointers(actual));
  if (!s.ok()) return ::testing::AssertionFailure() << "Run: " << s.ToString();
  return OutputsEqual(f, actual, expected, rtol, atol);
}

// JIT-compiles f for the host once and checks it against the interpreter for each seed.
inline ::testing::AssertionResult MatchesInterpreter(const ir::PrimFunc& f, std::vector<uint64_t> seeds = {7},
                                                     double rtol = 1e-4, double atol = 1e-4) {
  auto kernel = JitCompile(f, Target::Host());
  if (!kernel.ok()) return ::testing::AssertionFailure() << "JitCompile: " << kernel.status().ToString();
  for (uint64_t seed : seeds) {
    auto r = KernelMatchesInterpreter(**kernel, f, seed, rtol, atol);
    if (!r) return r << " (seed " << seed << ")";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tunefarm::testing
