// tunefarm-worker: the lean measurement worker for boards (ARM boards among
// them) that should not compile. Built with TUNEFARM_LEAN_WORKER, it links
// no LLVM, SQLite, XGBoost or ONNX: it dials the tuner daemon (gRPC, mutual
// TLS), loads the objects the daemon built for its device key (fleet.toml
// [builders] tuner_built), runs them in its runner process (tunefarm-runner,
// installed beside it), checks them against the reference interpreter and
// times them. The flags and run loop are `tunefarm worker`'s
// (worker_flags.h); docs/arm.md, "The lean worker", says how it is built.
#include <CLI/CLI.hpp>

#include "tunefarm/worker/worker_flags.h"

int main(int argc, char** argv) {
  using namespace tunefarm;
  const WorkerProgram program{
      "tunefarm-worker",
      "The lean measurement worker of a tunefarm fleet, for boards that should not compile: it builds\n"
      "no code. The tuner daemon builds every candidate for this worker's device key (fleet.toml:\n"
      "[builders] tuner_built = [\"<key>\"]; docs/arm.md); this worker loads those objects in an\n"
      "isolated runner process (tunefarm-runner, beside this program; a crash or hang costs one\n"
      "candidate), checks their outputs against the reference interpreter and times them. A\n"
      "candidate sent without an object fails as a compile error saying so.\n\n"
      "It dials the daemon (so a board behind NAT can join), registers its device key (default\n"
      "cpu-<the board's -mcpu>, with -emulated under qemu) and hardware, and sends results back; it\n"
      "keeps no database. It reconnects by itself (backoff up to 5 s) and re-sends results measured\n"
      "meanwhile. SIGINT/SIGTERM stop it once the batch being measured is sent."};
  CLI::App app{"tunefarm-worker: measures candidates the tuner daemon built for this board", "tunefarm-worker"};
  app.set_version_flag("--version", std::string("tunefarm-worker ") + TUNEFARM_VERSION);
  WorkerFlags flags;
  AddWorkerFlags(app, flags, program);
  int exit_code = kWorkerExitOk;
  app.callback([&] { exit_code = RunWorker(flags, program); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; real ones exit 1 (usage).
    int code = app.exit(e);
    return code == 0 ? kWorkerExitOk : kWorkerExitUsage;
  }
  return exit_code;
}
