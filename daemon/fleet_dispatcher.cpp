// Candidate dispatch across the fleet (fleet_dispatcher.h). Map:
//   AddWorker / RemoveWorker / Touch / SilentWorkers -- worker lifecycle
//   Measure                                         -- a job's batch, queued and awaited
//   DispatchLocked / AnswerUnreplayableLocked        -- queue -> the least-loaded worker that replays the trace
//                                                      (its instructions and loop annotation keys)
//   Snapshot, DeviceKeyInfo, CommonInstructions, ... -- what the workers of a key are (fleet_queries.cpp)
//   OnResults / AcceptLocked                         -- first result wins
#include "tunefarm/daemon/fleet_dispatcher.h"

#include <algorithm>

#include "tunefarm/compiler/schedule/trace.h"

namespace tunefarm::daemon {

struct FleetDispatcher::Batch {
  std::vector<MeasureResult> results;
  size_t remaining = 0;
  MeasureOptions options;
};

std::string FleetDispatcher::AddWorker(const WorkerInfo& info, SendFn send) {
  std::lock_guard<std::mutex> lock(mu_);
  auto w = std::make_unique<Worker>();
  w->id = (info.hostname.empty() ? std::string("worker") : info.hostname) + "/" + info.device + "#" +
          std::to_string(next_worker_++);
  w->info = info;
  w->info.max_in_flight = std::max(1, info.max_in_flight);
  w->send = std::move(send);
  w->connected_at = w->last_seen = Clock::now();
  std::string id = w->id;
  key_info_[info.device_key] = w->info;
  fingerprints_[id] = info.fingerprint;
  workers_[id] = std::move(w);
  done_cv_.notify_all();  // DeviceKeyInfo waiters
  DispatchLocked(info.device_key);
  return id;
}

void FleetDispatcher::RemoveWorker(const std::string& worker_id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) return;
  std::unique_ptr<Worker> w = std::move(it->second);
  workers_.erase(it);
  // Its unanswered candidates go to the front of the queue, in their order,
  // unless another worker is already measuring them.
  auto& queue = queues_[w->info.device_key];
  std::vector<std::string> requeue;
  for (const std::string& cid : w->in_flight) {
    auto p = pending_.find(cid);
    if (p == pending_.end()) continue;
    p->second.holders.erase(worker_id);
    if (p->second.holders.empty()) requeue.push_back(cid);
  }
  std::sort(requeue.begin(), requeue.end(), [&](const std::string& a, const std::string& b) {
    return pending_[a].index < pending_[b].index;
  });
  queue.insert(queue.begin(), requeue.begin(), requeue.end());
  redispatched_ += int64_t(requeue.size());
  DispatchLocked(w->info.device_key);
}

void FleetDispatcher::Touch(const std::string& worker_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workers_.find(worker_id);
  if (it != workers_.end()) it->second->last_seen = Clock::now();
}

std::vector<std::string> FleetDispatcher::SilentWorkers(std::chrono::milliseconds lease) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  auto now = Clock::now();
  for (const auto& [id, w] : workers_) {
    if (now - w->last_seen > lease) out.push_back(id);
  }
  return out;
}

void FleetDispatcher::OnResults(const std::string& worker_id, const std::vector<MeasureResult>& results) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = workers_.find(worker_id);
  if (it != workers_.end()) it->second->last_seen = Clock::now();
  for (const MeasureResult& r : results) AcceptLocked(worker_id, r);
  if (it != workers_.end()) DispatchLocked(it->second->info.device_key);
  done_cv_.notify_all();
}

void FleetDispatcher::AcceptLocked(const std::string& worker_id, const MeasureResult& result) {
  auto w = workers_.find(worker_id);
  if (w != workers_.end()) w->second->in_flight.erase(result.candidate_id);
  auto p = pending_.find(result.candidate_id);
  if (p == pending_.end()) {
    ++duplicates_dropped_;  // answered already, abandoned, or never ours
    return;
  }
  Pending& pending = p->second;
  // Free the slot on every other worker that holds it too: their late answer
  // will be a dropped duplicate.
  for (const std::string& holder : pending.holders) {
    auto h = workers_.find(holder);
    if (h != workers_.end()) h->second->in_flight.erase(result.candidate_id);
  }
  MeasureResult& slot = pending.batch->results[pending.index];
  slot = result;
  slot.candidate_id = pending.input.candidate_id;
  slot.worker = worker_id;
  --pending.batch->remaining;
  if (w != workers_.end()) {
    ++w->second->measured;
    if (result.error != MeasureErrorKind::kNone) ++w->second->errors;
  }
  ++accepted_;
  pending_.erase(p);
}

