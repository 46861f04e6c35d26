// LocalMeasurer: sends batches to tunefarm-runner and turns its event stream,
// its silences and its deaths into one result per candidate.
#include "tunefarm/worker/local_measurer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

#include "protocol.h"
#include "subprocess.h"
#include "tunefarm/worker/cuda_device.h"

namespace tunefarm {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

namespace {

constexpr const char* kRunnerName = "tunefarm-runner";
// A runner that dies this many times in a row without finishing a candidate
// is not going to: the rest of the batch is reported lost.
constexpr int kMaxFruitlessRounds = 3;

Clock::time_point After(Clock::time_point t, double seconds) {
  return t + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string FormatSeconds(double s) {
  std::ostringstream os;
  os << s << " s";
  return os.str();
}

std::string WithTail(std::string message, const std::string& tail) {
  if (tail.empty()) return message;
  std::string t = tail;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  if (t.size() > 1000) t = "..." + t.substr(t.size() - 1000);
  return message + "; runner output: " + t;
}

Status ValidateOptions(const MeasureOptions& o) {
  if (o.repeat < 1) return Status::InvalidArgument("measure options: repeat must be at least 1");
  if (o.number < 0) return Status::InvalidArgument("measure options: number must be 0 (automatic) or positive");
  if (!(o.min_repeat_ms >= 0)) return Status::InvalidArgument("measure options: min_repeat_ms must be >= 0");
  if (!(o.build_timeout_s > 0) || !(o.run_timeout_s > 0)) {
    return Status::InvalidArgument("measure options: build_timeout_s and run_timeout_s must be positive");
  }
  if (o.num_threads < 0) return Status::InvalidArgument("measure options: num_threads must be >= 0");
  return Status::OK();
}

Status ValidateDevice(const std::string& device) {
  if (device == "cpu") return Status::OK();
  auto index = ParseCudaDeviceIndex(device);
  if (!index.ok()) return Status::InvalidArgument("local measurer: " + index.status().message() + "; or cpu");
  return Status::OK();
}

}  // namespace

Result<std::string> FindRunnerPath() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("TUNEFARM_RUNNER"); env && *env) {
    if (::access(env, X_OK) == 0) return std::string(env);
    tried.push_back(std::string("$TUNEFARM_RUNNER=") + env);
  }
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / kRunnerName;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
    tried.push_back(beside.string());
  }
#ifdef TUNEFARM_RUNNER_BUILD_PATH
  if (::access(TUNEFARM_RUNNER_BUILD_PATH, X_OK) == 0) return std::string(TUNEFARM_RUNNER_BUILD_PATH);
  tried.push_back(TUNEFARM_RUNNER_BUILD_PATH);
#endif
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  return Status::NotFound("tunefarm-runner not found (tried " + list + "); set TUNEFARM_RUNNER");
}

// The state of one Measure call across runner rounds.
struct LocalMeasurer::Round {
  std::vector<MeasureResult> results;
  std::vector<bool> done;
  bool serial_builds = false;  // after a crash among parallel builds: find the culprit
  bool progress = false;       // a candidate finished in the last round
  std::string failure;         // why the last round ended early, if it did
};

LocalMeasurer::LocalMeasurer(LocalMeasurerOptions options) : options_(std::move(options)) {}
LocalMeasurer::~LocalMeasurer() = default;

int LocalMeasurer::runner_starts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runner_starts_;
}

int LocalMeasurer::runner_pid() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return runner_ ? int(runner_->pid()) : -1;
}

Status LocalMeasurer::EnsureRunner() {
  if (runner_ && runner_->Alive()) return Status::OK();
  runner_.reset();  // gone since the last call (e.g. its starting thread ended)
  std::string path = options_.runner_path;
  if (path.empty()) {
    TF_ASSIGN_OR_RETURN(path, FindRunnerPath());
  }
  std::vector<std::string> env;
  if (options_.enable_test_faults) env.push_back(std::string(worker_protocol::kTestFaultsEnv) + "=1");
  // Always set, so a TUNEFARM_RUNNER_DEVICE of this process's own environment is not inherited.
  env.push_back(std::string(worker_protocol::kRunnerDeviceEnv) + "=" + options_.device);
  TF_ASSIGN_OR_RETURN(runner_, RunnerProcess::Start(path, env, options_.runner_launcher));
  ++runner_starts_;
  return Status::OK();
}

void LocalMeasurer::DropRunner() {
  if (runner_) runner_->Stop();
  runner_.reset();
}

