// Real processes on loopback for the fleet's end-to-end tests: a TLS
// material generator (openssl), `tunefarm serve` and `tunefarm worker`
// children, and gRPC clients with chosen credentials.
//
// Every child is SIGKILLed and reaped when its Child object is destroyed, so
// a failing test leaves no daemon or worker behind.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/database/record.h"
#include "tunefarm/rpc/security.h"
#include "tunefarm/v1/fleet.grpc.pb.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::fleet_test {

namespace fs = std::filesystem;

// A child process with its stdout and stderr in a log file.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const fs::path& log);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }
  bool Alive();
  void Kill(int sig);      // sends sig; SIGKILL also reaps
  int Wait(double timeout_s);  // exit code, 128+signal, or -1 on timeout
  std::string Log() const;

 private:
  pid_t pid_ = -1;
  fs::path log_;
  bool reaped_ = false;
  int status_ = 0;
};

// CA, server and client certificates made by openssl in `dir`:
// ca.pem, server.pem/.key (127.0.0.1, localhost), worker.pem/.key (the
// worker role, URI SAN tunefarm:role=worker), client.pem/.key (the client
// role), plain.pem/.key (no role, as issued before roles: a client only), and
// other-ca.pem with rogue.pem/.key (the worker role) signed by it.
void MakeTlsMaterial(const fs::path& dir);

std::string TunefarmBinary();
// A port free on 127.0.0.1 right now.
int FreePort();

struct DaemonOptions {
  bool tls = true;
  std::vector<std::string> client_tokens = {"client-token-0123456789"};
  std::vector<std::string> worker_tokens = {"worker-token-0123456789"};
  int heartbeat_ms = 200;
  int lease_ms = 1500;
  double drain_timeout_s = 10;
  std::string extra_toml;  // appended to fleet.toml as is (more sections, e.g. [builders])
};

// Writes fleet.toml in `dir` for a daemon on `port` logging to `db`.
fs::path WriteFleetConfig(const fs::path& dir, int port, const fs::path& db, const DaemonOptions& o);

// Starts `tunefarm serve --config` and waits until it listens (or fails the test).
std::unique_ptr<Child> StartDaemon(const fs::path& config, const fs::path& log);

struct WorkerOptions {
  std::string device = "test";
  std::string device_key = "test-key";
  int max_in_flight = 4;
  bool tls = true;
  bool with_cert = true;
  std::vector<std::string> extra;  // more flags
  // The worker program and its leading words (e.g. qemu-aarch64 -L SYSROOT
  // tunefarm-worker); empty: `tunefarm worker` of this build.
  std::vector<std::string> command;
};
std::unique_ptr<Child> StartWorker(const fs::path& dir, int port, const WorkerOptions& o, const fs::path& log);

// Client stubs with chosen credentials.
rpc::ClientSecurity ClientCreds(const fs::path& dir, bool tls, const std::string& token,
                                const std::string& ca = "ca.pem", const std::string& cert = "");
std::unique_ptr<v1::Tuner::Stub> TunerStub(int port, const rpc::ClientSecurity& sec);

// A small matmul in the workload language.
std::string SmallMatmul(int m = 32, int n = 32, int k = 32);

// Every record of `workload_hash` in the log at `db`, opened read-only, in
// commit order (a failure to read is a test failure).
std::vector<database::TuningRecord> ReadRecords(const fs::path& db, const std::string& workload_hash);

// Polls GetJob until `pred` holds or `timeout_s` passes; returns the last job.
v1::Job WaitForJob(v1::Tuner::Stub& stub, const rpc::ClientSecurity& sec, const std::string& id, double timeout_s,
                   const std::function<bool(const v1::Job&)>& pred);

}  // namespace tunefarm::fleet_test
