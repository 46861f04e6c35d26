// Reference outputs: computed once per (workload, input seed) and kept, so
// checking a candidate costs one comparison, not one interpretation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "runner.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"

namespace tunefarm::runner {

std::string ReferenceKey(const Workload& w, uint64_t seed) {
  // Structurally equal workloads (renamed tensors, other whitespace) have the
  // same params in the same order, so they can share inputs and outputs.
  return StructuralHashHex(w) + "/" + std::to_string(seed);
}

uint64_t Checksum(const std::vector<HostBuffer>& buffers) {
  // Four independent FNV-style lanes: fast enough to run after every candidate.
  uint64_t lanes[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x100000001b3ull, 0x9e3779b97f4a7c15ull};
  constexpr uint64_t kPrime = 0x100000001b3ull;
  for (const HostBuffer& b : buffers) {
    const auto* bytes = static_cast<const unsigned char*>(b.data());
    size_t n = size_t(b.size_bytes()), i = 0;
    for (; i + 32 <= n; i += 32) {
      for (int l = 0; l < 4; ++l) {
        uint64_t word;
        std::memcpy(&word, bytes + i + 8 * size_t(l), 8);
        lanes[l] = (lanes[l] ^ word) * kPrime;
      }
    }
    for (; i < n; ++i) lanes[0] = (lanes[0] ^ bytes[i]) * kPrime;
  }
  return lanes[0] ^ (lanes[1] << 1) ^ (lanes[2] << 2) ^ (lanes[3] << 3);
}

namespace {

// Reordered float sums differ from the reference by rounding that grows with
// the reduction length; a wrong kernel is off by far more than this.
void SetTolerance(const Workload& w, Reference& ref) {
  double reduced = 0;
  for (const ComputeStage& s : w.stages) {
    double len = 1;
    for (int64_t e : s.reduce_extents) len *= double(e);
    if (s.reduce != ReduceKind::kNone) reduced += len;
  }
  double base = 1e-4;
  for (const ir::Buffer& out : w.outputs) {
    if (out->dtype.is_float() && out->dtype.bits <= 16) base = std::max(base, 1e-2);
  }
  double scale = std::max(1.0, std::sqrt(reduced));
  ref.rtol = ref.atol = std::min(base * scale, 5e-2);
}

int64_t Bytes(const Reference& r) {
  int64_t n = 0;
  for (const auto& b : r.inputs) n += b.size_bytes();
  for (const auto& b : r.outputs) n += b.size_bytes();
  return n;
}

Result<std::unique_ptr<Reference>> Compute(const Workload& w, uint64_t seed, const CompiledReference& compiled) {
  auto ref = std::make_unique<Reference>();
  ref->key = ReferenceKey(w, seed);
  // The text as written, not the nest the tuner schedules: a rewrite in
  // lowering (the strided-gather decomposition) is checked, not trusted.
  LowerOptions as_written;
  as_written.decompose_strided_gathers = false;
  TF_ASSIGN_OR_RETURN(ir::PrimFunc func, LowerToPrimFunc(w, as_written));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < func.params.size(); ++i) {
    HostBuffer b = HostBuffer::Like(func.params[i]);
    if (i < func.num_inputs) {
      b.FillRandom(rng);
      ref->inputs.push_back(std::move(b));
    } else {
      ref->outputs.push_back(std::move(b));
    }
  }
  // A runner that builds no code (the lean worker's) interprets every
  // workload: slower, but a reference it can trust.
  if (w.Flops() <= kInterpreterFlopLimit || (!compiled && !BuildsCode())) {
    ref->method = "interpreter";
    std::vector<HostBuffer*> args;
    for (auto& b : ref->inputs) args.push_back(&b);
    for (auto& b : ref->outputs) args.push_back(&b);
    Status s = Interpret(func, args);
    if (!s.ok()) return Status(s.code(), "reference (interpreter): " + s.message());
  } else if (compiled) {
    Status s = compiled(func, *ref);
    if (!s.ok()) return Status(s.code(), "reference (" + ref->method + "): " + s.message());
  } else {
    ref->method = "compiled default schedule";
    auto kernel = CompileCandidate(func, Target::Host(), CodegenOptions{});
    if (!kernel.ok()) return Status(kernel.status().code(), "reference (default schedule): " + kernel.status().message());
    std::vector<void*> args;
    for (auto& b : ref->inputs) args.push_back(b.data());
    for (auto& b : ref->outputs) args.push_back(b.data());
    Status s = (*kernel)->Run(args);
    if (!s.ok()) return Status(s.code(), "reference (default schedule): " + s.message());
  }
  ref->inputs_checksum = Checksum(ref->inputs);
  SetTolerance(w, *ref);
  return ref;
}

}  // namespace

Result<Reference*> ReferenceCache::Get(const Workload& w, uint64_t seed) {
  std::string key = ReferenceKey(w, seed);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if ((*it)->key == key) {
      entries_.splice(entries_.begin(), entries_, it);  // most recently used first
      return entries_.front().get();
    }
  }
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Reference> ref, Compute(w, seed, compiled_));
  entries_.push_front(std::move(ref));
  // Evict the least recently used beyond the budget, never the one just made.
  int64_t total = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    total += Bytes(**it);
    if (it != entries_.begin() && total > max_bytes_) {
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return entries_.front().get();
}

bool ReferenceCache::Contains(const std::string& key) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const auto& r) { return r->key == key; });
}

void ReferenceCache::Drop(const std::string& key) {
  entries_.remove_if([&](const std::unique_ptr<Reference>& r) { return r->key == key; });
}

}  // namespace tunefarm::runner