std::vector<MeasureResult> LocalMeasurer::Measure(const std::vector<MeasureInput>& inputs,
                                                  const MeasureOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  Round round;
  round.results.resize(inputs.size());
  round.done.assign(inputs.size(), false);
  for (size_t i = 0; i < inputs.size(); ++i) round.results[i].candidate_id = inputs[i].candidate_id;
  auto finish_all = [&](MeasureErrorKind kind, const std::string& message) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (round.done[i]) continue;
      round.results[i].error = kind;
      round.results[i].error_message = message;
      round.done[i] = true;
    }
  };
  if (Status s = ValidateDevice(options_.device); !s.ok()) {
    finish_all(MeasureErrorKind::kWorkerLost, s.message());
    return round.results;
  }
  if (Status s = ValidateOptions(options); !s.ok()) {
    finish_all(MeasureErrorKind::kInvalidCandidate, s.message());
    return round.results;
  }
  int fruitless = 0;
  while (std::find(round.done.begin(), round.done.end(), false) != round.done.end()) {
    if (Status s = EnsureRunner(); !s.ok()) {
      finish_all(MeasureErrorKind::kWorkerLost, "cannot start the runner: " + s.message());
      break;
    }
    round.progress = false;
    round.failure.clear();
    RunRound(inputs, options, round);
    fruitless = round.progress ? 0 : fruitless + 1;
    if (fruitless >= kMaxFruitlessRounds) {
      finish_all(MeasureErrorKind::kWorkerLost, "the runner failed " + std::to_string(fruitless) +
                                                    " times in a row without finishing a candidate; last: " +
                                                    round.failure);
    }
  }
  return round.results;
}

// One round: the batch's unfinished candidates sent to the runner, then its
// events until it finishes the batch, falls silent past a deadline or dies.
// What the runner owes at each moment (builds, a run, a reference) and since
// when (the parent's clock) decides the deadline and whom a death is blamed on.
class RunnerRound {
 public:
  RunnerRound(LocalMeasurer& measurer, const std::vector<MeasureInput>& inputs, const MeasureOptions& options,
              LocalMeasurer::Round& round)
      : measurer_(measurer), inputs_(inputs), options_(options), round_(round) {}

