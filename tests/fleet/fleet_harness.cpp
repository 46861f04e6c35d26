// Child processes, TLS material and clients for the fleet tests (fleet_harness.h).
#include "fleet_harness.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "tunefarm/database/database.h"

extern char** environ;

namespace tunefarm::fleet_test {

Child::Child(const std::vector<std::string>& argv, const fs::path& log) : log_(log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
}

Child::~Child() {
  if (pid_ > 0 && !reaped_) Kill(SIGKILL);
}

bool Child::Alive() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    status_ = status;
    return false;
  }
  return true;
}

void Child::Kill(int sig) {
  if (pid_ <= 0 || reaped_) return;
  ::kill(pid_, sig);
  if (sig == SIGKILL) Wait(10);
}

int Child::Wait(double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (!reaped_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = status;
      break;
    }
    if (std::chrono::steady_clock::now() > end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status_)) return WEXITSTATUS(status_);
  if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
  return -1;
}

std::string Child::Log() const {
  std::ifstream in(log_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

void Run(const std::string& cmd) {
  int rc = std::system((cmd + " >/dev/null 2>&1").c_str());
  ASSERT_EQ(rc, 0) << "failed: " << cmd;
}

void Sign(const fs::path& dir, const std::string& ca, const std::string& name, const std::string& cn,
          const std::string& ext) {
  std::string d = dir.string() + "/";
  std::ofstream(d + name + ".ext") << ext;
  Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d + name + ".key -out " + d +
      name + ".csr -subj /CN=" + cn);
  Run("openssl x509 -req -in " + d + name + ".csr -CA " + d + ca + ".pem -CAkey " + d + ca + ".key -CAcreateserial -out " +
      d + name + ".pem -days 2 -extfile " + d + name + ".ext");
}

}  // namespace

void MakeTlsMaterial(const fs::path& dir) {
  std::string d = dir.string() + "/";
  for (std::string ca : {"ca", "other-ca"}) {
    Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout " + d + ca + ".key -out " +
        d + ca + ".pem -days 2 -subj /CN=tunefarm-test-" + ca);
  }
  const std::string server_ext =
      "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
      "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
  // The role is a URI subjectAltName (rpc/security.h): what docs/fleet.md
  // tells operators to issue.
  const std::string client_ext =
      "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n";
  const std::string worker_ext = client_ext + "subjectAltName=URI:tunefarm:role=worker\n";
  const std::string user_ext = client_ext + "subjectAltName=URI:tunefarm:role=client\n";
  Sign(dir, "ca", "server", "localhost", server_ext);
  Sign(dir, "ca", "worker", "tunefarm-worker", worker_ext);
  Sign(dir, "ca", "client", "tunefarm-client", user_ext);
  Sign(dir, "ca", "plain", "tunefarm-plain", client_ext);  // no role: issued before roles existed
  Sign(dir, "other-ca", "rogue", "rogue-worker", worker_ext);
}

std::string TunefarmBinary() { return std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm"; }

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

fs::path WriteFleetConfig(const fs::path& dir, int port, const fs::path& db, const DaemonOptions& o) {
  fs::path path = dir / "fleet.toml";
  std::ofstream out(path);
  auto list = [](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", \"" : "\"") + v[i] + "\"";
    return s + "]";
  };
  out << "[server]\nlisten = \"127.0.0.1:" << port << "\"\ndb = \"" << db.string() << "\"\n"
      << "config_dir = \"" << TUNEFARM_SOURCE_DIR << "/configs\"\n"
      << "insecure = " << (o.tls ? "false" : "true") << "\n";
  if (o.tls) out << "[tls]\nca = \"ca.pem\"\ncert = \"server.pem\"\nkey = \"server.key\"\n";
  out << "[auth]\nclient_tokens = " << list(o.client_tokens) << "\nworker_tokens = " << list(o.worker_tokens) << "\n"
      << "[limits]\nheartbeat_ms = " << o.heartbeat_ms << "\nlease_ms = " << o.lease_ms
      << "\ndrain_timeout_s = " << o.drain_timeout_s << "\n"
      << o.extra_toml;
  return path;
}

std::unique_ptr<Child> StartDaemon(const fs::path& config, const fs::path& log) {
  auto child = std::make_unique<Child>(std::vector<std::string>{TunefarmBinary(), "serve", "--config", config.string()}, log);
  for (int i = 0; i < 600; ++i) {
    if (child->Log().find("listening on port") != std::string::npos) return child;
    if (!child->Alive()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << "the daemon did not start:\n" << child->Log();
  return child;
}

std::unique_ptr<Child> StartWorker(const fs::path& dir, int port, const WorkerOptions& o, const fs::path& log) {
  std::vector<std::string> argv = o.command;
  if (argv.empty()) argv = {TunefarmBinary(), "worker"};
  argv.insert(argv.end(), {"--tuner", "127.0.0.1:" + std::to_string(port), "--device", o.device, "--device-key",
                           o.device_key, "--max-in-flight", std::to_string(o.max_in_flight)});
  if (o.tls) {
    argv.insert(argv.end(), {"--ca", (dir / "ca.pem").string()});
    if (o.with_cert) argv.insert(argv.end(), {"--cert", (dir / "worker.pem").string(), "--key", (dir / "worker.key").string()});
  } else {
    argv.push_back("--insecure");
    std::ofstream(dir / "worker.token") << "worker-token-0123456789\n";
    argv.insert(argv.end(), {"--token-file", (dir / "worker.token").string()});
  }
  argv.insert(argv.end(), o.extra.begin(), o.extra.end());
  return std::make_unique<Child>(argv, log);
}

rpc::ClientSecurity ClientCreds(const fs::path& dir, bool tls, const std::string& token, const std::string& ca,
                                const std::string& cert) {
  rpc::ClientSecurity s;
  s.insecure = !tls;
  if (tls) s.ca = (dir / ca).string();
  if (!cert.empty()) {
    s.cert = (dir / (cert + ".pem")).string();
    s.key = (dir / (cert + ".key")).string();
  }
  s.token = token;
  return s;
}

std::unique_ptr<v1::Tuner::Stub> TunerStub(int port, const rpc::ClientSecurity& sec) {
  auto channel = rpc::MakeChannel("127.0.0.1:" + std::to_string(port), sec);
  EXPECT_TRUE(channel.ok()) << channel.status().ToString();
  return v1::Tuner::NewStub(*channel);
}

std::string SmallMatmul(int m, int n, int k) {
  return "workload mm(M = " + std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) +
         ") {\n  A = input f32[M, K]\n  B = input f32[K, N]\n  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
}

v1::Job WaitForJob(v1::Tuner::Stub& stub, const rpc::ClientSecurity& sec, const std::string& id, double timeout_s,
                   const std::function<bool(const v1::Job&)>& pred) {
  v1::Job job;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 5);
    v1::GetJobRequest req;
    req.set_job_id(id);
    if (stub.GetJob(&ctx, req, &job).ok() && pred(job)) return job;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return job;
}

std::vector<database::TuningRecord> ReadRecords(const fs::path& db, const std::string& workload_hash) {
  database::OpenOptions o;
  o.read_only = true;
  auto opened = database::Database::Open(db.string(), o);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  std::vector<database::TuningRecord> out;
  if (!opened.ok()) return out;
  Status st = (*opened)->ForEachRecord({workload_hash, ""}, [&](const database::TuningRecord& r) {
    out.push_back(r);
    return Status::OK();
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

}  // namespace tunefarm::fleet_test
