// The GpuFeature block on the GEMM variants measured on an H100
// (bench/cuda/gemm_variants/: plain, packed A operand, double-buffered,
// both), replayed from their traces and lowered as the tuner lowers a CUDA
// candidate for the cost model (LowerForCodegen). Without the block the
// plain and double-buffered programs have identical features.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/features.h"

namespace tunefarm::costmodel {
namespace {

// Features of variant `name` (its workload and its record's trace).
void VariantFeatures(const std::string& name, FeatureVector* out) {
  std::ifstream in(std::string(TUNEFARM_SOURCE_DIR) + "/bench/cuda/gemm_variants/" + name + ".jsonl");
  ASSERT_TRUE(in) << name;
  std::string line, workload_text, trace_text;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.value("type", "") == "workload") workload_text = j.at("text").get<std::string>();
    if (j.contains("trace")) trace_text = j.at("trace").get<std::string>();
  }
  ASSERT_FALSE(workload_text.empty()) << name;
  ASSERT_FALSE(trace_text.empty()) << name;
  auto w = ParseWorkload(workload_text);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  auto trace = Trace::Parse(trace_text);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  Schedule sch(*base);
  Status applied = trace->ApplyTo(sch);
  ASSERT_TRUE(applied.ok()) << applied.ToString();
  auto lowered = LowerForCodegen(sch.func());
  ASSERT_TRUE(lowered.ok()) << lowered.status().ToString();
  *out = ExtractFeatures(*lowered);
}

float Gpu(const FeatureVector& v, GpuFeature f) { return v[static_cast<size_t>(kGpuOffset + f)]; }

TEST(GpuFeaturesTest, DoubleBufferedGemmDiffersOnlyInTheDoubleBufferFeatures) {
  FeatureVector plain, dbuf;
  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm1024_plain", &plain));
  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm1024_dbuf", &dbuf));
  EXPECT_EQ(Gpu(plain, kDoubleBuffered), 0.f);
  EXPECT_EQ(Gpu(plain, kDoubleBufferBytes), 0.f);
  EXPECT_EQ(Gpu(dbuf, kDoubleBuffered), 1.f);
  // A_shared [64, 32] and B_shared [32, 64], f32: 16 KiB staged (and doubled by LowerForCuda).
  EXPECT_EQ(Gpu(dbuf, kDoubleBufferBytes), 2 * 64 * 32 * 4.f);
  for (int k = 0; k < kNumFeatures; ++k) {
    if (k == kGpuOffset + kDoubleBuffered || k == kGpuOffset + kDoubleBufferBytes) continue;
    EXPECT_EQ(plain[static_cast<size_t>(k)], dbuf[static_cast<size_t>(k)]) << FeatureName(k);
  }
}

// GMM 1024: a thread's 4 rows (one unrolled loop) become one 4-wide load
// of A where unpacked A is read 2 wide along k_ii. GMM 4096: the thread's 16
// rows are two loops (8 x 2), so packed A is read 2 wide, where unpacked it
// was 4 wide along k (an unrolled loop of 8). B is the same in both.
TEST(GpuFeaturesTest, PackedOperandChangesTheLoadWidth) {
  FeatureVector plain, pack;
  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm1024_plain", &plain));
  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm1024_pack", &pack));
  EXPECT_EQ(Gpu(plain, kSharedLoads), 2.f);
  EXPECT_EQ(Gpu(pack, kSharedLoads), 2.f);
  EXPECT_EQ(Gpu(plain, kSharedMinLanes), 2.f);
  EXPECT_EQ(Gpu(plain, kSharedMaxLanes), 4.f);
  EXPECT_EQ(Gpu(pack, kSharedMinLanes), 4.f);
  EXPECT_EQ(Gpu(pack, kSharedMaxLanes), 4.f);

  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm4096_plain", &plain));
  ASSERT_NO_FATAL_FAILURE(VariantFeatures("gmm4096_pack", &pack));
  EXPECT_EQ(Gpu(plain, kSharedMinLanes), 2.f);
  EXPECT_EQ(Gpu(plain, kSharedMaxLanes), 4.f);
  EXPECT_EQ(Gpu(pack, kSharedMinLanes), 2.f);
  EXPECT_EQ(Gpu(pack, kSharedMaxLanes), 2.f);
}

// Not a check of values but the record of them: the estimate for every
// variant, for whoever tunes the GPU rules next (docs/costmodel.md quotes it).
TEST(GpuFeaturesTest, BankConflictEstimateOfEveryVariant) {
  for (const char* size : {"gmm1024", "gmm4096"}) {
    for (const char* variant : {"plain", "pack", "dbuf", "both"}) {
      const std::string name = std::string(size) + "_" + variant;
      FeatureVector v;
      ASSERT_NO_FATAL_FAILURE(VariantFeatures(name, &v));
      EXPECT_GE(Gpu(v, kBankConflictMax), 1.f) << name;
      std::cout << name << ": shared loads " << Gpu(v, kSharedLoads) << ", lanes " << Gpu(v, kSharedMinLanes)
                << ".." << Gpu(v, kSharedMaxLanes) << ", vector fraction " << Gpu(v, kSharedVectorFraction)
                << ", bank-conflict ways max " << Gpu(v, kBankConflictMax) << " mean "
                << Gpu(v, kBankConflictMean)
                << ", scalar " << Gpu(v, kBankConflictScalarMax) << ", double-buffered bytes " << Gpu(v, kDoubleBufferBytes) << "\n";
    }
  }
}

TEST(GpuFeaturesTest, ZeroOnCpu) {
  auto w = ParseWorkloadFile(std::string(TUNEFARM_SOURCE_DIR) + "/configs/workloads/gmm_1024.tf");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto base = LowerToPrimFunc(*w);
  ASSERT_TRUE(base.ok());
  auto lowered = LowerForCodegen(*base);
  ASSERT_TRUE(lowered.ok());
  const FeatureVector v = ExtractFeatures(*lowered);
  for (int k = kGpuOffset; k < kNumFeatures; ++k) EXPECT_EQ(v[static_cast<size_t>(k)], 0.f) << FeatureName(k);
}

}  // namespace
}  // namespace tunefarm::costmodel