namespace {

// Whether a worker that knows `known` knows every name in `needs` (`known`
// empty: a worker made in this process, no limit).
bool Knows(const std::set<std::string>& known, const std::set<std::string>& needs) {
  return known.empty() || std::includes(known.begin(), known.end(), needs.begin(), needs.end());
}

// Whether `w` replays a candidate's trace: its instructions and its loop
// annotation keys.
bool Replays(const WorkerInfo& w, const std::set<std::string>& instructions, const std::set<std::string>& annotations) {
  return Knows(w.trace_instructions, instructions) && Knows(w.loop_annotations, annotations);
}

// What a candidate's trace needs a worker to replay: the instructions and the
// keys of its `annotate`s, of its typed trace when the tuner handed one over,
// else of its text; none for the default schedule, and none for text that
// does not parse (the worker answers that candidate).
struct TraceNeeds {
  std::set<std::string> instructions, annotations;
};

TraceNeeds NeedsOf(const MeasureInput& in) {
  TraceNeeds out;
  auto add = [&](const Trace& trace) {
    for (const Instruction& inst : trace.instructions()) {
      out.instructions.insert(inst.name);
      // annotate(loop, "key", value): a worker's Annotate knows the key or fails the trace.
      if (inst.kind == InstructionKind::kAnnotate && inst.args.size() > 1 &&
          inst.args[1].kind == TraceArg::Kind::kString) {
        out.annotations.insert(inst.args[1].ref);
      }
    }
  };
  if (in.trace) {
    add(*in.trace);
  } else if (TraceTextHasContent(in.trace_text)) {
    if (auto parsed = Trace::Parse(in.trace_text); parsed.ok()) add(*parsed);
  }
  return out;
}

}  // namespace

void FleetDispatcher::DispatchLocked(const std::string& device_key) {
  auto q = queues_.find(device_key);
  if (q == queues_.end() || q->second.empty()) return;
  std::deque<std::string>& queue = q->second;
  // One request per worker and batch, built up here and sent at the end.
  struct Outgoing {
    Worker* worker = nullptr;
    Dispatch dispatch;
    const Batch* batch = nullptr;
  };
  std::vector<Outgoing> out;
  int open_workers = 0;  // with a free slot
  for (auto& [id, w] : workers_) {
    if (w->info.device_key != device_key) continue;
    out.push_back({w.get(), Dispatch(), nullptr});
    open_workers += int(w->in_flight.size()) < w->info.max_in_flight;
  }
  auto flush = [&](Outgoing& o) {
    if (o.dispatch.inputs.empty()) return;
    o.dispatch.request_id = "r" + std::to_string(next_request_++);
    o.worker->send(std::move(o.dispatch));
    o.dispatch = Dispatch();
  };
  // Candidates go one at a time to the least-loaded worker that replays them
  // (fewest in flight for its max_in_flight), so a batch is measured on every
  // worker of its key at once: a worker times its candidates one after
  // another, so filling one worker first would leave the others idle.
  // Candidates no worker can take now stay queued, in their order.
  std::deque<std::string> skipped;
  while (open_workers > 0 && !queue.empty()) {
    std::string cid = std::move(queue.front());
    queue.pop_front();
    auto p = pending_.find(cid);
    if (p == pending_.end()) continue;  // answered or abandoned meanwhile
    Outgoing* best = nullptr;
    for (Outgoing& o : out) {
      const int load = int(o.worker->in_flight.size()), cap = o.worker->info.max_in_flight;
      if (load >= cap || !Replays(o.worker->info, p->second.needs, p->second.annotations)) continue;
      if (best == nullptr) {
        best = &o;
        continue;
      }
      // load / cap < best_load / best_cap, in integers; on a tie the larger
      // worker, then the first in id order.
      const int best_load = int(best->worker->in_flight.size()), best_cap = best->worker->info.max_in_flight;
      const int64_t lhs = int64_t(load) * best_cap, rhs = int64_t(best_load) * cap;
      if (lhs < rhs || (lhs == rhs && cap > best_cap)) best = &o;
    }
    if (best == nullptr) {
      skipped.push_back(std::move(cid));
      continue;
    }
    // One request carries candidates of one batch: they share options.
    if (best->batch != nullptr && p->second.batch != best->batch) flush(*best);
    best->batch = p->second.batch;
    best->dispatch.options = best->batch->options;
    best->dispatch.inputs.push_back(p->second.input);
    p->second.holders.insert(best->worker->id);
    best->worker->in_flight.insert(cid);
    if (int(best->worker->in_flight.size()) >= best->worker->info.max_in_flight) --open_workers;
  }
  for (Outgoing& o : out) flush(o);
  queue.insert(queue.begin(), skipped.begin(), skipped.end());
  AnswerUnreplayableLocked(device_key);
}

