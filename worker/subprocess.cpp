// Spawning, talking to and reaping tunefarm-runner. Every wait is a poll()
// with a deadline: a runner that hangs must never hang the tuner.
#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

extern char** environ;

namespace tunefarm {
namespace {

constexpr size_t kTailBytes = 4096;
constexpr int kChildChannelFd = 3;

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int PollTimeoutMs(RunnerProcess::Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - RunnerProcess::Clock::now()).count();
  return int(std::clamp<int64_t>(left + 1, 0, 1 << 30));  // +1: never wake just before the deadline
}

// Closes fds on scope exit unless released (the spawn error paths).
struct FdGuard {
  std::vector<int> fds;
  ~FdGuard() {
    for (int fd : fds) {
      if (fd >= 0) ::close(fd);
    }
  }
};

}  // namespace

Result<std::unique_ptr<RunnerProcess>> RunnerProcess::Start(const std::string& path,
                                                            const std::vector<std::string>& extra_env,
                                                            const std::vector<std::string>& launcher) {
  if (::access(path.c_str(), X_OK) != 0) return Status::NotFound(Errno(("runner '" + path + "'").c_str()));
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return Status::IOError(Errno("socketpair"));
  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return Status::IOError(Errno("pipe2"));
  }
  FdGuard guard{{sv[0], sv[1], out_pipe[0], out_pipe[1]}};
  // Move the child's ends above the standard fds, so the dup2 actions below
  // can never overwrite one source with another.
  int child_channel = ::fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
  int child_output = ::fcntl(out_pipe[1], F_DUPFD_CLOEXEC, 10);
  guard.fds.push_back(child_channel);
  guard.fds.push_back(child_output);
  if (child_channel < 0 || child_output < 0) return Status::IOError(Errno("fcntl"));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, child_output, 1);
  posix_spawn_file_actions_adddup2(&actions, child_output, 2);
  posix_spawn_file_actions_adddup2(&actions, child_channel, kChildChannelFd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // The child starts with no blocked signals and default SIGPIPE handling,
  // whatever the tuner's threads have set.
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv;
  }
  for (const std::string& kv : extra_env) env[kv.substr(0, kv.find('='))] = kv;
  std::vector<std::string> env_strings;
  for (auto& [name, kv] : env) env_strings.push_back(kv);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string fd_arg = std::to_string(kChildChannelFd);
  std::vector<std::string> args_storage = launcher;
  args_storage.insert(args_storage.end(), {path, "--channel-fd", fd_arg});
  std::vector<char*> argv;
  for (auto& s : args_storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = -1;
  // A launcher's first word may be a bare name: posix_spawnp looks it up on PATH.
  const std::string& program = launcher.empty() ? path : launcher.front();
  int rc = launcher.empty() ? posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data())
                            : posix_spawnp(&pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::IOError("posix_spawn '" + program + "': " + std::strerror(rc));

  std::unique_ptr<RunnerProcess> p(new RunnerProcess());
  p->pid_ = pid;
  p->channel_fd_ = sv[0];
  p->output_fd_ = out_pipe[0];
  guard.fds = {sv[1], out_pipe[1], child_channel, child_output};  // ours stay open
  ::fcntl(p->channel_fd_, F_SETFL, ::fcntl(p->channel_fd_, F_GETFL) | O_NONBLOCK);
  ::fcntl(p->output_fd_, F_SETFL, ::fcntl(p->output_fd_, F_GETFL) | O_NONBLOCK);
  return p;
}

RunnerProcess::~RunnerProcess() {
  Stop();
  if (channel_fd_ >= 0) ::close(channel_fd_);
  if (output_fd_ >= 0) ::close(output_fd_);
}

void RunnerProcess::DrainOutput() {
  char buf[4096];
  while (output_fd_ >= 0) {
    ssize_t n = ::read(output_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) {  // the child closed its output: stop polling it
        ::close(output_fd_);
        output_fd_ = -1;
      }
      return;
    }
    output_tail_.append(buf, size_t(n));
    if (output_tail_.size() > kTailBytes) output_tail_.erase(0, output_tail_.size() - kTailBytes);
  }
}

Status RunnerProcess::Send(const nlohmann::json& message, Clock::time_point deadline) {
  std::string bytes;
  worker_protocol::AppendFrame(message, bytes);
  size_t done = 0;
  while (done < bytes.size()) {
    // MSG_NOSIGNAL: a dead child is an EPIPE here, not a SIGPIPE for the tuner.
    ssize_t n = ::send(channel_fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Status::IOError(Errno("sending to the runner"));
    // Full socket: wait for room, draining the child's output meanwhile so
    // that neither side blocks on the other.
    pollfd fds[2] = {{channel_fd_, POLLOUT, 0}, {output_fd_, POLLIN, 0}};
    int rc = ::poll(fds, output_fd_ >= 0 ? 2 : 1, PollTimeoutMs(deadline));
    if (rc < 0 && errno != EINTR) return Status::IOError(Errno("poll"));
    if (rc == 0) return Status::Timeout("the runner did not read its request in time");
    if (output_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) DrainOutput();
  }
  return Status::OK();
}

RunnerProcess::Received RunnerProcess::Receive(Clock::time_point deadline) {
  Received r;
  char buf[1 << 16];
  while (true) {
    if (auto message = decoder_.Next()) {
      if (!message->ok()) {
        r.outcome = Outcome::kCorrupt;
        r.error = message->status().message();
      } else {
        r.outcome = Outcome::kMessage;
        r.message = std::move(message->value());
      }
      return r;
    }
    pollfd fds[2] = {{channel_fd_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
    int rc = ::poll(fds, output_fd_ >= 0 ? 2 : 1, PollTimeoutMs(deadline));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) {
      r.outcome = Outcome::kCorrupt;
      r.error = Errno("poll");
      return r;
    }
    if (output_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) DrainOutput();
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(channel_fd_, buf, sizeof buf);
      if (n > 0) {
        decoder_.Append(buf, size_t(n));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        r.outcome = Outcome::kClosed;
        return r;
      }
    }
    if (rc == 0 && Clock::now() >= deadline) {
      r.outcome = Outcome::kTimeout;
      return r;
    }
  }
}

bool RunnerProcess::Alive() {
  if (reaped_) return false;
  int status = 0;
  pid_t rc = ::waitpid(pid_, &status, WNOHANG);
  if (rc == pid_) {
    reaped_ = true;
    exit_description_ = Describe(status);
    return false;
  }
  return true;
}

std::string RunnerProcess::Stop(bool wait_briefly_first) {
  if (reaped_ || pid_ < 0) return exit_description_;
  if (wait_briefly_first) {
    // The channel closed: the child is dying; let it finish so that its exit
    // status (the signal that killed it) is the real one, not our SIGKILL.
    auto until = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < until && Alive()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (reaped_) {
      DrainOutput();
      return exit_description_;
    }
  }
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  DrainOutput();
  exit_description_ = Describe(status);
  return exit_description_;
}

std::string RunnerProcess::Describe(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* abbrev = sigabbrev_np(sig);
    std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
    return "killed by signal " + name + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

}  // namespace tunefarm
