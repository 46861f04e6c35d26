// Shared by the FleetDispatcher tests: a worker that records what it was
// sent (its SendFn), and a wait for a condition the batch's thread makes true.
#pragma once

#include <gtest/gtest.h>

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

}  // namespace tunefarm::daemon::testing
