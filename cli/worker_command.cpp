// `tunefarm worker`: a measurement worker that dials the tuner daemon and
// measures what it is sent, until SIGINT/SIGTERM. Its flags, checks and run
// loop are the worker's own (worker_flags.h), shared with the lean board
// worker `tunefarm-worker`.
#include <memory>

#include "commands.h"
#include "tunefarm/worker/worker_flags.h"

namespace tunefarm::cli {

static_assert(kWorkerExitOk == kExitOk && kWorkerExitUsage == kExitUserError &&
              kWorkerExitInternal == kExitInternalError);

void AddWorkerCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<WorkerFlags>();
  CLI::App* cmd = app.add_subcommand("worker", "Measure candidates for a tuner daemon (dials it; runs until stopped)");
  static const WorkerProgram program{
      "tunefarm worker",
      "Dials the tuner daemon (so a machine behind NAT can join), registers this machine's device\n"
      "key and hardware, and measures the candidates it is sent: each is built and run in an isolated\n"
      "runner process (a crash or hang costs one candidate), timed, and checked against the reference.\n"
      "Results go back to the tuner, which records them; the worker keeps no database. It reconnects\n"
      "by itself (backoff up to 5 s) when the tuner restarts or the network drops, and re-sends results\n"
      "measured meanwhile. SIGINT/SIGTERM stop it once the batch being measured is sent."};
  AddWorkerFlags(*cmd, *flags, program);
  cmd->callback([flags, exit_code] { *exit_code = RunWorker(*flags, program); });
}

}  // namespace tunefarm::cli
