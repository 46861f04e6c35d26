// What the fleet's workers are (fleet_dispatcher.h), read under the
// dispatcher's lock: the snapshot `tunefarm fleet` shows, a device key's
// worker information and the instructions and loop annotations all of its
// workers replay, a worker's fingerprint, the served keys, a worker of
// another kind (synthetic or real) on a key, and the wait for a key's first
// worker.
#include <algorithm>

#include "tunefarm/daemon/fleet_dispatcher.h"

namespace tunefarm::daemon {

FleetSnapshot FleetDispatcher::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  FleetSnapshot s;
  auto now = Clock::now();
  for (const auto& [id, w] : workers_) {
    WorkerSnapshot ws;
    ws.worker_id = id;
    ws.info = w->info;
    ws.in_flight = int(w->in_flight.size());
    ws.measured = w->measured;
    ws.errors = w->errors;
    ws.connected_s = std::chrono::duration<double>(now - w->connected_at).count();
    ws.last_seen_ms = std::chrono::duration<double, std::milli>(now - w->last_seen).count();
    s.workers.push_back(std::move(ws));
  }
  for (const auto& [key, q] : queues_) s.queued += int64_t(q.size());
  s.redispatched = redispatched_;
  s.duplicates_dropped = duplicates_dropped_;
  s.results_accepted = accepted_;
  return s;
}

std::optional<WorkerInfo> FleetDispatcher::DeviceKeyInfo(const std::string& device_key,
                                                          std::chrono::milliseconds timeout,
                                                          const std::atomic<bool>* abort) {
  std::unique_lock<std::mutex> lock(mu_);
  auto end = Clock::now() + timeout;
  while (!key_info_.count(device_key)) {
    if ((abort && abort->load()) || Clock::now() >= end) return std::nullopt;
    done_cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
  return key_info_[device_key];
}

std::optional<std::set<std::string>> FleetDispatcher::CommonInstructions(const std::string& device_key) {
  return CommonOf(device_key, &WorkerInfo::trace_instructions);
}

std::optional<std::set<std::string>> FleetDispatcher::CommonLoopAnnotations(const std::string& device_key) {
  return CommonOf(device_key, &WorkerInfo::loop_annotations);
}

std::optional<std::set<std::string>> FleetDispatcher::CommonOf(const std::string& device_key,
                                                               std::set<std::string> WorkerInfo::*field) {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<std::set<std::string>> common;
  for (const auto& [id, w] : workers_) {
    const std::set<std::string>& known = w->info.*field;
    if (w->info.device_key != device_key || known.empty()) continue;
    if (!common) {
      common = known;
      continue;
    }
    std::set<std::string> both;
    for (const std::string& n : *common) {
      if (known.count(n)) both.insert(n);
    }
    common = std::move(both);
  }
  return common;
}

std::optional<database::HardwareFingerprint> FleetDispatcher::WorkerFingerprint(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fingerprints_.find(worker_id);
  if (it == fingerprints_.end()) return std::nullopt;
  return it->second;
}

int FleetDispatcher::WorkerCount(const std::string& device_key) {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [id, w] : workers_) n += device_key.empty() || w->info.device_key == device_key;
  return n;
}

std::optional<std::string> FleetDispatcher::OtherKindWorker(const std::string& device_key, bool synthetic) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, w] : workers_) {
    if (w->info.device_key == device_key && w->info.synthetic != synthetic) return id;
  }
  return std::nullopt;
}

std::vector<std::string> FleetDispatcher::ServedKeys() {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<std::string> keys;
  for (const auto& [id, w] : workers_) keys.insert(w->info.device_key);
  return {keys.begin(), keys.end()};
}

bool FleetDispatcher::WaitForWorker(const std::string& device_key, std::chrono::milliseconds timeout,
                                    const std::atomic<bool>* abort) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto end = Clock::now() + timeout;
  auto connected = [&] {
    return std::any_of(workers_.begin(), workers_.end(),
                       [&](const auto& w) { return w.second->info.device_key == device_key; });
  };
  while (!connected()) {
    const auto now = Clock::now();
    if ((abort && abort->load()) || now >= end) return false;
    // AddWorker notifies; the poll is for `abort`, which nothing notifies.
    done_cv_.wait_for(lock, std::min<Clock::duration>(std::chrono::milliseconds(50), end - now));
  }
  return true;
}

}  // namespace tunefarm::daemon
