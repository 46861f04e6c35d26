// Why a pre-scan: a command's positional (e.g. `tune`'s workload files) takes
// the value of a mistyped option and fails its own check first, so CLI11
// would report `--trails 8` as "workloads: File does not exist: 8".
#include "cli/argument_errors.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/commands.h"

namespace tunefarm::cli {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// Every long name ("--trials") of `command`'s options.
std::vector<std::string> LongNames(const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  }
  return names;
}

std::string CommandPath(const CLI::App* command) {
  std::string path;
  // The root's name is only set from argv[0] while parsing, which has not run.
  for (const CLI::App* c = command; c != nullptr; c = c->get_parent()) {
    std::string name = c->get_parent() == nullptr ? "tunefarm" : c->get_name();
    path = name + (path.empty() ? "" : " " + path);
  }
  return path;
}

}  // namespace

std::optional<std::string> UnknownOptionError(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* command = &app;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;  // the rest are positionals
    if (arg.rfind("--", 0) != 0) {
      // A subcommand's name moves the scan into it; anything else is a value.
      CLI::App* sub = nullptr;
      try {
        sub = command->get_subcommand(arg);
      } catch (const CLI::OptionNotFound&) {
        sub = nullptr;
      }
      if (sub != nullptr) command = sub;
      continue;
    }
    std::string name = arg.substr(0, arg.find('='));
    std::vector<std::string> known = LongNames(*command);
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string message = "unknown option " + name + " for `" + CommandPath(command) + "`";
    auto closest = std::min_element(known.begin(), known.end(), [&](const std::string& a, const std::string& b) {
      return EditDistance(name, a) < EditDistance(name, b);
    });
    if (closest != known.end() && EditDistance(name, *closest) <= std::max<size_t>(2, name.size() / 4)) {
      message += "; did you mean " + *closest + "?";
    }
    return message + "\nRun `" + CommandPath(command) + " --help` for its options.";
  }
  return std::nullopt;
}

int ParseAndRun(CLI::App& app, int argc, char** argv, const int* exit_code) {
  if (auto unknown = UnknownOptionError(app, argc, argv)) {
    std::fprintf(stderr, "error: %s\n", unknown->c_str());
    return kExitUserError;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version are "errors" with exit code 0; CLI11 prints them.
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUserError;
  }
  return *exit_code;
}

}  // namespace tunefarm::cli
