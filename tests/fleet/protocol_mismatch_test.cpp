// A worker that dials a daemon in the other protocol -- plaintext (--insecure)
// to a TLS daemon, or TLS to a plaintext one -- says so and exits 1 instead of
// retrying forever; and the probe behind it tells TLS, plaintext and a closed
// port apart.
#include <gtest/gtest.h>

#include <chrono>

#include "fleet_harness.h"
#include "tunefarm/rpc/tls_probe.h"

namespace tunefarm::fleet_test {
namespace {

using std::chrono::milliseconds;

class ProtocolMismatch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() / ("tunefarm_protocol_" + std::to_string(::getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_ / "plain");
    MakeTlsMaterial(*dir_);
    tls_port_ = FreePort();
    tls_daemon_ = StartDaemon(WriteFleetConfig(*dir_, tls_port_, *dir_ / "tls.db", DaemonOptions{}),
                              *dir_ / "tls-daemon.log")
                      .release();
    DaemonOptions plain;
    plain.tls = false;
    plain_port_ = FreePort();
    plain_daemon_ = StartDaemon(WriteFleetConfig(*dir_ / "plain", plain_port_, *dir_ / "plain.db", plain),
                                *dir_ / "plain-daemon.log")
                        .release();
  }
  static void TearDownTestSuite() {
    delete tls_daemon_;
    delete plain_daemon_;
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string Addr(int port) { return "127.0.0.1:" + std::to_string(port); }

  static fs::path* dir_;
  static int tls_port_;
  static int plain_port_;
  static Child* tls_daemon_;
  static Child* plain_daemon_;
};

fs::path* ProtocolMismatch::dir_ = nullptr;
int ProtocolMismatch::tls_port_ = 0;
int ProtocolMismatch::plain_port_ = 0;
Child* ProtocolMismatch::tls_daemon_ = nullptr;
Child* ProtocolMismatch::plain_daemon_ = nullptr;

TEST_F(ProtocolMismatch, TheProbeTellsTlsFromPlaintextFromNothing) {
  EXPECT_EQ(rpc::ProbePortProtocol(Addr(tls_port_), milliseconds(3000)), rpc::PortProtocol::kTls);
  EXPECT_EQ(rpc::ProbePortProtocol("localhost:" + std::to_string(tls_port_), milliseconds(3000)),
            rpc::PortProtocol::kTls);
  EXPECT_EQ(rpc::ProbePortProtocol(Addr(plain_port_), milliseconds(3000)), rpc::PortProtocol::kPlaintext);
  EXPECT_EQ(rpc::ProbePortProtocol(Addr(FreePort()), milliseconds(3000)), rpc::PortProtocol::kUnknown);
  EXPECT_EQ(rpc::ProbePortProtocol("no-port-here", milliseconds(3000)), rpc::PortProtocol::kUnknown);
}

TEST_F(ProtocolMismatch, APlaintextWorkerToATlsDaemonSaysSoAndExits) {
  WorkerOptions o;
  o.tls = false;
  auto worker = StartWorker(*dir_, tls_port_, o, *dir_ / "plain-worker.log");
  int code = worker->Wait(30);
  std::string log = worker->Log();
  EXPECT_EQ(code, 1) << log;
  EXPECT_NE(log.find("speaks TLS, and this worker dials in plaintext (--insecure)"), std::string::npos) << log;
  EXPECT_NE(log.find("--ca"), std::string::npos) << log;
}

TEST_F(ProtocolMismatch, ATlsWorkerToAPlaintextDaemonSaysSoAndExits) {
  auto worker = StartWorker(*dir_, plain_port_, WorkerOptions{}, *dir_ / "tls-worker.log");
  int code = worker->Wait(30);
  std::string log = worker->Log();
  EXPECT_EQ(code, 1) << log;
  EXPECT_NE(log.find("does not speak TLS"), std::string::npos) << log;
}

TEST_F(ProtocolMismatch, AWorkerWaitingForADaemonNotYetUpKeepsRetrying) {
  // Nothing listens on the port: that is a daemon not started yet, not a
  // mismatch, so the worker keeps dialling.
  WorkerOptions o;
  o.tls = false;
  auto worker = StartWorker(*dir_, FreePort(), o, *dir_ / "waiting-worker.log");
  EXPECT_EQ(worker->Wait(2), -1) << worker->Log();
  EXPECT_TRUE(worker->Alive());
}

}  // namespace
}  // namespace tunefarm::fleet_test
