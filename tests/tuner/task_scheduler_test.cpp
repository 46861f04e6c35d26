// The task scheduler spends a job's trials where the job spends its time, and
// starves no task: every task gets a batch of the search before any gets its
// second, whether the job starts fresh or resumes a log that holds only the
// tasks' defaults. A job's fast-by-default task (a pooling layer beside
// convolutions whose untuned defaults take seconds) is the case that matters.
#include "tunefarm/tuner/task_scheduler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tunefarm/worker/test_device.h"
#include "tuning_loop_test_util.h"

namespace tunefarm::tuner {
namespace {

TEST(TaskSchedulerTest, WarmUpGivesEveryTaskOneBatchLargestWeightedLatencyFirst) {
  std::vector<TaskHistory> tasks(5);
  tasks[0].weight = 1, tasks[0].best_seconds = 2e-3;  // 2 ms
  tasks[1].weight = 6, tasks[1].best_seconds = 1e-3;  // 6 ms
  tasks[2].weight = 1, tasks[2].best_seconds = 0;     // nothing timed: first
  tasks[3].weight = 3, tasks[3].best_seconds = 1e-4;  // 0.3 ms: last
  tasks[4].weight = 2, tasks[4].best_seconds = 2e-3;  // 4 ms
  for (TaskHistory& t : tasks) t.trials = 1;            // the baseline
  TaskScheduler scheduler(/*seed=*/7, /*epsilon=*/1.0);  // epsilon 1: random after the warm-up
  const std::vector<bool> done(tasks.size(), false);
  std::vector<size_t> order;
  for (size_t round = 0; round < tasks.size(); ++round) {
    const size_t i = scheduler.Next(tasks, done);
    order.push_back(i);
    tasks[i].AddSearchBatch(tasks[i].trials + 8, tasks[i].best_seconds > 0 ? tasks[i].best_seconds : 1e-3);
  }
  EXPECT_EQ(order, (std::vector<size_t>{2, 1, 4, 0, 3}));
}

TEST(TaskSchedulerTest, AfterTheWarmUpTheTaskThatImprovesFastestWeightedGetsTheBatch) {
  std::vector<TaskHistory> tasks(3);
  for (TaskHistory& t : tasks) t.trials = 1;
  // Task 0: flat at 1 ms for three batches. Task 1: falling 4 -> 2 ms.
  // Task 2: falling as fast as task 1, but half its weight.
  for (double best : {1e-3, 1e-3, 1e-3}) tasks[0].AddSearchBatch(tasks[0].trials + 8, best);
  for (double best : {4e-3, 3e-3, 2e-3}) tasks[1].AddSearchBatch(tasks[1].trials + 8, best);
  tasks[2].weight = 0.5;
  for (double best : {4e-3, 3e-3, 2e-3}) tasks[2].AddSearchBatch(tasks[2].trials + 8, best);
  tasks[1].weight = 1;
  TaskScheduler scheduler(/*seed=*/7, /*epsilon=*/0);
  EXPECT_EQ(scheduler.Next(tasks, std::vector<bool>(3, false)), 1u);
  // Done tasks are never picked; the flat task still has its optimistic share.
  EXPECT_EQ(scheduler.Next(tasks, {false, true, true}), 0u);
}

TEST(TaskSchedulerTest, ATaskWithNothingTimedAfterItsBatchStaysFirst) {
  std::vector<TaskHistory> tasks(2);
  tasks[0].AddSearchBatch(9, 1e-3);
  tasks[1].AddSearchBatch(9, 0);  // its batch timed nothing (every candidate failed)
  TaskScheduler scheduler(/*seed=*/7, /*epsilon=*/0);
  EXPECT_EQ(scheduler.Next(tasks, {false, false}), 1u);
}

// The test device's times, except that the untuned defaults of every task
// but the one named `fast` take a second: convolutions beside a pooling
// layer, whose default is already near its best.
class SlowDefaultsMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    std::vector<MeasureResult> results = device_.Measure(inputs, options);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const bool slow = testing::IsDefaultTrace(inputs[i].trace_text) &&
                        inputs[i].workload_text.find("workload fast") == std::string::npos;
      if (slow) {
        for (double& s : results[i].repeat_seconds) s *= 1000;
      }
    }
    return results;
  }

 private:
  TestDeviceMeasurer device_;
};

