// Runs a shell command for the end-to-end tests (tests/cli, tests/fleet) and
// returns its exit code and its stdout and stderr together.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace tunefarm::testing_support {

struct CommandOutput {
  int code = -1;     // exit code; -1 if it could not run or died by a signal
  std::string text;  // stdout and stderr together
};

inline CommandOutput RunCommand(const std::string& command) {
  CommandOutput out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.text.append(buf.data(), n);
  int status = pclose(p);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace tunefarm::testing_support
