// Shared by the JobManager tests: a worker living in this process that
// answers with the test device's synthetic times, and a fixture with its own
// job log.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/daemon/job_manager.h"
#include "tunefarm/database/database.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::daemon::testing {

// A worker living in this process: answers whatever it is sent with the
// test device's synthetic times, on its own thread.
class FakeWorker {
 public:
  FakeWorker(FleetDispatcher* fleet, WorkerInfo info, int delay_ms = 0) : fleet_(fleet), delay_ms_(delay_ms) {
    id_ = fleet_->AddWorker(info, [this](Dispatch d) {
      std::lock_guard<std::mutex> lock(mu_);
      inbox_.push_back(std::move(d));
      cv_.notify_one();
    });
    thread_ = std::thread([this] { Loop(); });
  }
  ~FakeWorker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
    fleet_->RemoveWorker(id_, "test over");
  }
  // The traces of every candidate it was sent, in order.
  std::vector<std::string> traces() {
    std::lock_guard<std::mutex> lock(mu_);
    return traces_;
  }

 private:
  void Loop() {
    TestDeviceMeasurer device;
    while (true) {
      Dispatch d;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !inbox_.empty(); });
        if (stop_) return;
        d = std::move(inbox_.front());
        inbox_.erase(inbox_.begin());
        for (const MeasureInput& in : d.inputs) traces_.push_back(in.trace_text);
      }
      if (delay_ms_) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
      fleet_->OnResults(id_, device.Measure(d.inputs, d.options));
    }
  }

  FleetDispatcher* fleet_;
  int delay_ms_;
  std::string id_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Dispatch> inbox_;
  std::vector<std::string> traces_;
  bool stop_ = false;
  std::thread thread_;
};

// A test with its own job log (removed afterwards), named after `prefix`.
class JobLogTest : public ::testing::Test {
 protected:
  explicit JobLogTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() / (prefix_ + std::to_string(::getpid()) + ".db");
    std::filesystem::remove(path_);
    db_ = std::move(database::Database::Open(path_.string())).value();
  }
  void TearDown() override {
    db_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path_.string() + suffix);
  }
  // The job's view once it has ended (or after a minute).
  JobView WaitEnded(JobManager& jobs, const std::string& id) {
    JobView v;
    for (int i = 0; i < 600; ++i) {
      v = *jobs.WaitForChange(id, v.version, 0.1);
      if (v.finished()) break;
    }
    return v;
  }
  std::filesystem::path path_;
  std::unique_ptr<database::Database> db_;

 private:
  std::string prefix_;
};

}  // namespace tunefarm::daemon::testing
