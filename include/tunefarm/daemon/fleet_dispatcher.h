// FleetDispatcher: the daemon's view of its measurement workers, and the
// dispatch of candidates to them.
//
// Jobs hand batches to Measure(device_key, ...), which queues the candidates
// and blocks until every one has a result. Workers (one session per Fleet
// stream, see fleet_service.h) are added with AddWorker and receive
// MeasureRequests through their SendFn, at most max_in_flight candidates at a
// time. Each queued candidate goes to the least-loaded worker of its key (the
// fewest in flight for its max_in_flight), so a batch is spread over every
// worker of the key and measured in parallel; each worker gets one request
// per batch with its share. When a worker is removed (stream ended, lease
// expired) its in-flight candidates go back to the front of the queue for
// another worker.
//
// Invariant: a candidate gets exactly one result. The first result for a
// pending candidate wins, from whichever worker; a later one (a re-dispatched
// candidate answered twice, a worker replaying results after a reconnect) is
// dropped and counted in duplicates_dropped.
//
// Workers of one key may run different tunefarm versions while a fleet is
// upgraded: a candidate is sent only to a worker that replays every
// instruction of its trace and every loop annotation key it annotates with
// (WorkerInfo::trace_instructions, loop_annotations). One that no connected
// worker of its key replays waits `unreplayable_grace` for one (an upgraded
// worker restarting, say), then is answered invalid_candidate naming the
// instruction or annotation and the workers, rather than holding its job
// forever. Jobs keep such candidates out of the search from the start
// (CommonInstructions and CommonLoopAnnotations at job start,
// MakeSketchPolicy), so this answer is for workers that left mid-job.
//
// Thread safety: every method may be called from any thread; state is guarded
// by one mutex. SendFn is called with that mutex held and must not block or
// call back into the dispatcher (the fleet service only appends to an outbox).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/database/record.h"
#include "tunefarm/measure/measure.h"

namespace tunefarm::daemon {

struct WorkerInfo {
  std::string device_key;
  std::string device;
  std::string hostname;
  int max_in_flight = 1;
  database::HardwareFingerprint fingerprint;  // as the worker reported it
  std::string host_target;  // target string of the worker's own CPU ("" : builds nothing, e.g. a test device)
  // Schedule instructions the worker replays (trace instruction names). A
  // candidate goes only to workers that know every instruction of its trace.
  // Empty: no limit (a worker made in this process). The fleet service fills
  // it for every worker that dials in, an older worker's included.
  std::set<std::string> trace_instructions;
  // Loop annotation keys the worker replays in `annotate`: likewise, a
  // candidate goes only to workers that know every key its trace annotates
  // with. Empty: no limit (a worker made in this process).
  std::set<std::string> loop_annotations;
  std::string tunefarm_version;  // as the worker reported it
  // The worker's device invents its times (a test device): its results are
  // recorded as synthetic, never ranked or served (database record.h).
  bool synthetic = false;
};

// One candidate sent to a worker, with the options of its batch.
struct Dispatch {
  std::vector<MeasureInput> inputs;
  MeasureOptions options;
  std::string request_id;
};

struct WorkerSnapshot {
  std::string worker_id;
  WorkerInfo info;
  int in_flight = 0;
  int64_t measured = 0;
  int64_t errors = 0;
  double connected_s = 0;
  double last_seen_ms = 0;
};

struct FleetSnapshot {
  std::vector<WorkerSnapshot> workers;
  int64_t queued = 0;
  int64_t redispatched = 0;
  int64_t duplicates_dropped = 0;
  int64_t results_accepted = 0;
};

class FleetDispatcher {
 public:
  using SendFn = std::function<void(Dispatch)>;
  using Clock = std::chrono::steady_clock;

  explicit FleetDispatcher(std::chrono::milliseconds unreplayable_grace = std::chrono::seconds(60))
      : unreplayable_grace_(unreplayable_grace) {}
  FleetDispatcher(const FleetDispatcher&) = delete;
  FleetDispatcher& operator=(const FleetDispatcher&) = delete;

  // Registers a worker; returns its id ("hostname/device#n"). Queued
  // candidates for its device key are sent at once.
  std::string AddWorker(const WorkerInfo& info, SendFn send);
  // Forgets a worker; its unanswered candidates are queued again. Idempotent.
  void RemoveWorker(const std::string& worker_id, const std::string& reason);
  // Any message from a worker renews its lease.
  void Touch(const std::string& worker_id);
  // Accepts results; frees the worker's slots; may send it more work.
  void OnResults(const std::string& worker_id, const std::vector<MeasureResult>& results);
  // Workers silent for longer than `lease`: the caller ends their sessions.
  std::vector<std::string> SilentWorkers(std::chrono::milliseconds lease);

  // Measures `inputs` on workers of `device_key`; results in input order,
  // each naming its worker. Waits as long as it takes (no worker yet is not
  // an error: the candidates wait in the queue). Returns an empty vector,
  // and drops the batch's unanswered candidates, when `abort` becomes true.
  std::vector<MeasureResult> Measure(const std::string& device_key, const std::vector<MeasureInput>& inputs,
                                     const MeasureOptions& options, const std::atomic<bool>* abort);

