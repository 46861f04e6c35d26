// Feature values are pinned by a saved digest: a hash of the exact bits of
// every feature of 150 programs (random schedules of the benchmark's three
// workloads, and the default schedule of every suite workload).
//
// Speed-ups of extraction must leave every value bit-identical; this test
// fails when one does not. A deliberate feature change regenerates the file:
//   TUNEFARM_UPDATE_FEATURE_DIGEST=1 tunefarm_costmodel_tests --gtest_filter='FeaturesDigestTest.*'
// and the diff of tests/costmodel/data/features_digest.txt shows which
// programs changed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/compiler/workload/workload_shrink.h"
#include "tunefarm/costmodel/dataset_gen.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel {
namespace {

namespace fs = std::filesystem;

constexpr int kSchedulesPerWorkload = 45;

// FNV-1a over the bits of every feature but parallel_balance, which depends
// on this machine's core count.
uint64_t Digest(const FeatureVector& v) {
  uint64_t h = 1469598103934665603ull;
  for (int k = 0; k < kNumFeatures; ++k) {
    if (k == kNestOffset + kParallelBalance) continue;
    uint32_t bits = 0;
    std::memcpy(&bits, &v[static_cast<size_t>(k)], sizeof(bits));
    for (int b = 0; b < 4; ++b) {
      h ^= (bits >> (8 * b)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  return h;
}

// Digest of every program by name (void: gtest's ASSERTs return).
void ComputeDigests(std::map<std::string, std::string>& out) {
  auto add = [&](const std::string& name, const ir::PrimFunc& scheduled) {
    auto lowered = LowerForCodegen(scheduled);
    ASSERT_TRUE(lowered.ok()) << name << ": " << lowered.status().ToString();
    std::ostringstream hex;
    hex << std::hex << Digest(ExtractFeatures(*lowered));
    out[name] = hex.str();
  };
  const fs::path dir = fs::path(TUNEFARM_SOURCE_DIR) / "configs" / "workloads";
  // The benchmark's workloads at its shapes (bench/costmodel), random schedules.
  const std::vector<std::pair<std::string, std::map<std::string, int64_t>>> bench = {
      {"gmm_512", {{"M", 128}, {"N", 128}, {"K", 128}}},
      {"dense_bias_relu", {{"M", 64}, {"N", 256}, {"K", 256}}},
      {"c2d_resnet_3x3", {{"C", 32}, {"K", 32}, {"H", 28}, {"W", 28}}},
  };
  for (const auto& [file, overrides] : bench) {
    ParseOptions options;
    options.param_overrides = overrides;
    auto w = ParseWorkloadFile((dir / (file + ".tf")).string(), options);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto base = LowerToPrimFunc(*w);
    ASSERT_TRUE(base.ok()) << base.status().ToString();
    for (uint64_t seed = 1; seed <= kSchedulesPerWorkload; ++seed) {
      auto scheduled = SampleRandomSchedule(*base, seed);
      ASSERT_TRUE(scheduled.ok()) << scheduled.status().ToString();
      add(file + "/seed" + std::to_string(seed), *scheduled);
    }
  }
  // Every suite workload's default schedule (shrunk), for the other operators.
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".tf") continue;
    std::ifstream in(entry.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto w = ShrinkWorkload(text, entry.path().string(), {}, 1e6);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto f = LowerToPrimFunc(*w);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    add(entry.path().stem().string() + "/default", *f);
  }
}

TEST(FeaturesDigestTest, FeaturesAreBitIdenticalToTheSavedDigest) {
  const fs::path saved = fs::path(TUNEFARM_SOURCE_DIR) / "tests" / "costmodel" / "data" / "features_digest.txt";
  std::map<std::string, std::string> now;
  ComputeDigests(now);
  if (HasFatalFailure()) return;
  ASSERT_GE(now.size(), 3u * kSchedulesPerWorkload + 10);
  if (const char* update = std::getenv("TUNEFARM_UPDATE_FEATURE_DIGEST"); update && std::strcmp(update, "1") == 0) {
    fs::create_directories(saved.parent_path());
    std::ofstream out(saved);
    for (const auto& [name, digest] : now) out << name << ' ' << digest << '\n';
    GTEST_SKIP() << "rewrote " << saved;
  }
  std::ifstream in(saved);
  ASSERT_TRUE(in) << "missing " << saved;
  std::map<std::string, std::string> expected;
  std::string name, digest;
  while (in >> name >> digest) expected[name] = digest;
  ASSERT_EQ(expected.size(), now.size()) << "programs in " << saved;
  int changed = 0;
  for (const auto& [n, d] : expected) {
    auto it = now.find(n);
    ASSERT_NE(it, now.end()) << n << " is no longer computed";
    if (it->second != d) {
      if (++changed <= 5) ADD_FAILURE() << n << ": features changed (digest " << it->second << ", saved " << d << ")";
    }
  }
  EXPECT_EQ(changed, 0) << "programs whose features changed; see the header of this file";
}

}  // namespace
}  // namespace tunefarm::costmodel
