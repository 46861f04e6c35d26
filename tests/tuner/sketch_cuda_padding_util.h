// Shared by the tests of the GPU rules' padded shared copies
// (sketch_cuda_shared_padding.h): workloads, what a trace draws, the same
// trace without its padding, and a scheduled function's shared buffers.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir_visitor.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::tuner::padding_test {

inline std::string Workload(const std::string& name) { return std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf"; }

inline ir::PrimFunc Lowered(const std::string& text) {
  auto w = ParseWorkload(text);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : ir::PrimFunc{};
}

inline ir::PrimFunc FullSize(const std::string& name) {
  std::ifstream in(Workload(name));
  return Lowered(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
}

inline std::string Matmul(int m, int n, int k) {
  return "workload mm(M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ") {\n  A = input f32[M, K]\n  B = input f32[K, N]\n  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
}

inline bool Has(const Schedule& sch, const std::string& what) { return sch.trace().ToText().find(what) != std::string::npos; }
inline bool Pads(const Schedule& sch) { return Has(sch, "storage_align("); }
inline bool Packs(const Schedule& sch) { return Has(sch, "pack_layout("); }
inline bool Doubles(const Schedule& sch) { return Has(sch, ir::kDoubleBufferAnnotation); }

// The trace with its padding undone: each decision drawn just before a
// storage_align set to 0 (no padding), the storage_align dropped.
inline std::string Unpadded(const std::string& trace) {
  std::istringstream lines(trace);
  std::vector<std::string> kept;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("storage_align(") != std::string::npos) {
      kept.back() = std::regex_replace(kept.back(), std::regex("decision=[0-9]+$"), "decision=0");
      continue;
    }
    kept.push_back(line);
  }
  std::string out;
  for (const std::string& line : kept) out += line + "\n";
  return out;
}

inline Result<Schedule> Replay(const ir::PrimFunc& f, const std::string& text) {
  TF_ASSIGN_OR_RETURN(Trace trace, Trace::Parse(text));
  Schedule sch(f);
  TF_RETURN_IF_ERROR(trace.ApplyTo(sch));
  return sch;
}

// The shared buffers a scheduled function allocates, by name.
inline std::map<std::string, ir::Buffer> SharedBuffers(const ir::PrimFunc& f) {
  std::map<std::string, ir::Buffer> out;
  ir::PostOrderVisit(f.body, [&](const ir::IRNode* n) {
    if (n->kind != ir::IRNodeKind::kAllocate) return;
    const ir::Buffer& b = static_cast<const ir::Allocate*>(n)->buffer;
    if (b->scope == ir::MemoryScope::kShared) out[b->name] = b;
  });
  return out;
}

}  // namespace tunefarm::tuner::padding_test
