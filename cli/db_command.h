// `tunefarm db ...`: inspect, export, import, merge and prune tuning logs.
#pragma once

#include <CLI/CLI.hpp>

namespace tunefarm::cli {

// Adds the `db` subcommand (stats, best, top, export, import, merge, prune) to
// `app`. Its callbacks store the exit code in *exit_code (0 ok, 1 user error,
// 2 internal error); `exit_code` must outlive app.parse().
void AddDbCommand(CLI::App& app, int* exit_code);

}  // namespace tunefarm::cli
