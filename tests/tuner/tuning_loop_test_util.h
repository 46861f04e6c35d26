// Helpers for the tuning-loop tests (stale records, confirmation of a best,
// the final round).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/costmodel/cost_model.h"
#include "tunefarm/database/database.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::tuner::testing {

// A 64x32x16 matmul: small enough that the test device "measures" it at once.
inline Workload SmallMatmul() {
  auto w = ParseWorkload("workload mm(M = 64, N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

// The target the tuning-loop tests tune for: one fixed AVX-512 x86 target on
// every machine. The test device compiles nothing, and the drawn programs
// (and so the synthetic times and which trace leads) depend on the target's
// vector width; the host's target would make the tests' premises differ
// between an AVX-512 and an AVX2 machine.
inline Target LoopTarget() {
  auto t = Target::Parse("llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=x86-64-v4 -mattr=+avx2,+fma,+avx512f");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Target::Host();
}

// What the tuning-loop tests tune with: LoopTarget(), batches of 8, the
// device "dev", no transfer, a pool of 32.
inline TuneOptions LoopOptions(int trials) {
  TuneOptions o;
  o.target = LoopTarget();
  o.trials = trials;
  o.batch_size = 8;
  o.device = "dev";
  o.warm_start_records = 0;
  o.search.population = 32;
  return o;
}

// A test with its own directory and tuning log (dir_/tune.db), both removed
// afterwards; `prefix` names the directory after the suite.
class TuningLogTest : public ::testing::Test {
 protected:
  explicit TuningLogTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto db = database::Database::Open((dir_ / "tune.db").string());
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(db).value();
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Every record of the log, in commit order.
  std::vector<database::TuningRecord> Records() {
    std::vector<database::TuningRecord> out;
    EXPECT_TRUE(db_->ForEachRecord({}, [&](const database::TuningRecord& r) {
                    out.push_back(r);
                    return Status::OK();
                  }).ok());
    return out;
  }
  std::filesystem::path dir_;
  std::unique_ptr<database::Database> db_;

 private:
  std::string prefix_;
};

// True for the record of the untuned default: a trace without instructions.
inline bool IsDefaultTrace(const std::string& text) {
  auto trace = Trace::Parse(text);
  return trace.ok() && trace->size() == 0;
}

// The test device's synthetic times, except that a third of the traces (one
// in `lucky_one_in`; 1: all, 0: none) are timed twice as fast the first time
// they are measured: timing noise that favours a kernel once.
// With `fail_again`, a lucky trace's second measurement fails instead, with
// `again_error`. The untuned default's times are multiplied by
// `default_slowdown` (the synthetic times often rank it first).
class LuckyOnceMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    batch_sizes.push_back(inputs.size());
    std::vector<MeasureResult> results = device_.Measure(inputs, options);
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (IsDefaultTrace(inputs[i].trace_text)) {
        for (double& s : results[i].repeat_seconds) s *= default_slowdown;
      }
      bool first = seen_.insert(inputs[i].trace_text).second;
      if (first && Lucky(inputs[i].trace_text)) {
        for (double& s : results[i].repeat_seconds) s /= 2;
      } else if (!first && fail_again && Lucky(inputs[i].trace_text)) {
        results[i].error = again_error;
        results[i].error_message = "failed when measured again";
        results[i].repeat_seconds.clear();
      }
    }
    return results;
  }
  std::vector<size_t> batch_sizes;  // of every Measure call, in order
  bool fail_again = false;
  MeasureErrorKind again_error = MeasureErrorKind::kTimeout;
  int lucky_one_in = 3;
  double default_slowdown = 1;
  static bool IsLucky(const std::string& trace) { return std::hash<std::string>{}(trace) % 3 == 0; }
  bool Lucky(const std::string& trace) const {
    return lucky_one_in > 0 && std::hash<std::string>{}(trace) % size_t(lucky_one_in) == 0;
  }

 private:
  TestDeviceMeasurer device_;
  std::set<std::string> seen_;
};

// A cost model that scores programs at random, as an untrained one does, and
// counts the rows it is taught.
class CountingModel : public costmodel::CostModel {
 public:
  Status Update(const std::vector<costmodel::MeasuredCandidate>& measured) override {
    rows += measured.size();
    return Status::OK();
  }
  Result<std::vector<double>> Predict(const std::vector<const ir::PrimFunc*>& lowered) override {
    return Scores(lowered.size());
  }
  Result<std::vector<double>> PredictFeatures(const costmodel::FeatureMatrix& x) override {
    return Scores(size_t(x.rows()));
  }
  Status Save(const std::string&) const override { return Status::OK(); }
  Status Load(const std::string&) override { return Status::OK(); }
  size_t rows = 0;

 private:
  std::vector<double> Scores(size_t n) {
    std::vector<double> scores(n);
    for (double& x : scores) x = std::uniform_real_distribution<double>(0, 1)(rng_);
    return scores;
  }
  std::mt19937 rng_{17};
};

}  // namespace tunefarm::tuner::testing
