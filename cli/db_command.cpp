// Argument parsing for `tunefarm db`; the work is done by the functions in
// tunefarm/database/db_commands.h, which the database tests call directly.
#include "cli/db_command.h"

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/database/db_commands.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::cli {
namespace {

using database::DbCommandOptions;

void AddDbOption(CLI::App* command, DbCommandOptions* options) {
  command->add_option("--db", options->db_path, "Tuning-log database file")->capture_default_str();
}

void AddQueryOptions(CLI::App* command, DbCommandOptions* options) {
  command->add_option("--workload", options->workload, "The workload: its structural hash, or its name when the log holds one workload of that name")->required();
  command
      ->add_option("--target", options->target,
                   "Target string, e.g. \"llvm\" (this host) or \"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4\"")
      ->required();
  command->add_option("--isa", options->fingerprint.isa, "Device ISA (x86_64, aarch64, cuda)");
  command->add_option("--arch", options->fingerprint.arch, "CPU model or GPU SM architecture (znver4, sm_90)");
  command->add_option("--features", options->fingerprint.features, "ISA features (avx512f,fma,...)")
      ->delimiter(',');
  command->add_option("--cores", options->fingerprint.cores, "Core count, or SM count for a GPU");
  command->add_option("--toolchain", options->fingerprint.toolchain, "Toolchain version (llvm-16, cuda-12.4)");
  command->add_flag("--json", options->json, "Print JSON instead of text");
}

// The log stores canonical target strings ("llvm" is stored as this host's
// full string), so --target is canonicalized as the TuningLog service does;
// with `host_device` and no --isa, the device is this host, as GetBest's is.
// False (after printing why) when the target does not parse.
bool CanonicalizeQuery(DbCommandOptions* options, bool host_device) {
  if (options->target.empty()) return true;
  auto target = Target::Parse(options->target);
  if (!target.ok()) {
    std::cerr << "error: --target '" << options->target << "': " << target.status().message() << "\n";
    return false;
  }
  options->target = target->ToString();
  if (host_device && options->fingerprint.isa.empty()) {
    options->fingerprint = tuner::KernelRecordTarget(*target, std::nullopt).fingerprint;
  }
  return true;
}

}  // namespace

void AddDbCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DbCommandOptions>();
  CLI::App* db = app.add_subcommand("db", "Inspect, export, import, merge and prune tuning logs");
  db->require_subcommand(1);
  db->footer(
      "\nExamples:\n"
      "  tunefarm db stats --db tunefarm.db\n"
      "  tunefarm db best --workload gmm_512 --target llvm      the kernel `tunefarm compile` would build here\n"
      "  tunefarm db top --workload gmm_512 --target llvm -k 5\n"
      "  tunefarm db export --db tunefarm.db -o log.jsonl; tunefarm db import log.jsonl --db other.db\n"
      "  tunefarm db merge board1.db board2.db --db farm.db\n"
      "  tunefarm db prune -k 5 --db tunefarm.db\n"
      "Format and fallback rules: docs/database.md");

  CLI::App* stats = db->add_subcommand("stats", "Count the workloads, targets, records and jobs in a tuning log");
  AddDbOption(stats, options.get());
  stats->add_flag("--json", options->json, "Print JSON instead of text");
  stats->callback([options, exit_code] { *exit_code = database::RunDbStats(*options, std::cout, std::cerr); });

  CLI::App* best = db->add_subcommand(
      "best",
      "Show the best record for a workload on a target: the fastest trace, ranked by the mean of its "
      "measurements, as its fastest record. Falls back from the same device "
      "(target string and fingerprint) to the same ISA and architecture, and says which level matched; "
      "the user database is asked before the system database");
  AddDbOption(best, options.get());
  options->system_db_path = database::DefaultSystemDatabasePath();
  best->add_option("--system-db", options->system_db_path, "Read-only system database (used when it exists)")
      ->capture_default_str();
  AddQueryOptions(best, options.get());
  best->callback([options, exit_code] {
    *exit_code = CanonicalizeQuery(options.get(), /*host_device=*/true)
                     ? database::RunDbBest(*options, std::cout, std::cerr)
                     : kExitUserError;
  });

  CLI::App* top = db->add_subcommand(
      "top",
      "List the k fastest traces for a workload on a target, each ranked by the mean of its measurements "
      "and shown as its fastest record (every device that ran the target "
      "string, or only the exact device when --isa is given)");
  AddDbOption(top, options.get());
  AddQueryOptions(top, options.get());
  top->add_option("-k", options->k, "How many records")->capture_default_str();
  top->callback([options, exit_code] {
    *exit_code = CanonicalizeQuery(options.get(), /*host_device=*/false)
                     ? database::RunDbTop(*options, std::cout, std::cerr)
                     : kExitUserError;
  });

  CLI::App* export_cmd = db->add_subcommand(
      "export", "Write a tuning log as JSON Lines (format in docs/database.md) to a file or stdout");
  AddDbOption(export_cmd, options.get());
  export_cmd->add_option("-o,--output", options->file, "Output file, - for stdout")->capture_default_str();
  export_cmd->add_option("--workload", options->workload, "Only this workload's records (structural hash, or a name unique in the log)");
  export_cmd->add_option("--target", options->target, "Only records for this target string");
  export_cmd->callback([options, exit_code] {
    *exit_code = CanonicalizeQuery(options.get(), /*host_device=*/false)
                     ? database::RunDbExport(*options, std::cout, std::cerr)
                     : kExitUserError;
  });

  CLI::App* import_cmd = db->add_subcommand(
      "import",
      "Add the records of a JSON Lines file to a tuning log (creating it if needed); records already "
      "present are skipped, and a bad line imports nothing");
  AddDbOption(import_cmd, options.get());
  import_cmd->add_option("input", options->file, "JSON Lines file, - for stdin")->required();
  import_cmd->callback(
      [options, exit_code] { *exit_code = database::RunDbImport(*options, std::cin, std::cout, std::cerr); });

  CLI::App* merge = db->add_subcommand(
      "merge", "Copy every workload and record of other tuning logs into --db; records already present are skipped");
  AddDbOption(merge, options.get());
  merge->add_option("sources", options->sources, "Databases to merge in (opened read-only)")->required();
  merge->callback([options, exit_code] { *exit_code = database::RunDbMerge(*options, std::cout, std::cerr); });

  CLI::App* prune = db->add_subcommand(
      "prune", "Keep every successful record of the k fastest traces per workload and target (a trace ranks by "
               "the mean of its measurements); delete the rest");
  AddDbOption(prune, options.get());
  prune->add_option("-k", options->k, "Traces to keep per workload and target")->required();
  prune->callback([options, exit_code] { *exit_code = database::RunDbPrune(*options, std::cout, std::cerr); });
}

}  // namespace tunefarm::cli
