// `tunefarm serve`: the tuner daemon. Accepts jobs over gRPC, holds the
// worker fleet, answers compile requests from the tuning log. SIGTERM or
// Ctrl-C drains: batches in flight finish and are recorded, then it exits;
// unfinished jobs resume when it starts again on the same log.
#include <csignal>
#include <filesystem>

#include <fmt/core.h>

#include "commands.h"
#include "tunefarm/rpc/fleet_config.h"
#include "tunefarm/daemon/daemon.h"

namespace tunefarm::cli {

namespace {

struct ServeFlags {
  std::string config;
  std::string listen, db, configs;
  bool insecure = false;
};

int Serve(const ServeFlags& f) {
  rpc::FleetConfig config;
  if (!f.config.empty()) {
    auto loaded = rpc::LoadFleetConfig(f.config);
    if (!loaded.ok()) {
      fmt::print(stderr, "error: {}\n", loaded.status().message());
      return kExitUserError;
    }
    config = std::move(loaded).value();
  }
  if (!f.listen.empty()) config.listen = f.listen;
  if (!f.db.empty()) config.db = f.db;
  if (f.insecure) config.security.insecure = true;
  if (!f.configs.empty()) config.config_dir = f.configs;
  if (config.config_dir.empty()) config.config_dir = DefaultConfigDir();
  if (!config.config_dir.empty()) config.config_dir = std::filesystem::absolute(config.config_dir).string();
  if (Status st = rpc::ValidateFleetConfig(config); !st.ok()) {
    fmt::print(stderr, "error: {}{}\n", f.config.empty() ? "" : f.config + ": ", st.message());
    return kExitUserError;
  }
  // Signals are taken synchronously by this thread (sigwait), so they must be
  // blocked before gRPC and the job threads start: threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  daemon::Daemon daemon(config);
  if (Status st = daemon.Start(); !st.ok()) {
    fmt::print(stderr, "error: {}\n", st.message());
    return st.code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
  }
  // One line on stdout that scripts (and tests) can wait for.
  fmt::print("tunefarm serve: listening on port {}\n", daemon.port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  fmt::print(stderr, "tunefarm serve: {} received, draining\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  daemon.Drain();
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "Run the tuner daemon: jobs, the worker fleet, compile requests");
  cmd->footer(
      "Listens for jobs (`tunefarm jobs`), workers (`tunefarm worker`) and compile requests on one\n"
      "port. Every measurement is committed to the tuning log (--db) as it arrives; a daemon that is\n"
      "killed and started again on the same log resumes its unfinished jobs, and workers reconnect\n"
      "by themselves. TLS is the default (configure [tls] in the config file: CA, certificate and key;\n"
      "workers need certificates from that CA with the worker role, URI SAN tunefarm:role=worker,\n"
      "clients a certificate without it or a bearer token from [auth] client_tokens; docs/fleet.md).\n"
      "Plaintext only with --insecure, and only on a loopback address.\n"
      "SIGTERM or Ctrl-C drains: batches in flight finish and are recorded, then it exits.\n\n"
      "Examples:\n"
      "  tunefarm serve --config configs/fleet.toml\n"
      "  tunefarm serve --insecure --listen 127.0.0.1:7878 --db farm.db    (one machine, no TLS)");
  cmd->add_option("--config", f->config, "Fleet configuration (TOML; see configs/fleet.toml)")->check(CLI::ExistingFile);
  cmd->add_option("--listen", f->listen, "Address to listen on (overrides [server] listen)");
  cmd->add_option("--db", f->db, "Tuning log (overrides [server] db)");
  cmd->add_option("--configs", f->configs, "Folder with sketch rule sets (default: ./configs or the installed one)");
  cmd->add_flag("--insecure", f->insecure, "Plaintext on a loopback address (no TLS)");
  cmd->callback([f, exit_code] { *exit_code = Serve(*f); });
}

}  // namespace tunefarm::cli
