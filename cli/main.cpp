// tunefarm: the command-line entry point. Each subcommand lives in its own file.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "argument_errors.h"
#include "commands.h"
#ifdef TUNEFARM_CLI_HAS_DB
#include "db_command.h"
#endif

int main(int argc, char** argv) {
  // Service logs (serve, worker) go to stderr, one line per event with a UTC
  // timestamp and level, so stdout stays for results scripts read.
  spdlog::set_default_logger(spdlog::stderr_color_mt("tunefarm"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  CLI::App app{
      "tunefarm " TUNEFARM_VERSION " - an auto-tuning compiler for tensor programs.\n\n"
      "Describe a tensor computation in the workload language (see configs/workloads/ and\n"
      "docs/workload-language.md); tunefarm lowers it to loop IR and compiles it with LLVM."};
  app.footer(
      "\nExamples:\n"
      "  tunefarm tune configs/workloads/gmm_512.tf --trials 200   tune, logging to tunefarm.db\n"
      "  tunefarm import resnet50.onnx                         an ONNX model's tuning tasks\n"
      "  tunefarm run configs/workloads/gmm_1024.tf            compile, check and time a workload\n"
      "  tunefarm run configs/workloads/gmm_1024.tf --threads 1\n"
      "  tunefarm show configs/workloads/softmax.tf --lowered  print the loop IR\n"
      "  tunefarm compile configs/workloads/dense_bias_relu.tf -o dense.o --header dense.h\n"
      "  tunefarm db stats --db tunefarm.db                    inspect a tuning log\n"
      "  tunefarm serve --config configs/fleet.toml            the tuner daemon (jobs, fleet, compile)\n"
      "  tunefarm jobs submit gmm_512.tf --device-key cpu-znver4 --watch   tune on the fleet\n"
      "  tunefarm worker --tuner tuner.lab:7878 --ca ca.pem --cert w.pem --key w.key   join the fleet\n\n"
      "Run `tunefarm <command> --help` for a command's options.");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(TUNEFARM_VERSION));
  int exit_code = 0;
  tunefarm::cli::AddTuneCommand(app, &exit_code);
  tunefarm::cli::AddRunCommand(app, &exit_code);
  tunefarm::cli::AddShowCommand(app, &exit_code);
  tunefarm::cli::AddCompileCommand(app, &exit_code);
  tunefarm::cli::AddServeCommand(app, &exit_code);
  tunefarm::cli::AddJobsCommand(app, &exit_code);
  tunefarm::cli::AddFleetCommand(app, &exit_code);
  tunefarm::cli::AddWorkerCommand(app, &exit_code);
  tunefarm::cli::AddImportCommand(app, &exit_code);
  tunefarm::cli::AddReportCommand(app, &exit_code);
#ifdef TUNEFARM_CLI_HAS_DB
  tunefarm::cli::AddDbCommand(app, &exit_code);
#endif
  return tunefarm::cli::ParseAndRun(app, argc, argv, &exit_code);
}