namespace {

// Why no worker of `workers` replays a candidate: the first of its
// instructions, then of its annotation keys, that none of them knows;
// else (each known somewhere, never all in one) the first one some worker
// lacks. For its error message: "the trace instruction 'pad_input'".
std::string UnknownTo(const std::vector<const WorkerInfo*>& workers, const std::set<std::string>& instructions,
                      const std::set<std::string>& annotations) {
  struct Kind {
    const char* what;
    const std::set<std::string>& needs;
    std::set<std::string> WorkerInfo::*known;
  };
  const Kind kinds[] = {{"trace instruction", instructions, &WorkerInfo::trace_instructions},
                        {"loop annotation", annotations, &WorkerInfo::loop_annotations}};
  auto lacks = [](const WorkerInfo* w, const Kind& k, const std::string& n) {
    const std::set<std::string>& known = w->*k.known;
    return !known.empty() && known.count(n) == 0;
  };
  for (bool by_all : {true, false}) {
    for (const Kind& k : kinds) {
      for (const std::string& n : k.needs) {
        auto lacking = [&](const WorkerInfo* w) { return lacks(w, k, n); };
        if (by_all ? std::all_of(workers.begin(), workers.end(), lacking)
                   : std::any_of(workers.begin(), workers.end(), lacking)) {
          return std::string(k.what) + " '" + n + "'";
        }
      }
    }
  }
  return "trace";  // not reached: some worker lacks some name, or it would replay the trace
}

}  // namespace

void FleetDispatcher::AnswerUnreplayableLocked(const std::string& device_key) {
  std::vector<const WorkerInfo*> workers;
  std::string worker_ids;
  for (const auto& [id, w] : workers_) {
    if (w->info.device_key != device_key) continue;
    workers.push_back(&w->info);
    worker_ids += (worker_ids.empty() ? "" : ", ") + id;
  }
  if (workers.empty()) return;  // no worker yet: candidates wait, as for any key
  const auto now = Clock::now();
  std::deque<std::string>& queue = queues_[device_key];
  for (auto it = queue.begin(); it != queue.end();) {
    auto p = pending_.find(*it);
    if (p == pending_.end() || std::any_of(workers.begin(), workers.end(), [&](const WorkerInfo* w) {
          return Replays(*w, p->second.needs, p->second.annotations);
        })) {
      if (p != pending_.end()) p->second.unreplayable_since.reset();
      ++it;
      continue;
    }
    // An upgraded worker may be back within the grace (a restart, a lease
    // renewed): the answer is recorded for good, so it waits first.
    if (!p->second.unreplayable_since) p->second.unreplayable_since = now;
    if (now - *p->second.unreplayable_since < unreplayable_grace_) {
      ++it;
      continue;
    }
    MeasureResult& slot = p->second.batch->results[p->second.index];
    slot.candidate_id = p->second.input.candidate_id;
    slot.error = MeasureErrorKind::kInvalidCandidate;
    slot.error_message = "no connected worker of device key '" + device_key + "' replays the " +
                         UnknownTo(workers, p->second.needs, p->second.annotations) + " (" +
                         std::to_string(workers.size()) + " connected: " + worker_ids + "; none for " +
                         (unreplayable_grace_ >= std::chrono::seconds(1)
                              ? std::to_string(unreplayable_grace_.count() / 1000) + " s"
                              : std::to_string(unreplayable_grace_.count()) + " ms") +
                         "; a worker of an older tunefarm knows fewer instructions and annotations: upgrade it)";
    slot.worker = "tuner";
    --p->second.batch->remaining;
    pending_.erase(p);
    it = queue.erase(it);
    done_cv_.notify_all();
  }
}

std::vector<MeasureResult> FleetDispatcher::Measure(const std::string& device_key,
                                                    const std::vector<MeasureInput>& inputs,
                                                    const MeasureOptions& options, const std::atomic<bool>* abort) {
  Batch batch;
  batch.results.resize(inputs.size());
  batch.remaining = inputs.size();
  batch.options = options;
  // Parsed before taking the lock: every worker's results wait on it.
  std::vector<TraceNeeds> needs;
  for (const MeasureInput& in : inputs) needs.push_back(NeedsOf(in));
  std::unique_lock<std::mutex> lock(mu_);
  auto& queue = queues_[device_key];
  for (size_t i = 0; i < inputs.size(); ++i) {
    Pending p;
    p.input = inputs[i];
    p.batch = &batch;
    p.index = i;
    p.device_key = device_key;
    p.needs = std::move(needs[i].instructions);
    p.annotations = std::move(needs[i].annotations);
    if (!pending_.emplace(inputs[i].candidate_id, std::move(p)).second) {
      // Two pending candidates with one id would share a result: refuse.
      batch.results[i].candidate_id = inputs[i].candidate_id;
      batch.results[i].error = MeasureErrorKind::kInvalidCandidate;
      batch.results[i].error_message = "candidate id '" + inputs[i].candidate_id + "' is already being measured";
      --batch.remaining;
      continue;
    }
    queue.push_back(inputs[i].candidate_id);
  }
  DispatchLocked(device_key);
  while (batch.remaining > 0) {
    if (abort && abort->load()) {
      // Late answers for these find nothing pending and are dropped.
      for (const MeasureInput& in : inputs) {
        auto p = pending_.find(in.candidate_id);
        if (p != pending_.end() && p->second.batch == &batch) pending_.erase(p);
      }
      return {};
    }
    done_cv_.wait_for(lock, std::chrono::milliseconds(50));
    AnswerUnreplayableLocked(device_key);  // a grace may have run out
  }
  return std::move(batch.results);
}

}  // namespace tunefarm::daemon
