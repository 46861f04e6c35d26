// RunnerProcess: one tunefarm-runner child, seen from the parent.
//
// Started with posix_spawn (never fork: the parent has threads), with a Unix
// stream socket as its protocol channel on fd 3, stdin from /dev/null, and
// stdout and stderr captured into a bounded tail that error messages quote.
// All waits take a deadline; nothing here blocks without one.
//
// Ownership: the object owns the child. Destroying it SIGKILLs the child (if
// still running) and reaps it, so no zombie survives it; the runner also exits
// by itself when this process dies. Callers must still be ready to find it
// gone between uses (Alive()): anything may kill a process.
// Not thread-safe: one owner thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol.h"
#include "tunefarm/common/status.h"

namespace tunefarm {

class RunnerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Spawns `path --channel-fd 3`, or `launcher... path --channel-fd 3` when
  // `launcher` is given (its first word an absolute path, or a program
  // found on PATH); `extra_env` entries ("NAME=value") are added to (or
  // replace those of) this process's environment.
  static Result<std::unique_ptr<RunnerProcess>> Start(const std::string& path,
                                                      const std::vector<std::string>& extra_env,
                                                      const std::vector<std::string>& launcher = {});
  ~RunnerProcess();
  RunnerProcess(const RunnerProcess&) = delete;
  RunnerProcess& operator=(const RunnerProcess&) = delete;

  // Writes one framed message, giving up at the deadline or if the child is gone.
  Status Send(const nlohmann::json& message, Clock::time_point deadline);

  enum class Outcome { kMessage, kTimeout, kClosed, kCorrupt };
  struct Received {
    Outcome outcome = Outcome::kTimeout;
    nlohmann::json message;  // kMessage
    std::string error;       // kCorrupt
  };
  // The next message, or why none came before the deadline.
  Received Receive(Clock::time_point deadline);

  // False once the child has exited (checked without blocking).
  bool Alive();
  // SIGKILLs (if needed) and reaps the child; describes how it ended, e.g.
  // "killed by signal SIGSEGV (Segmentation fault)" or "exited with status 3".
  // After the channel closed, gives the child a moment to exit on its own first.
  std::string Stop(bool wait_briefly_first = false);
  // The last few KiB the child wrote to stdout/stderr.
  std::string OutputTail() const { return output_tail_; }
  pid_t pid() const { return pid_; }

 private:
  RunnerProcess() = default;
  void DrainOutput();
  static std::string Describe(int wait_status);

  pid_t pid_ = -1;
  int channel_fd_ = -1;  // our end of the socket (non-blocking)
  int output_fd_ = -1;   // read end of the child's stdout/stderr pipe (non-blocking)
  bool reaped_ = false;
  std::string exit_description_;
  std::string output_tail_;  // bounded to kTailBytes
  worker_protocol::FrameDecoder decoder_;
};

}  // namespace tunefarm
