// The daemon's configuration file (configs/fleet.toml documents every key).
//
//   [server]  listen, db, system_db, insecure, config_dir
//   [tls]     ca, cert, key                       (PEM paths, relative to the file)
//   [auth]    client_tokens, worker_tokens        (lists of bearer tokens)
//   [limits]  max_message_mib, max_in_flight_per_worker, heartbeat_ms, lease_ms,
//             compile_cache_entries, max_running_jobs, drain_timeout_s,
//             device_key_wait_s
//   [builders] tuner_built, build_threads         (device keys whose candidates the daemon compiles)
//
// Unknown keys and wrong types are errors naming the file, line and key, so a
// typo never silently weakens security.
#pragma once

#include <set>
#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/security.h"

namespace tunefarm::rpc {

struct FleetLimits {
  int max_message_bytes = 16 << 20;   // per request or response
  int max_in_flight_per_worker = 64;  // caps what a worker asks for
  int heartbeat_ms = 1000;            // workers send one at least this often
  int lease_ms = 6000;                // a worker silent this long is lost
  int compile_cache_entries = 256;
  int max_running_jobs = 8;
  double drain_timeout_s = 30;        // SIGTERM: how long in-flight batches may finish
  double device_key_wait_s = 600;     // a job whose device key no worker serves fails after this
};

// Where each device key's candidates are compiled. By default on the worker
// (its runner JIT-compiles them); device keys listed in tuner_built have their
// candidates compiled by the daemon, for the job's target, and the objects sent
// down (small boards, cross-compiled targets): tuner::TunerSideBuildMeasurer.
struct BuilderPlacement {
  std::set<std::string> tuner_built;  // device keys built on the tuner
  int build_threads = 0;              // daemon threads compiling one batch; 0: the number of CPUs
  bool TunerBuilt(const std::string& device_key) const { return tuner_built.count(device_key) > 0; }
};

struct FleetConfig {
  std::string listen = "127.0.0.1:7878";
  std::string db = "tunefarm.db";
  std::string system_db;
  std::string config_dir;  // sketch rule sets; empty: the installed configs/
  ServerSecurity security;
  FleetLimits limits;
  BuilderPlacement builders;
};

// Parses `path`. Relative file paths inside are resolved against its folder.
Result<FleetConfig> LoadFleetConfig(const std::string& path);
// Same, from text (`name` is used in messages; paths resolve against `base_dir`).
Result<FleetConfig> ParseFleetConfig(const std::string& text, const std::string& name, const std::string& base_dir);

// Checks a configuration is usable: TLS files given unless insecure, insecure
// only on loopback, limits in range.
Status ValidateFleetConfig(const FleetConfig& config);

}  // namespace tunefarm::rpc