// Eight matmuls of distinct sizes; task 7 is the fast-by-default one.
std::vector<TuneTask> EightTasks() {
  std::vector<TuneTask> tasks;
  for (int k = 0; k < 8; ++k) {
    const std::string name = k == 7 ? "fast" : "slow" + std::to_string(k);
    auto w = ParseWorkload("workload " + name + "(M = " + std::to_string(32 + 8 * k) +
                           ", N = 32, K = 16) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                           "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n");
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    auto task = MakeTuneTask(*w, /*weight=*/k == 7 ? 1 : 3);
    EXPECT_TRUE(task.ok()) << task.status().ToString();
    tasks.push_back(*task);
  }
  return tasks;
}

class TaskSchedulerLoopTest : public testing::TuningLogTest {
 protected:
  TaskSchedulerLoopTest() : TuningLogTest("tunefarm_task_scheduler_") {}
  std::vector<TaskStatus> Tune(int trials, int batch_size = 8) {
    TuneOptions options = testing::LoopOptions(trials);
    options.batch_size = batch_size;
    TuningLoop loop(options, db_.get(), &measurer_, nullptr);
    std::atomic<bool> stop{false};
    Status st = loop.Run(EightTasks(), stop, nullptr);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return loop.status();
  }
  // Records of a tuned trace (not the default) per task name.
  std::map<std::string, int> SearchedRecords(const std::vector<TaskStatus>& status) {
    std::map<std::string, std::string> name_of;
    for (const TaskStatus& s : status) name_of[s.hash] = s.name;
    std::map<std::string, int> out;
    for (const database::TuningRecord& r : Records()) {
      if (!testing::IsDefaultTrace(r.trace)) ++out[name_of.at(r.workload_hash)];
    }
    return out;
  }
  SlowDefaultsMeasurer measurer_;
};

// 8 baselines + 8 batches of 8 for the warm-up + the final reserve fit in
// 100 trials; the slow defaults' first tuned batch is a thousandfold drop,
// which must not read as a rate that keeps the fast task waiting.
TEST_F(TaskSchedulerLoopTest, AJobsFastByDefaultTaskIsSearchedToo) {
  const std::vector<TaskStatus> status = Tune(100);
  ASSERT_EQ(status.size(), 8u);
  const std::map<std::string, int> searched = SearchedRecords(status);
  for (const std::string name : {"slow0", "slow1", "slow2", "slow3", "slow4", "slow5", "slow6", "fast"}) {
    EXPECT_GE(searched.count(name) ? searched.at(name) : 0, 4) << name << " got no batch of the search";
  }
}

// Batches of 16 for 8 tasks in a budget of 88 (8 baselines, 16 in reserve)
// would search only four of them: the batches shrink to 8 instead.
TEST_F(TaskSchedulerLoopTest, ABudgetTooSmallForFullBatchesStillSearchesEveryTask) {
  const std::vector<TaskStatus> status = Tune(88, /*batch_size=*/16);
  const std::map<std::string, int> searched = SearchedRecords(status);
  for (const TaskStatus& s : status) {
    EXPECT_GE(searched.count(s.name) ? searched.at(s.name) : 0, 4) << s.name << " got no batch of the search";
  }
}

// A job stopped after its baselines resumes with every task's first batch
// still owed: a default's record is not a batch of the search.
TEST_F(TaskSchedulerLoopTest, AResumedJobWithOnlyDefaultsOnRecordWarmsUpEveryTask) {
  ASSERT_TRUE(SearchedRecords(Tune(8)).empty());  // the baselines only
  const std::map<std::string, int> searched = SearchedRecords(Tune(100));
  EXPECT_GE(searched.count("fast") ? searched.at("fast") : 0, 4) << "the fast task got no batch of the search";
}

}  // namespace
}  // namespace tunefarm::tuner
