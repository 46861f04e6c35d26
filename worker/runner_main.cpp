// tunefarm-runner: the long-lived measuring child of LocalMeasurer.
//
// Usage: tunefarm-runner --channel-fd N   (LocalMeasurer passes N = 3)
// It is started with posix_spawn, never by hand; it serves batches on the
// channel until the parent closes it, and exits soon after the parent dies.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "runner.h"

namespace tunefarm::runner {

void Channel::Send(const nlohmann::json& message) {
  std::string bytes;
  worker_protocol::AppendFrame(message, bytes);
  std::lock_guard<std::mutex> lock(send_mutex_);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    // The parent is gone or the socket broke: nobody is left to answer.
    if (n <= 0) std::_Exit(0);
    done += size_t(n);
  }
}

std::optional<Result<nlohmann::json>> Channel::Receive() {
  char buf[1 << 16];
  while (true) {
    if (auto message = decoder_.Next()) return message;
    ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    decoder_.Append(buf, size_t(n));
  }
}

}  // namespace tunefarm::runner

int main(int argc, char** argv) {
  using namespace tunefarm;
  int channel_fd = -1;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--channel-fd") == 0) channel_fd = std::atoi(argv[i + 1]);
  }
  if (channel_fd < 0 || ::fcntl(channel_fd, F_GETFD) < 0) {
    std::fprintf(stderr, "tunefarm-runner: started without a channel; it is run by tunefarm, not by hand\n");
    return 2;
  }
  // Die with the parent, even if it is SIGKILLed: no orphaned runners. Not
  // PR_SET_PDEATHSIG: it fires when the parent *thread* that spawned us ends,
  // and the tuner may call Measure from short-lived threads. A watchdog that
  // notices re-parenting costs one wake-up per 250 ms.
  const pid_t parent = ::getppid();
  std::thread([parent] {
    while (true) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (::getppid() != parent) std::_Exit(0);
    }
  }).detach();
  // The parent writes to a socket, not a pipe, so it never gets SIGPIPE from
  // us; we ignore SIGPIPE so a vanished parent is a failed write, then exit.
  ::signal(SIGPIPE, SIG_IGN);
  // Ctrl-C in a terminal (or `timeout -s INT`) reaches the whole process
  // group: the parent stops after the batch in flight, which needs this
  // runner to finish it, not to die and be recorded as a kernel that crashed.
  ::signal(SIGINT, SIG_IGN);
  // Anything the compiler or LLVM prints goes to stdout/stderr, which the
  // parent captures; the protocol has its own fd, so stray output cannot
  // corrupt it.
  const char* faults = std::getenv(worker_protocol::kTestFaultsEnv);
  bool test_faults = faults != nullptr && std::strcmp(faults, "1") == 0;

  runner::Channel channel(channel_fd);
  channel.Send({{"type", "hello"}, {"version", worker_protocol::kProtocolVersion}, {"pid", int(::getpid())}});
  // The device to measure cuda targets on ("cuda:N"); LocalMeasurer checked the name.
  const char* device = std::getenv(worker_protocol::kRunnerDeviceEnv);
  runner::Session session(channel, test_faults, device != nullptr && *device ? device : "cpu");
  while (true) {
    auto message = channel.Receive();
    if (!message) return 0;  // parent closed the channel: done
    if (!message->ok()) {
      std::fprintf(stderr, "tunefarm-runner: %s\n", message->status().ToString().c_str());
      return 3;
    }
    const nlohmann::json& request = message->value();
    std::string type;
    try {
      type = request.value("type", "");
    } catch (const nlohmann::json::exception&) {
      type = "(not a string)";
    }
    if (type == "batch") {
      session.HandleBatch(request);
    } else if (type == "ping") {
      channel.Send({{"type", "pong"}});
    } else if (type == "exit") {
      return 0;
    } else {
      channel.Send({{"type", "error"}, {"message", "unknown request type '" + type + "'"}});
    }
  }
}