  // False when the batch could not be sent (the runner is dropped).
  bool SendBatch() {
    json request = {{"type", "batch"}, {"options", worker_protocol::ToJson(options_)}};
    int threads = measurer_.options_.build_threads > 0 ? measurer_.options_.build_threads
                                                       : int(std::max(1u, std::thread::hardware_concurrency()));
    request["build_threads"] = round_.serial_builds ? 1 : threads;
    json& candidates = request["candidates"] = json::array();
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (round_.done[i]) continue;
      json c = worker_protocol::ToJson(inputs_[i]);
      c["index"] = int(i);
      candidates.push_back(std::move(c));
      sent_.push_back(int(i));
    }
    last_event_ = Clock::now();
    RunnerProcess& runner = *measurer_.runner_;
    if (Status s = runner.Send(request, After(last_event_, measurer_.options_.idle_timeout_s)); !s.ok()) {
      round_.failure = WithTail("sending the batch: " + s.message() + " (runner " + runner.Stop() + ")",
                                runner.OutputTail());
      measurer_.DropRunner();
      return false;
    }
    return true;
  }

  // Idle timeout while the runner owes nothing; else the earliest deadline of
  // what it owes.
  Clock::time_point Deadline() const {
    Clock::time_point deadline = After(last_event_, measurer_.options_.idle_timeout_s);
    if (!builds_.empty() || run_index_ >= 0 || reference_index_ >= 0) deadline = Clock::time_point::max();
    for (const auto& [index, start] : builds_) deadline = std::min(deadline, After(start, options_.build_timeout_s));
    if (run_index_ >= 0) deadline = std::min(deadline, After(run_start_, options_.run_timeout_s));
    if (reference_index_ >= 0) deadline = std::min(deadline, After(reference_start_, options_.build_timeout_s));
    return deadline;
  }

  // Records one event; true when the batch is done.
  bool OnMessage(const json& m) {
    auto now = last_event_ = Clock::now();
    std::string type;
    int index = -1;
    try {
      type = m.value("type", "");
      index = m.value("index", -1);
    } catch (const json::exception&) {
      type = "malformed";  // ignored below; a runner bug, not worth a crash here
    }
    if (type == "build_start") {
      builds_[index] = now;
    } else if (type == "build_done") {
      builds_.erase(index);
      if (Known(index)) round_.results[size_t(index)].build_seconds = m.value("build_seconds", 0.0);
    } else if (type == "reference_start") {
      reference_index_ = index;
      reference_start_ = now;
    } else if (type == "reference_done") {
      reference_index_ = -1;
    } else if (type == "run_start") {
      run_index_ = index;
      run_start_ = now;
    } else if (type == "result") {
      builds_.erase(index);
      if (run_index_ == index) run_index_ = -1;
      if (Known(index) && !round_.done[size_t(index)]) {
        MeasureResult r = worker_protocol::ResultFromJson(m);
        r.candidate_id = inputs_[size_t(index)].candidate_id;
        round_.results[size_t(index)] = std::move(r);
        round_.done[size_t(index)] = true;
        round_.progress = true;
      }
    } else if (type == "batch_done") {
      // Anything unanswered in a finished batch is a runner bug, not the candidate's.
      for (int sent : sent_) Finish(sent, MeasureErrorKind::kWorkerLost, "the runner finished the batch without answering");
      return true;
    } else if (type == "error") {
      round_.failure = "runner error: " + m.value("message", "");
    }
    return false;
  }

  // Past a deadline: what is overdue fails with a timeout; the runner is killed
  // and the next round starts a fresh one.
  void OnSilence() {
    auto now = Clock::now();
    if (run_index_ >= 0 && now >= After(run_start_, options_.run_timeout_s)) {
      Finish(run_index_, MeasureErrorKind::kTimeout,
             "run (checked run and " + std::to_string(options_.repeat) + " timed groups) exceeded run_timeout_s = " +
                 FormatSeconds(options_.run_timeout_s));
    }
    if (reference_index_ >= 0 && now >= After(reference_start_, options_.build_timeout_s)) {
      // Every candidate of that workload would wait as long: fail them together.
      const std::string& text = inputs_[size_t(reference_index_)].workload_text;
      for (size_t i = 0; i < inputs_.size(); ++i) {
        if (inputs_[i].workload_text == text) {
          Finish(int(i), MeasureErrorKind::kTimeout,
                 "computing the reference output exceeded build_timeout_s = " + FormatSeconds(options_.build_timeout_s));
        }
      }
    }
    for (const auto& [index, start] : builds_) {
      if (now >= After(start, options_.build_timeout_s)) {
        Finish(index, MeasureErrorKind::kTimeout, "build exceeded build_timeout_s = " + FormatSeconds(options_.build_timeout_s));
      }
    }
    round_.failure = "the runner stopped answering for " + FormatSeconds(measurer_.options_.idle_timeout_s);
    measurer_.DropRunner();  // SIGKILL, reap
  }

  // The channel closed or broke: the runner died. Blame what it was doing.
  void OnRunnerExit(const RunnerProcess::Received& got) {
    RunnerProcess& runner = *measurer_.runner_;
    std::string exit = runner.Stop(/*wait_briefly_first=*/true);
    std::string tail = runner.OutputTail();
    if (got.outcome == RunnerProcess::Outcome::kCorrupt) exit = "sent a corrupt message (" + got.error + "); " + exit;
    if (run_index_ >= 0) {
      Finish(run_index_, MeasureErrorKind::kRuntimeError, WithTail("the kernel crashed the runner: " + exit, tail));
    } else if (reference_index_ >= 0) {
      Finish(reference_index_, MeasureErrorKind::kRuntimeError,
             WithTail("the runner crashed computing the reference output: " + exit, tail));
    } else if (builds_.size() == 1) {
      Finish(builds_.begin()->first, MeasureErrorKind::kCompileError,
             WithTail("the runner crashed building this candidate: " + exit, tail));
    } else if (builds_.size() > 1) {
      round_.serial_builds = true;  // rebuild one at a time to find which one it was
    }
    round_.failure = WithTail("runner " + exit, tail);
    measurer_.runner_.reset();
  }

 private:
  bool Known(int index) const { return index >= 0 && size_t(index) < inputs_.size(); }

  void Finish(int index, MeasureErrorKind kind, std::string message) {
    if (!Known(index) || round_.done[size_t(index)]) return;
    MeasureResult& r = round_.results[size_t(index)];
    r.error = kind;
    r.error_message = std::move(message);
    r.repeat_seconds.clear();
    round_.done[size_t(index)] = true;
    round_.progress = true;
  }

  LocalMeasurer& measurer_;
  const std::vector<MeasureInput>& inputs_;
  const MeasureOptions& options_;
  LocalMeasurer::Round& round_;
  std::vector<int> sent_;  // indices of the candidates in this round's batch
  Clock::time_point last_event_;
  std::map<int, Clock::time_point> builds_;  // building, since
  int run_index_ = -1, reference_index_ = -1;
  Clock::time_point run_start_, reference_start_;
};

void LocalMeasurer::RunRound(const std::vector<MeasureInput>& inputs, const MeasureOptions& options, Round& round) {
  RunnerRound conversation(*this, inputs, options, round);
  if (!conversation.SendBatch()) return;
  while (true) {
    RunnerProcess::Received got = runner_->Receive(conversation.Deadline());
    switch (got.outcome) {
      case RunnerProcess::Outcome::kMessage:
        if (conversation.OnMessage(got.message)) return;
        break;
      case RunnerProcess::Outcome::kTimeout:
        conversation.OnSilence();
        return;
      case RunnerProcess::Outcome::kClosed:
      case RunnerProcess::Outcome::kCorrupt:
        conversation.OnRunnerExit(got);
        return;
    }
  }
}

}  // namespace tunefarm
