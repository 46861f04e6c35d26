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
  TF_ASSIGN_OR_RETURN(runner_, RunnerProcess::Start(path, env));
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

void LocalMeasurer::RunRound(const std::vector<MeasureInput>& inputs, const MeasureOptions& options, Round& round) {
  json request = {{"type", "batch"}, {"options", worker_protocol::ToJson(options)}};
  int threads = options_.build_threads > 0 ? options_.build_threads : int(std::max(1u, std::thread::hardware_concurrency()));
  request["build_threads"] = round.serial_builds ? 1 : threads;
  json& candidates = request["candidates"] = json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (round.done[i]) continue;
    json c = worker_protocol::ToJson(inputs[i]);
    c["index"] = int(i);
    candidates.push_back(std::move(c));
  }
  auto finish = [&](int index, MeasureErrorKind kind, std::string message) {
    if (index < 0 || size_t(index) >= inputs.size() || round.done[size_t(index)]) return;
    MeasureResult& r = round.results[size_t(index)];
    r.error = kind;
    r.error_message = std::move(message);
    r.repeat_seconds.clear();
    round.done[size_t(index)] = true;
    round.progress = true;
  };
  auto last_event = Clock::now();
  if (Status s = runner_->Send(request, After(last_event, options_.idle_timeout_s)); !s.ok()) {
    round.failure = WithTail("sending the batch: " + s.message() + " (runner " + runner_->Stop() + ")",
                             runner_->OutputTail());
    DropRunner();
    return;
  }

  // What the runner owes us now, and since when (parent's clock).
  std::map<int, Clock::time_point> builds;
  int run_index = -1, reference_index = -1;
  Clock::time_point run_start, reference_start;
  while (true) {
    Clock::time_point deadline = After(last_event, options_.idle_timeout_s);
    if (!builds.empty() || run_index >= 0 || reference_index >= 0) deadline = Clock::time_point::max();
    for (const auto& [index, start] : builds) deadline = std::min(deadline, After(start, options.build_timeout_s));
    if (run_index >= 0) deadline = std::min(deadline, After(run_start, options.run_timeout_s));
    if (reference_index >= 0) deadline = std::min(deadline, After(reference_start, options.build_timeout_s));

    RunnerProcess::Received got = runner_->Receive(deadline);
    auto now = Clock::now();
    if (got.outcome == RunnerProcess::Outcome::kMessage) {
      last_event = now;
      const json& m = got.message;
      std::string type;
      int index = -1;
      try {
        type = m.value("type", "");
        index = m.value("index", -1);
      } catch (const json::exception&) {
        type = "malformed";  // ignored below; a runner bug, not worth a crash here
      }
      if (type == "build_start") {
        builds[index] = now;
      } else if (type == "build_done") {
        builds.erase(index);
        if (index >= 0 && size_t(index) < inputs.size()) {
          round.results[size_t(index)].build_seconds = m.value("build_seconds", 0.0);
        }
      } else if (type == "reference_start") {
        reference_index = index;
        reference_start = now;
      } else if (type == "reference_done") {
        reference_index = -1;
      } else if (type == "run_start") {
        run_index = index;
        run_start = now;
      } else if (type == "result") {
        builds.erase(index);
        if (run_index == index) run_index = -1;
        if (index >= 0 && size_t(index) < inputs.size() && !round.done[size_t(index)]) {
          MeasureResult r = worker_protocol::ResultFromJson(m);
          r.candidate_id = inputs[size_t(index)].candidate_id;
          round.results[size_t(index)] = std::move(r);
          round.done[size_t(index)] = true;
          round.progress = true;
        }
      } else if (type == "batch_done") {
        // Anything unanswered in a finished batch is a runner bug, not the candidate's.
        for (const auto& c : candidates) {
          finish(c["index"].get<int>(), MeasureErrorKind::kWorkerLost, "the runner finished the batch without answering");
        }
        return;
      } else if (type == "error") {
        round.failure = "runner error: " + m.value("message", "");
      }
      continue;
    }

    if (got.outcome == RunnerProcess::Outcome::kTimeout) {
      std::string how;
      if (run_index >= 0 && now >= After(run_start, options.run_timeout_s)) {
        finish(run_index, MeasureErrorKind::kTimeout,
               "run (checked run and " + std::to_string(options.repeat) + " timed groups) exceeded run_timeout_s = " +
                   FormatSeconds(options.run_timeout_s));
      }
      if (reference_index >= 0 && now >= After(reference_start, options.build_timeout_s)) {
        // Every candidate of that workload would wait as long: fail them together.
        const std::string& text = inputs[size_t(reference_index)].workload_text;
        for (size_t i = 0; i < inputs.size(); ++i) {
          if (inputs[i].workload_text == text) {
            finish(int(i), MeasureErrorKind::kTimeout,
                   "computing the reference output exceeded build_timeout_s = " + FormatSeconds(options.build_timeout_s));
          }
        }
      }
      for (const auto& [index, start] : builds) {
        if (now >= After(start, options.build_timeout_s)) {
          finish(index, MeasureErrorKind::kTimeout, "build exceeded build_timeout_s = " + FormatSeconds(options.build_timeout_s));
        }
      }
      round.failure = "the runner stopped answering for " + FormatSeconds(options_.idle_timeout_s);
      DropRunner();  // SIGKILL, reap; the next round starts a fresh runner
      return;
    }

    // The channel closed or broke: the runner died. Blame what it was doing.
    std::string exit = runner_->Stop(/*wait_briefly_first=*/true);
    std::string tail = runner_->OutputTail();
    if (got.outcome == RunnerProcess::Outcome::kCorrupt) exit = "sent a corrupt message (" + got.error + "); " + exit;
    if (run_index >= 0) {
      finish(run_index, MeasureErrorKind::kRuntimeError, WithTail("the kernel crashed the runner: " + exit, tail));
    } else if (reference_index >= 0) {
      finish(reference_index, MeasureErrorKind::kRuntimeError,
             WithTail("the runner crashed computing the reference output: " + exit, tail));
    } else if (builds.size() == 1) {
      finish(builds.begin()->first, MeasureErrorKind::kCompileError,
             WithTail("the runner crashed building this candidate: " + exit, tail));
    } else if (builds.size() > 1) {
      round.serial_builds = true;  // rebuild one at a time to find which one it was
    }
    round.failure = WithTail("runner " + exit, tail);
    runner_.reset();
    return;
  }
}

}  // namespace tunefarm