  FleetSnapshot Snapshot();
  // Number of connected workers for `device_key` (all keys when empty).
  int WorkerCount(const std::string& device_key = "");
  // The first (in id order) connected worker of `device_key` that is
  // synthetic when `synthetic` is false, or measures when it is true; nullopt
  // if none. Reads no more than that (no copies: every registration asks).
  std::optional<std::string> OtherKindWorker(const std::string& device_key, bool synthetic);
  // The device keys of the connected workers, sorted.
  std::vector<std::string> ServedKeys();
  // Waits up to `timeout` for a connected worker of `device_key`; false if
  // none connected in time or `abort` became true.
  bool WaitForWorker(const std::string& device_key, std::chrono::milliseconds timeout, const std::atomic<bool>* abort);
  // What the workers of `device_key` are: the info of the latest to register
  // (a device key names interchangeable hardware). Waits up to `timeout` for
  // one to register; nullopt if none did or `abort` became true.
  std::optional<WorkerInfo> DeviceKeyInfo(const std::string& device_key, std::chrono::milliseconds timeout,
                                          const std::atomic<bool>* abort);
  // The instructions every connected worker of `device_key` replays; nullopt
  // when none of them is limited (or none is connected).
  std::optional<std::set<std::string>> CommonInstructions(const std::string& device_key);
  // The loop annotation keys every connected worker of `device_key`
  // replays; nullopt when none of them is limited (or none is connected).
  std::optional<std::set<std::string>> CommonLoopAnnotations(const std::string& device_key);
  // The fingerprint a worker reported when it registered (MeasureResult::
  // worker names it); still known after the worker left, since its results
  // may be recorded later. nullopt for an id never registered.
  std::optional<database::HardwareFingerprint> WorkerFingerprint(const std::string& worker_id);

 private:
  struct Batch;
  struct Pending {
    MeasureInput input;
    Batch* batch = nullptr;
    size_t index = 0;
    std::string device_key;
    std::set<std::string> holders;  // workers it is in flight on
    // What its trace needs a worker to replay (both empty: default schedule,
    // or a trace that does not parse).
    std::set<std::string> needs;        // instructions
    std::set<std::string> annotations;  // loop annotation keys of its `annotate`s
    std::optional<Clock::time_point> unreplayable_since;  // set while no connected worker replays it
  };
  struct Worker {
    std::string id;
    WorkerInfo info;
    SendFn send;
    std::set<std::string> in_flight;  // candidate ids
    int64_t measured = 0, errors = 0;
    Clock::time_point connected_at, last_seen;
  };

  void DispatchLocked(const std::string& device_key);
  // Answers queued candidates that no connected worker of the key has
  // replayed for unreplayable_grace_ (invalid_candidate naming the
  // instruction or annotation), when one is connected; starts the grace of
  // the others.
  void AnswerUnreplayableLocked(const std::string& device_key);
  void AcceptLocked(const std::string& worker_id, const MeasureResult& result);
  // What every connected worker of the key knows of `field`; nullopt when
  // none is limited.
  std::optional<std::set<std::string>> CommonOf(const std::string& device_key,
                                                std::set<std::string> WorkerInfo::*field);

  const std::chrono::milliseconds unreplayable_grace_;
  std::mutex mu_;
  std::condition_variable done_cv_;
  std::map<std::string, Pending> pending_;                  // GUARDED_BY(mu_): by candidate id
  std::map<std::string, std::deque<std::string>> queues_;   // GUARDED_BY(mu_): device key -> candidate ids
  std::map<std::string, std::unique_ptr<Worker>> workers_;  // GUARDED_BY(mu_): by worker id
  std::map<std::string, WorkerInfo> key_info_;              // GUARDED_BY(mu_): device key -> latest worker's info
  // Every worker ever registered (ids are never reused): a few per worker session.
  std::map<std::string, database::HardwareFingerprint> fingerprints_;  // GUARDED_BY(mu_): by worker id
  int64_t next_worker_ = 1;                                 // GUARDED_BY(mu_)
  int64_t next_request_ = 1;                                // GUARDED_BY(mu_)
  int64_t redispatched_ = 0, duplicates_dropped_ = 0, accepted_ = 0;  // GUARDED_BY(mu_)
};

// A Measurer that measures through the fleet: what a daemon job uses.
// The dispatcher and `abort` must outlive it.
class FleetMeasurer : public Measurer {
 public:
  FleetMeasurer(FleetDispatcher* fleet, std::string device_key, const std::atomic<bool>* abort)
      : fleet_(fleet), device_key_(std::move(device_key)), abort_(abort) {}
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions& options) override {
    return fleet_->Measure(device_key_, inputs, options, abort_);
  }

 private:
  FleetDispatcher* fleet_;
  std::string device_key_;
  const std::atomic<bool>* abort_;
};

}  // namespace tunefarm::daemon
