// Building a kernel from the log (kernel_build.h) parses and replays the
// chosen record's trace once, in the lookup: the build takes the schedule the
// lookup made and never reads the trace text again. A log stands in here that
// answers as TuningLog::GetBest does, except that the record it hands back
// carries a trace that does not parse -- a second parse or replay anywhere
// after the lookup would fail the build.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tunefarm/compiler/codegen/llvm/codegen_llvm.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/tuning_log.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::tuner {
namespace {

constexpr char kBroken[] = "this is not a trace";

Workload SmallMatmul() {
  auto w = ParseWorkload("workload mm(M = 64, N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                         "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

// A trace of `func`: C's outer loop split by 8, the outer part parallel. Its
// schedule in *scheduled.
std::string SplitTrace(const ir::PrimFunc& func, ir::PrimFunc* scheduled) {
  Schedule sch(func);
  auto block = sch.GetBlock("C");
  EXPECT_TRUE(block.ok()) << block.status().ToString();
  auto loops = sch.GetLoops(*block);
  EXPECT_TRUE(loops.ok()) << loops.status().ToString();
  auto split = sch.Split(loops->front(), {-1, 8});
  EXPECT_TRUE(split.ok()) << split.status().ToString();
  Status parallel = sch.Parallel(split->front());
  EXPECT_TRUE(parallel.ok()) << parallel.ToString();
  *scheduled = sch.func();
  return sch.trace().ToText();
}

database::TuningRecord Record(int64_t id, char uid_digit, std::string trace) {
  database::TuningRecord r;
  r.id = id;
  r.uid = std::string(32, uid_digit);
  r.trace = std::move(trace);
  r.run_secs = {1e-3};
  r.trace_mean_sec = 1e-3;
  r.trace_records = 1;
  return r;
}

// Answers GetBest from `candidates`, fastest first, asking `usable` about
// each until one is accepted (as every TuningLog does) -- then hands back
// that record with the trace `answer_trace`. With `ask` false it answers with
// the first candidate without asking. Everything else is Unimplemented.
class ScriptedLog final : public database::TuningLog {
 public:
  ScriptedLog(std::vector<database::TuningRecord> candidates, std::string answer_trace, bool ask = true)
      : candidates_(std::move(candidates)), answer_trace_(std::move(answer_trace)), ask_(ask) {}

  int asked() const { return asked_; }

  Result<database::BestRecord> GetBest(std::string_view, const database::Target&,
                                       const database::RecordUsable& usable = {}) override {
    for (const database::TuningRecord& record : candidates_) {
      if (ask_ && usable) {
        ++asked_;
        if (!usable(record)) continue;
      }
      database::BestRecord best{database::FallbackLevel::kSameDevice, record, database::Layer::kUser};
      best.record->trace = answer_trace_;
      return best;
    }
    return database::BestRecord{};
  }

  Status CommitWorkload(const database::Workload&) override { return Unused(); }
  Result<std::optional<database::Workload>> GetWorkload(std::string_view) override { return Unused(); }
  Result<std::vector<database::Workload>> ListWorkloads() override { return Unused(); }
  Result<std::vector<int64_t>> CommitRecords(const std::vector<database::TuningRecord>&) override { return Unused(); }
  Result<std::vector<database::TuningRecord>> GetTopK(std::string_view, const database::Target&, int) override {
    return Unused();
  }
  Result<std::vector<database::TuningRecord>> GetTopKByTargetString(std::string_view, std::string_view,
                                                                    int) override {
    return Unused();
  }
  Status ForEachRecord(const database::RecordFilter&,
                       const std::function<Status(const database::TuningRecord&)>&) override {
    return Unused();
  }
  Status ExportJsonl(std::ostream&, const database::RecordFilter&) override { return Unused(); }

 private:
  static Status Unused() { return Status::Unimplemented("not used by a kernel build"); }

  std::vector<database::TuningRecord> candidates_;
  std::string answer_trace_;
  bool ask_;
  int asked_ = 0;
};

TEST(KernelBuildTest, TheChosenTraceIsParsedAndReplayedOnceInTheLookupOnly) {
  Workload w = SmallMatmul();
  auto default_func = LowerToPrimFunc(w);
  ASSERT_TRUE(default_func.ok()) << default_func.status().ToString();
  ir::PrimFunc by_hand;
  std::string trace = SplitTrace(*default_func, &by_hand);
  // The fastest record does not replay (passed over); the next one does.
  ScriptedLog log({Record(7, 'a', kBroken), Record(9, 'b', trace)}, kBroken);

  auto schedule = ChooseSchedule(&log, "the test log", StructuralHashHex(w), w.name,
                                 KernelRecordTarget(Target::Host(), std::nullopt), *default_func);
  ASSERT_TRUE(schedule.ok()) << schedule.status().ToString();
  EXPECT_EQ(log.asked(), 2);
  ASSERT_TRUE(schedule->best.record.has_value());
  EXPECT_EQ(schedule->best.record->id, 9);
  ASSERT_EQ(schedule->passed_over.size(), 1u);
  EXPECT_EQ(schedule->passed_over[0].id, 7);

  // The answer's trace text is broken: only the lookup's replay can be built.
  auto kernel = BuildKernel(w, Target::Host(), *schedule, KernelBuildOptions());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_EQ(kernel->record_id, 9);
  EXPECT_NE(kernel->schedule_description.find("passed over faster record(s) #7"), std::string::npos)
      << kernel->schedule_description;
  auto expected = EmitObject(by_hand, Target::Host());
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  EXPECT_EQ(kernel->binary, *expected);
  auto untuned = EmitObject(*default_func, Target::Host());
  ASSERT_TRUE(untuned.ok()) << untuned.status().ToString();
  EXPECT_NE(kernel->binary, *untuned);

  // The one-call form does the same.
  auto again = BuildKernelFromLog(w, Target::Host(), &log, KernelBuildOptions());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->binary, *expected);
}

TEST(KernelBuildTest, AnAnswerTheLookupDidNotReplayIsAnInternalError) {
  Workload w = SmallMatmul();
  auto default_func = LowerToPrimFunc(w);
  ASSERT_TRUE(default_func.ok()) << default_func.status().ToString();
  ir::PrimFunc by_hand;
  ScriptedLog log({Record(3, 'c', SplitTrace(*default_func, &by_hand))}, kBroken, /*ask=*/false);
  auto schedule = ChooseSchedule(&log, "the test log", StructuralHashHex(w), w.name,
                                 KernelRecordTarget(Target::Host(), std::nullopt), *default_func);
  ASSERT_FALSE(schedule.ok());
  EXPECT_EQ(schedule.status().code(), StatusCode::kInternal);
  EXPECT_NE(schedule.status().message().find("record #3 of the test log"), std::string::npos)
      << schedule.status().message();
}

TEST(KernelBuildTest, NoLogMeansTheDefaultScheduleAndNoneThatReplaysNamesTheFastest) {
  Workload w = SmallMatmul();
  auto default_func = LowerToPrimFunc(w);
  ASSERT_TRUE(default_func.ok()) << default_func.status().ToString();
  auto kernel = BuildKernelFromLog(w, Target::Host(), nullptr, KernelBuildOptions());
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_FALSE(kernel->tuned());
  EXPECT_EQ(kernel->schedule_description, "default (untuned)");
  auto untuned = EmitObject(*default_func, Target::Host());
  ASSERT_TRUE(untuned.ok()) << untuned.status().ToString();
  EXPECT_EQ(kernel->binary, *untuned);

  ScriptedLog log({Record(4, 'd', kBroken), Record(5, 'e', kBroken)}, kBroken);
  KernelBuildStage stage = KernelBuildStage::kLink;
  KernelBuildOptions options;
  options.log_name = "the test log";
  auto none = BuildKernelFromLog(w, Target::Host(), &log, options, &stage);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(stage, KernelBuildStage::kSchedule);
  EXPECT_EQ(none.status().code(), StatusCode::kCorruption);
  EXPECT_NE(none.status().message().find("record #4 of the test log does not replay on mm"), std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("(nor do the 1 next fastest)"), std::string::npos)
      << none.status().message();
}

}  // namespace
}  // namespace tunefarm::tuner
