// Shared by the FleetDispatcher tests: a worker that records what it was
// sent (its SendFn), a wait for a condition the batch's thread makes true,
// and the batch's thread.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/daemon/fleet_dispatcher.h"

namespace tunefarm::daemon::testing {

struct FakeWorker {
  std::mutex mu;
  std::vector<Dispatch> received;  // GUARDED_BY(mu)
  std::vector<std::string> Ids() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> ids;
    for (const Dispatch& d : received) {
      for (const MeasureInput& in : d.inputs) ids.push_back(in.candidate_id);
    }
    return ids;
  }
  FleetDispatcher::SendFn Fn() {
    return [this](Dispatch d) {
      std::lock_guard<std::mutex> lock(mu);
      received.push_back(std::move(d));
    };
  }
};

// Polls `pred` for up to 2 s.
template <class Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 400; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// A batch measured on its own thread for device key `key`, abandoned and
// joined however the test ends (a failed assertion must not leave a joinable
// thread or a hang).
class BatchThread {
 public:
  BatchThread(FleetDispatcher& fleet, std::vector<MeasureInput> inputs, std::string key = "cpu-x")
      : thread_([this, &fleet, inputs = std::move(inputs), key = std::move(key)] {
          results_ = fleet.Measure(key, inputs, {}, &abort_);
          done_ = true;
        }) {}
  ~BatchThread() {
    abort_ = true;
    thread_.join();
  }
  bool done() const { return done_; }
  // The batch's results once done(); empty when it was not done in time.
  std::vector<MeasureResult> Results() {
    if (!Eventually([&] { return done(); })) abort_ = true;
    if (thread_.joinable()) thread_.join();
    thread_ = std::thread([] {});
    return results_;
  }

 private:
  std::atomic<bool> abort_{false}, done_{false};
  std::vector<MeasureResult> results_;
  std::thread thread_;
};

}  // namespace tunefarm::daemon::testing
