// One machine has one hardware fingerprint whether it tunes locally or
// measures as a fleet worker: the fingerprint `tunefarm tune` keys its records
// by (tuner::RecordTarget) and the one the daemon keeps for a worker on the
// same machine (its Register message, through the Fleet service) are both
// HostFingerprint of the host target (compiler/target_fingerprint.h), and
// agree field by field. Only the toolchain differs for a test device, which
// builds nothing.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"
#include "tunefarm/database/record.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/tuner/tuning_loop.h"
#include "tunefarm/worker/fleet_worker.h"

namespace tunefarm::daemon {
namespace {

TEST(HostFingerprint, AWorkerRegistersWithTheFingerprintLocalTuningRecordsCarry) {
  const char* const kKey = "fingerprint-test";
  FleetDispatcher dispatcher;
  rpc::ServerSecurity security;
  security.insecure = true;
  FleetServiceImpl service(&dispatcher, security, rpc::FleetLimits());
  auto server = rpc::StartServer("127.0.0.1:0", security, 16 << 20, {&service});
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  FleetWorkerOptions o;
  o.tuner_address = "127.0.0.1:" + std::to_string(server->port);
  o.security.insecure = true;
  o.device = "test";
  o.device_key = kKey;
  o.hostname = "fingerprint-host";
  o.initial_backoff = std::chrono::milliseconds(50);
  o.log = [](std::string_view) {};
  auto created = FleetWorker::Create(std::move(o));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<FleetWorker> worker = std::move(created).value();
  std::thread thread([w = worker.get()] { (void)w->Run(); });

  for (int i = 0; i < 500 && dispatcher.WorkerCount(kKey) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::optional<database::HardwareFingerprint> registered;
  for (const WorkerSnapshot& w : dispatcher.Snapshot().workers) registered = dispatcher.WorkerFingerprint(w.worker_id);

  worker->Stop();
  thread.join();
  service.Shutdown();
  server->server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  server->server->Wait();

  ASSERT_TRUE(registered.has_value()) << "the worker never registered";
  const database::HardwareFingerprint local = tuner::RecordTarget(Target::Host()).fingerprint;
  EXPECT_EQ(local.toolchain, CodegenToolchain());
  EXPECT_EQ(registered->toolchain, database::kTestDeviceToolchain);
  database::HardwareFingerprint expected = local;
  expected.toolchain = std::string(database::kTestDeviceToolchain);
  EXPECT_EQ(*registered, expected) << "isa " << registered->isa << " vs " << local.isa << ", arch "
                                   << registered->arch << " vs " << local.arch << ", cores " << registered->cores
                                   << " vs " << local.cores << ", features " << registered->features.size()
                                   << " vs " << local.features.size();
  // Both are the one computation, sorted as the log keeps it.
  database::HardwareFingerprint host = HostFingerprint(Target::Host(), CodegenToolchain());
  database::CanonicalizeFingerprint(&host);
  EXPECT_EQ(local, host);
  EXPECT_FALSE(local.isa.empty());
  EXPECT_FALSE(local.arch.empty());
  EXPECT_GT(local.cores, 0);
}

}  // namespace
}  // namespace tunefarm::daemon
