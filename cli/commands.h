// Subcommands of the `tunefarm` binary. Each Add*Command registers a CLI11
// subcommand whose callback runs the command and stores its exit code.
// Exit codes: 0 success, 1 user error (bad input, failed check), 2 internal error.
#pragma once

#include <CLI/CLI.hpp>

namespace tunefarm::cli {

constexpr int kExitOk = 0;
constexpr int kExitUserError = 1;
constexpr int kExitInternalError = 2;

void AddRunCommand(CLI::App& app, int* exit_code);
void AddShowCommand(CLI::App& app, int* exit_code);
void AddCompileCommand(CLI::App& app, int* exit_code);
void AddTuneCommand(CLI::App& app, int* exit_code);
void AddServeCommand(CLI::App& app, int* exit_code);
void AddJobsCommand(CLI::App& app, int* exit_code);
void AddFleetCommand(CLI::App& app, int* exit_code);
void AddWorkerCommand(CLI::App& app, int* exit_code);
void AddImportCommand(CLI::App& app, int* exit_code);
void AddReportCommand(CLI::App& app, int* exit_code);

// Sketch rule sets: ./configs when it has them, else the installed copy.
std::string DefaultConfigDir();

}  // namespace tunefarm::cli
