// The GPU sketch rules (sketch_cuda.h) with the shipped knobs
// (configs/sketch/cuda.toml), drawn many times per suite workload:
//  * at full size, 200 distinct programs (distinct trace text) lower for
//    CUDA and generate CUDA C, and NVRTC compiles them for sm_80 and sm_90;
//  * on a shrunk copy (threads per block down to one: the work is small),
//    200 distinct programs lowered for CUDA compute what the default program
//    computes, through the interpreter (a block's threads in phases between
//    barriers).
// NVRTC's cost is per kernel, not per program: NVVM and ptxas take from a
// tenth of a second to several seconds of CPU for each of these kernels
// (unrolled register tiles; a few hundred accumulators per thread are
// drawn), so compiling all 200 programs of all 17 workloads for both
// architectures takes over an hour of CPU. By default each workload's
// kCompiledByDefault most diverse programs (the most sampled decisions not
// yet covered, greedily) are compiled; TUNEFARM_SKETCH_NVRTC_PROGRAMS=200
// compiles all of them. The compiled programs' kernels, renamed with a
// suffix per program, are one NVRTC program per workload and architecture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sketch_test_util.h"
#include "tunefarm/compiler/codegen/cuda/codegen_cuda.h"
#include "tunefarm/compiler/codegen/cuda/nvrtc.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {
namespace {

constexpr int kPrograms = 200;          // distinct programs per workload
constexpr uint64_t kDraws = 20000;      // draws allowed to find them
constexpr int kCompiledByDefault = 1;   // of them compiled, without TUNEFARM_SKETCH_NVRTC_PROGRAMS
// The shrunk copies' size: ShrunkDefault's 6e4 FLOP costs two minutes of
// interpretation for the suite's 3,400 programs; 1.5e4 keeps every stage and
// several tiles per loop for about a third of that.
constexpr double kShrunkFlops = 1.5e4;

int ProgramsToCompile() {
  const char* n = std::getenv("TUNEFARM_SKETCH_NVRTC_PROGRAMS");
  return n && std::atoi(n) > 0 ? std::min(std::atoi(n), kPrograms) : kCompiledByDefault;
}

CudaSketchConfig ShippedConfig() {
  auto config = LoadCudaSketchConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/sketch/cuda.toml");
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? *config : CudaSketchConfig{};
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

ir::PrimFunc Lowered(const Result<Workload>& w) {
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  if (!w.ok()) return {};
  auto f = LowerToPrimFunc(*w);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : ir::PrimFunc{};
}

// Why draws failed, most common first (messages cut after their second ':',
// where one draw's numbers start).
class FailureTally {
 public:
  void Add(const Status& st) {
    const std::string& m = st.message();
    size_t first = m.find(':');
    ++counts_[first == std::string::npos ? m : m.substr(0, m.find(':', first + 1))];
  }
  std::string Summary() const {
    std::vector<std::pair<int, std::string>> sorted;
    for (const auto& [why, n] : counts_) sorted.emplace_back(n, why);
    std::sort(sorted.rbegin(), sorted.rend());
    std::string s;
    for (size_t i = 0; i < sorted.size() && i < 5; ++i) {
      s += "\n  x" + std::to_string(sorted[i].first) + " " + sorted[i].second;
    }
    return s.empty() ? " none" : s;
  }

 private:
  std::map<std::string, int> counts_;
};

// Draws distinct programs (by trace text) until `wanted` of them, or kDraws
// draws; `use` gets each new one and returns false to stop.
template <typename Use>
void DrawDistinct(const ir::PrimFunc& f, const SketchPolicy& policy, int wanted, Use use, int* got,
                  std::string* why_short) {
  std::set<std::string> seen;
  FailureTally failures;
  uint64_t seed = 0;
  *got = 0;
  for (; seed < kDraws && *got < wanted; ++seed) {
    Schedule sch(f, seed);
    Status applied = policy.Apply(sch);
    if (!applied.ok()) {
      failures.Add(applied);  // limits not met: the search draws again
      continue;
    }
    std::string trace = sch.trace().ToText();
    if (!seen.insert(trace).second) continue;
    if (!use(sch, trace)) return;
    ++*got;
  }
  *why_short = std::to_string(*got) + " distinct programs in " + std::to_string(seed) +
               " draws; failed draws, most common first:" + failures.Summary();
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `source` with each whole-word occurrence of `name` followed by `suffix`
// ("f_kernel1" is not renamed inside "f_kernel10").
std::string Rename(const std::string& source, const std::string& name, const std::string& suffix) {
  std::string out;
  size_t from = 0;
  for (size_t at = source.find(name); at != std::string::npos; at = source.find(name, at + name.size())) {
    size_t end = at + name.size();
    if ((at > 0 && IsIdentChar(source[at - 1])) || (end < source.size() && IsIdentChar(source[end]))) continue;
    out.append(source, from, end - from);
    out += suffix;
    from = end;
  }
  out.append(source, from, std::string::npos);
  return out;
}

// One translation unit of many modules: the text before each module's first
// kernel (the generator's helpers) once per distinct text, then the kernels,
// renamed (kernels are extern "C": one name per translation unit).
class BatchedSource {
 public:
  // Returns the renamed kernels' names.
  std::vector<std::string> Add(const cuda::CudaModule& module, const std::string& suffix) {
    std::string source = module.source;
    std::vector<std::string> names;
    for (const cuda::CudaLaunch& launch : module.launches) {
      source = Rename(source, launch.kernel, suffix);
      names.push_back(launch.kernel + suffix);
    }
    size_t first_kernel = source.find("\nextern \"C\"");
    if (first_kernel == std::string::npos) first_kernel = 0;
    size_t helpers = std::min(source.find('\n') + 1, first_kernel);  // after the line naming the function
    std::string prelude = source.substr(helpers, first_kernel - helpers);
    if (preludes_.insert(prelude).second) head_ += prelude;
    kernels_ += "\n// " + module.name + suffix + "\n" + source.substr(first_kernel);
    return names;
  }
  std::string Text() const { return head_ + kernels_; }

 private:
  std::set<std::string> preludes_;
  std::string head_;
  std::string kernels_;
};

struct DrawnProgram {
  std::string trace;
  cuda::CudaModule module;
};

// Indices of `k` programs chosen greedily to cover the most sampled
// decisions (trace lines with "decision=") the ones before did not.
std::vector<size_t> MostDiverse(const std::vector<DrawnProgram>& programs, int k) {
  std::vector<std::set<std::string>> decisions(programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    std::istringstream lines(programs[i].trace);
    for (std::string line; std::getline(lines, line);) {
      if (line.find("decision=") != std::string::npos) decisions[i].insert(line);
    }
  }
  std::set<std::string> covered;
  std::vector<size_t> chosen;
  std::vector<bool> taken(programs.size(), false);
  while (int(chosen.size()) < k && chosen.size() < programs.size()) {
    size_t best = 0;
    int best_new = -1;
    for (size_t i = 0; i < programs.size(); ++i) {
      if (taken[i]) continue;
      int fresh = 0;
      for (const std::string& d : decisions[i]) fresh += covered.count(d) == 0;
      if (fresh > best_new) best = i, best_new = fresh;
    }
    taken[best] = true;
    chosen.push_back(best);
    covered.insert(decisions[best].begin(), decisions[best].end());
  }
  return chosen;
}

class CudaSketchNvrtcTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaSketchNvrtcTest, FullSizeProgramsGenerateAndCompileForSm80AndSm90) {
  const ir::PrimFunc f = Lowered(ParseWorkload(ReadFile(GetParam())));
  ASSERT_FALSE(HasFailure());
  auto policy = MakeCudaSketchPolicy(ShippedConfig());
  std::vector<DrawnProgram> programs;
  int got = 0;
  std::string why_short;
  DrawDistinct(f, *policy, kPrograms, [&](const Schedule& sch, const std::string& trace) {
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(lowered.ok()) << lowered.status().ToString() << "\n" << trace;
    if (!lowered.ok()) return false;
    auto module = cuda::GenerateCuda(*lowered);
    EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << trace;
    if (!module.ok()) return false;
    programs.push_back({trace, *std::move(module)});
    return true;
  }, &got, &why_short);
  ASSERT_FALSE(HasFailure());
  ASSERT_GE(got, kPrograms) << why_short;

  std::string why_not;
  if (!cuda::NvrtcAvailable(&why_not)) {
    GTEST_SKIP() << "lowered and generated, not compiled: NVRTC is not available: " << why_not;
  }
  const std::vector<size_t> chosen = MostDiverse(programs, ProgramsToCompile());
  BatchedSource batch;
  std::vector<std::vector<std::string>> kernels;  // per chosen program, renamed
  for (size_t i : chosen) kernels.push_back(batch.Add(programs[i].module, "_s" + std::to_string(i)));
  const std::string source = batch.Text();
  // The two architectures at once: each compilation is single-threaded.
  Result<cuda::CompiledCuda> sm80 = Status::Internal("not compiled");
  std::thread compile_sm80([&] { sm80 = cuda::CompileCudaSource(source, "sm_80"); });
  Result<cuda::CompiledCuda> sm90 = cuda::CompileCudaSource(source, "sm_90");
  compile_sm80.join();
  for (const auto& [arch, compiled] : {std::pair{"sm_80", &sm80}, std::pair{"sm_90", &sm90}}) {
    SCOPED_TRACE(arch);
    if (!compiled->ok()) {
      // Name the programs that fail on their own, with their traces.
      std::string culprits;
      for (size_t i : chosen) {
        auto alone = cuda::CompileCudaSource(programs[i].module.source, arch);
        if (!alone.ok()) culprits += "\n--- trace:\n" + programs[i].trace + "--- error: " + alone.status().ToString();
      }
      ADD_FAILURE() << "the batch of " << chosen.size() << " programs does not compile: "
                    << compiled->status().ToString().substr(0, 4000) << "\nprograms failing alone:" << culprits;
      continue;
    }
    std::set<std::string> reported;
    for (const cuda::CudaKernelResources& k : (*compiled)->kernels) reported.insert(k.kernel);
    for (size_t c = 0; c < chosen.size(); ++c) {
      for (const std::string& name : kernels[c]) {
        EXPECT_TRUE(reported.count(name)) << "ptxas reported no kernel " << name << "\n" << programs[chosen[c]].trace;
      }
    }
  }
}

TEST_P(CudaSketchNvrtcTest, ShrunkProgramsComputeWhatTheDefaultDoes) {
  const std::string path = GetParam();
  const ir::PrimFunc f = Lowered(ShrinkWorkload(ReadFile(path), path, {}, kShrunkFlops));
  ASSERT_FALSE(HasFailure());
  CudaSketchConfig config = ShippedConfig();
  config.min_threads_per_block = 1;  // shrunk workloads have too little work for a warp per block
  auto policy = MakeCudaSketchPolicy(config);
  int got = 0;
  std::string why_short;
  DrawDistinct(f, *policy, kPrograms, [&](const Schedule& sch, const std::string& trace) {
    SCOPED_TRACE(trace);
    auto lowered = cuda::LowerForCuda(sch.func());
    EXPECT_TRUE(lowered.ok()) << lowered.status().ToString();
    if (lowered.ok()) testing::ExpectSameAsDefault(f, *lowered, /*jit=*/false);
    return !HasFailure();  // one wrong program, shown with its trace, is enough
  }, &got, &why_short);
  ASSERT_FALSE(HasFailure());
  EXPECT_GE(got, kPrograms) << why_short;
}

std::string WorkloadName(const ::testing::TestParamInfo<std::string>& info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Suite, CudaSketchNvrtcTest, ::testing::ValuesIn(testing::SuiteFiles()), WorkloadName);

}  // namespace
}  // namespace tunefarm::tuner
