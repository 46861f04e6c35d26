// How long a worker takes to make a received kernel object callable: the
// runtime's ELF loader (LoadObject, what a worker without LLVM uses) against
// ORC LLJIT (JitLoadObject, what the runner uses today), on the same bytes,
// in the same process. Each load is timed with its teardown (unmapping, or
// destroying the JIT), as a worker pays both per candidate.
//
//   build/bench/runtime/tunefarm_object_load_bench [repeats]
//
// For each suite workload at its full size: a schedule drawn from the sketch
// rules (seed fixed, so the same object each run), emitted for this host
// with the measurement options (prepack entries only, where split); its
// bytes, relocations and stubs; the median microseconds per load of each
// loader over interleaved rounds, and their ratio. Both loaded kernels are
// run once on the same random inputs and must agree. On a shared machine the
// times move with its load; read the ratio.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "host_description.h"
#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/codegen/llvm/prepared_call.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/runtime/object_loader.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace {

using namespace tunefarm;

[[noreturn]] void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

ir::PrimFunc Lower(const std::string& name) {
  std::string path = std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/" + name + ".tf";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto w = ParseWorkload(text);
  if (!w.ok()) Die(path, w.status());
  auto f = LowerToPrimFunc(*w);
  if (!f.ok()) Die(path, f.status());
  return *f;
}

// Calls the loaded object's entries as PreparedCall calls a JIT kernel's.
Status RunLoaded(const LoadedObject& object, const ir::PrimFunc& f, std::vector<void*> args) {
  auto call = [&object](const std::string& name, std::vector<void*> a) -> Status {
    TF_ASSIGN_OR_RETURN(void* address, object.Symbol(name + "_packed"));
    int32_t rc = reinterpret_cast<int32_t (*)(void**)>(address)(a.data());
    return rc == 0 ? Status::OK() : Status::Internal(name + " returned " + std::to_string(rc));
  };
  std::optional<PrepackSplit> split = SplitPrepack(f);
  if (!split) return call(f.name, args);
  std::vector<HostBuffer> packed;
  std::vector<void*> prepack_args;
  for (size_t i : split->constant_params) prepack_args.push_back(args[i]);
  for (const ir::Buffer& b : split->packed) {
    packed.push_back(HostBuffer::Like(b));
    prepack_args.push_back(packed.back().data());
    args.push_back(packed.back().data());
  }
  TF_RETURN_IF_ERROR(call(split->prepack.name, prepack_args));
  return call(split->prepacked.name, args);
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  std::printf("host: %s\n", bench::HostDescription().c_str());
  std::printf("%-18s %8s %6s %6s %12s %12s %8s\n", "workload", "bytes", "relocs", "stubs", "LoadObject us",
              "LLJIT us", "ratio");
  CodegenOptions options;
  options.whole_entry = false;  // as measurement builds them
  auto policy = tuner::MakeCpuSketchPolicy({});
  for (const char* name : {"gmm_512", "c2d_resnet_3x3", "dep_3x3_c256_28", "softmax", "layer_norm",
                           "dense_bias_relu"}) {
    ir::PrimFunc base = Lower(name);
    tuner::EvolutionarySearch search(base, policy.get(), tuner::SearchOptions{}, 1);
    auto candidate = search.Sample();
    if (!candidate.ok()) Die(name, candidate.status());
    const ir::PrimFunc& f = candidate->func;
    auto bytes = EmitObject(f, Target::Host(), options);
    if (!bytes.ok()) Die(name, bytes.status());

    // Both loaders' kernels on the same inputs must agree.
    std::mt19937_64 rng(5);
    std::vector<HostBuffer> a, b;
    std::vector<void*> pa, pb;
    for (const ir::Buffer& p : f.params) {
      a.push_back(HostBuffer::Like(p));
      a.back().FillRandom(rng);
      b.push_back(HostBuffer::Like(p));
      std::memcpy(b.back().data(), a.back().data(), size_t(a.back().size_bytes()));
    }
    for (auto& x : a) pa.push_back(x.data());
    for (auto& x : b) pb.push_back(x.data());
    auto loaded = LoadObject(*bytes);
    if (!loaded.ok()) Die(name, loaded.status());
    auto jit = JitLoadObject(*bytes, f, Target::Host());
    if (!jit.ok()) Die(name, jit.status());
    Status s = RunLoaded(**loaded, f, pa);
    if (!s.ok()) Die(name, s);
    auto prepared = PreparedCall::Prepare(**jit, f, pb);
    if (!prepared.ok()) Die(name, prepared.status());
    s = (*prepared)->Run();
    if (!s.ok()) Die(name, s);
    for (size_t i = f.num_inputs; i < f.params.size(); ++i) {
      CompareResult r = CompareBuffers(a[i], b[i], 1e-5, 1e-5);
      if (!r.equal) Die(name, Status::Internal("the two loaders' kernels disagree: " + r.message));
    }

    const LoadedObjectStats stats = (*loaded)->stats();
    const std::string entry = f.name + (SplitPrepack(f) ? "_prepacked_packed" : "_packed");
    bench::InterleavedTimes times = bench::TimeInterleaved(
        {[&] {
           auto o = LoadObject(*bytes);
           if (!o.ok() || !(*o)->Symbol(entry).ok()) std::abort();
         },
         [&] {
           auto k = JitLoadObject(*bytes, f, Target::Host());
           if (!k.ok()) std::abort();
         }},
        repeat, 0.0);
    std::printf("%-18s %8zu %6zu %6zu %12.1f %12.1f %7.0fx\n", name, bytes->size(), stats.relocations, stats.stubs,
                times.Median(0) * 1e6, times.Median(1) * 1e6, times.MedianRatio(1, 0));
  }
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) == 3) std::printf("load average: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
  return 0;
}
