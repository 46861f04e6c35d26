// Argument errors of the `tunefarm` command line, reported the way a person
// can act on: a mistyped option is named with the closest real one of the
// command it was given to (before CLI11 would blame a later positional for
// it), and every parse error exits 1 (kExitUserError), as README promises.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace tunefarm::cli {

// The first long option in argv that the (sub)command it follows does not
// know, as an error message with a suggestion; nullopt when every one is
// known. Values are not inspected: "--opt=value" is checked as "--opt".
std::optional<std::string> UnknownOptionError(CLI::App& app, int argc, const char* const* argv);

// Parses argv: help and --version exit 0, every argument error prints its
// message (and the way to the command's help) and returns kExitUserError;
// otherwise the subcommand's callback ran and *exit_code is returned.
int ParseAndRun(CLI::App& app, int argc, char** argv, const int* exit_code);

}  // namespace tunefarm::cli
