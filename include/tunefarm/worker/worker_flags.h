// The command line of a measurement worker, shared by `tunefarm worker` (the
// CLI's subcommand) and `tunefarm-worker` (the lean board worker, built
// without LLVM): the same flags, checks, messages and run loop, so the two
// never drift apart. Each program adds the flags to its CLI11 command and
// calls RunWorker from the command's callback.
//
// Exit codes: 0 stopped by SIGINT/SIGTERM, 1 a usage or configuration error
// (bad flags, unreadable files, a tuner address or device key the tuner
// would refuse), 2 an internal error.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace tunefarm {

inline constexpr int kWorkerExitOk = 0;
inline constexpr int kWorkerExitUsage = 1;
inline constexpr int kWorkerExitInternal = 2;

// The flags as given; numbers stay text until RunWorker checks them, so a
// typo gets the worker's message, not CLI11's.
struct WorkerFlags {
  std::string tuner;
  std::string device = "cpu";
  std::string device_key;
  std::string hostname;
  std::string max_in_flight = "16";
  std::string ca, cert, key, token_file;
  bool insecure = false;
  std::string runner_launcher;  // words, split at spaces (LocalMeasurerOptions::runner_launcher)
  std::string inject_faults;    // TEST ONLY
  std::string inject_every;     // TEST ONLY
  std::string test_latency_ms;  // TEST ONLY
};

// How a program presents the worker in --help and in its messages.
struct WorkerProgram {
  std::string command;  // what users type: "tunefarm worker", "tunefarm-worker"
  std::string about;    // the --help footer's first paragraph
};

// Adds the worker's flags and its --help footer (`program.about`, then
// security, examples and exit codes) to `cmd`. `flags` must outlive `cmd`.
void AddWorkerFlags(CLI::App& cmd, WorkerFlags& flags, const WorkerProgram& program);

// Checks `flags`, starts the fleet worker and measures until SIGINT/SIGTERM
// (a second signal leaves at once). Errors go to stderr, naming the flag and
// pointing at `<command> --help`. Returns the exit code.
int RunWorker(const WorkerFlags& flags, const WorkerProgram& program);

}  // namespace tunefarm
