// An ARM board in the fleet, emulated: the lean worker built for arm64
// (scripts/lean-worker-build.sh arm64) runs under qemu-aarch64 beside an x86
// `tunefarm worker`, each on its own device key, both over mutual TLS to one
// x86 daemon. The daemon builds the board's candidates (fleet.toml
// [builders] tuner_built); the board loads, checks and times them. Both
// jobs complete with every record checked, the board's records name an
// AArch64 target and a fingerprint marked emulated, and are themselves marked
// emulated (so that a lookup for the board's target answers with one only
// where nothing real is, and says so); a board killed mid-job
// leaves its candidates to be measured again when a board returns.
//
// Run by the LeanWorker.Arm64 test after it has built the arm64 worker
// (tests/CMakeLists.txt), which passes TUNEFARM_ARM64_WORKER and
// TUNEFARM_ARM64_SYSROOT; ctest lists the discovered copy as disabled, so it
// never runs before the worker exists. Without them it fails, naming them.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <thread>

#include "fleet_harness.h"
#include "tunefarm/database/database.h"

namespace tunefarm::fleet_test {
namespace {

constexpr const char* kBoardKey = "arm64-emulated";

// `name` found on PATH, or "" (the harness spawns programs by path).
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t begin = 0; begin <= dirs.size();) {
    size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(dirs.substr(begin, end - begin)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    begin = end + 1;
  }
  return "";
}
constexpr const char* kHostKey = "cpu-x86";

class Arm64Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* worker = std::getenv("TUNEFARM_ARM64_WORKER");
    const char* sysroot = std::getenv("TUNEFARM_ARM64_SYSROOT");
    ASSERT_TRUE(worker != nullptr && sysroot != nullptr && fs::exists(worker) && fs::exists(sysroot))
        << "set TUNEFARM_ARM64_WORKER (build-arm64/lean/worker/tunefarm-worker) and TUNEFARM_ARM64_SYSROOT "
           "(build-arm64/sysroot): scripts/lean-worker-build.sh arm64 builds both and runs this test";
    worker_ = worker;
    sysroot_ = sysroot;
    qemu_ = OnPath("qemu-aarch64");
    ASSERT_FALSE(qemu_.empty()) << "qemu-aarch64 is not on PATH: scripts/setup.sh installs qemu-user";
    dir_ = fs::temp_directory_path() / ("tunefarm_arm64_fleet_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    MakeTlsMaterial(dir_);
    port_ = FreePort();
    db_ = dir_ / "farm.db";
    DaemonOptions dopt;
    dopt.lease_ms = 20000;  // an emulated board answers slowly
    dopt.extra_toml = std::string("[builders]\ntuner_built = [\"") + kBoardKey + "\"]\nbuild_threads = 2\n";
    daemon_ = StartDaemon(WriteFleetConfig(dir_, port_, db_, dopt), dir_ / "daemon.log");
    sec_ = ClientCreds(dir_, true, "client-token-0123456789");
    stub_ = TunerStub(port_, sec_);
  }
  void TearDown() override {
    board_.reset();
    host_.reset();
    daemon_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // The arm64 worker under qemu; its runner is started through qemu too
  // (this machine has no binfmt_misc entry for AArch64). Both emulate a
  // Neoverse-N1 (NEON and dot products, a Graviton2): qemu's default "max"
  // CPU has 512-bit SVE, the board then offers -sve-bits=512, and SVE code
  // emulates slowly enough that candidates time out on a loaded 2-core
  // machine. SVE programs are checked by sketch_sve_qemu_test.cpp.
  std::unique_ptr<Child> StartBoard(const std::string& log) {
    WorkerOptions o;
    o.device = "cpu";
    o.device_key = kBoardKey;
    o.max_in_flight = 8;
    o.command = {qemu_, "-cpu", "neoverse-n1", "-L", sysroot_, worker_};
    o.extra = {"--runner-launcher", qemu_ + " -cpu neoverse-n1 -L " + sysroot_};
    return StartWorker(dir_, port_, o, dir_ / log);
  }
  std::unique_ptr<Child> StartHostWorker() {
    WorkerOptions o;
    o.device = "cpu";
    o.device_key = kHostKey;
    return StartWorker(dir_, port_, o, dir_ / "host.log");
  }
  int Workers() {
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 5);
    v1::FleetStatusResponse resp;
    (void)stub_->FleetStatus(&ctx, {}, &resp);
    return resp.workers_size();
  }
  bool WaitForWorkers(int n) {
    for (int i = 0; i < 600 && Workers() != n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return Workers() == n;
  }
  // Each job its own workload, so that its records are its own.
  grpc::Status Submit(const std::string& id, const std::string& key, int trials, v1::Job* job) {
    v1::SubmitJobRequest req;
    req.add_workloads(key == kHostKey ? SmallMatmul(20, 24, 16) : SmallMatmul(24, 20, 16));
    req.set_device_key(key);
    req.set_trials(trials);
    req.set_batch_size(8);
    req.set_job_id(id);
    req.mutable_measure()->set_repeat(2);
    req.mutable_measure()->set_min_repeat_ms(1);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec_, 10);
    return stub_->SubmitJob(&ctx, req, job);
  }
  v1::Job WaitDone(const std::string& id, double timeout_s) {
    return WaitForJob(*stub_, sec_, id, timeout_s,
                      [](const v1::Job& j) { return j.status() == "done" || j.status() == "failed"; });
  }
  std::vector<database::TuningRecord> Records(const std::string& hash) { return ReadRecords(db_, hash); }
  std::string Logs() {
    std::string s = "--- daemon\n" + daemon_->Log();
    if (host_) s += "--- x86 worker\n" + host_->Log();
    if (board_) s += "--- arm64 worker\n" + board_->Log();
    return s.substr(s.size() > 20000 ? s.size() - 20000 : 0);
  }

  std::string worker_, sysroot_, qemu_;
  fs::path dir_, db_;
  int port_ = 0;
  std::unique_ptr<Child> daemon_, host_, board_;
  rpc::ClientSecurity sec_;
  std::unique_ptr<v1::Tuner::Stub> stub_;
};

TEST_F(Arm64Fleet, DISABLED_AnEmulatedBoardAndAnX86WorkerEachCompleteTheirJob) {
  host_ = StartHostWorker();
  board_ = StartBoard("board.log");
  ASSERT_TRUE(WaitForWorkers(2)) << Logs();
  v1::Job host_job, board_job;
  ASSERT_TRUE(Submit("on-x86", kHostKey, 16, &host_job).ok());
  ASSERT_TRUE(Submit("on-arm64", kBoardKey, 16, &board_job).ok());
  host_job = WaitDone("on-x86", 300);
  board_job = WaitDone("on-arm64", 600);
  ASSERT_EQ(host_job.status(), "done") << host_job.error() << "\n" << Logs();
  ASSERT_EQ(board_job.status(), "done") << board_job.error() << "\n" << Logs();

  const std::vector<database::TuningRecord> board = Records(board_job.tasks(0).workload_hash());
  ASSERT_GE(board.size(), 16u) << Logs();
  int board_ok = 0, board_x86 = 0;
  std::optional<database::TuningRecord> board_measured;
  for (const database::TuningRecord& r : board) {
    board_x86 += r.target.fingerprint.isa == "x86_64";
    if (r.target.fingerprint.isa != "aarch64") continue;
    // Checked against the interpreter on the board: no wrong result.
    EXPECT_NE(r.error_kind, database::ErrorKind::kWrongResult) << r.error_msg;
    board_ok += r.ok();
    EXPECT_NE(r.target.target.find("aarch64"), std::string::npos) << r.target.target;
    const std::string& arch = r.target.fingerprint.arch;
    EXPECT_TRUE(arch.size() > 9 && arch.substr(arch.size() - 9) == "-emulated") << "fingerprint arch " << arch;
    // The record itself says it was measured under emulation.
    EXPECT_TRUE(r.emulated) << "record " << r.uid;
    if (r.ok() && !board_measured) board_measured = r;
  }
  EXPECT_EQ(board_x86, 0) << "an x86 worker measured the board's job";
  EXPECT_GE(board_ok, 12) << Logs();
  int host_ok = 0;
  for (const database::TuningRecord& r : Records(host_job.tasks(0).workload_hash())) {
    EXPECT_EQ(r.target.fingerprint.isa, "x86_64");
    EXPECT_FALSE(r.emulated) << "the x86 worker's record " << r.uid;
    host_ok += r.ok();
  }
  EXPECT_GE(host_ok, 12) << Logs();

  // What `tunefarm compile --target <the board's target>` asks on this x86
  // machine: the board's CPU, this machine's cores and toolchain. Only
  // emulated records are there, so one is the answer, and it says so.
  ASSERT_TRUE(board_measured) << Logs();
  database::OpenOptions read_only;
  read_only.read_only = true;
  auto log = database::Database::Open(db_.string(), read_only);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  database::Target asking = board_measured->target;
  asking.fingerprint.arch = std::string(RealArch(asking.fingerprint.arch));
  asking.fingerprint.cores = 1024;
  asking.fingerprint.toolchain = "llvm-16 lowering-r0";
  auto best = (*log)->GetBest(board_measured->workload_hash, asking);
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  ASSERT_TRUE(best->record) << "the board's emulated records are the only ones for its target";
  EXPECT_EQ(best->level, database::FallbackLevel::kSameArch);
  EXPECT_TRUE(best->record->emulated);
  EXPECT_EQ(best->record->target.fingerprint.isa, "aarch64");
}

TEST_F(Arm64Fleet, DISABLED_ABoardKilledMidJobLeavesItsCandidatesToTheNextBoard) {
  board_ = StartBoard("board0.log");
  ASSERT_TRUE(WaitForWorkers(1)) << Logs();
  v1::Job job;
  ASSERT_TRUE(Submit("killed", kBoardKey, 24, &job).ok());
  // Kill the board once it has measured something, mid-job.
  for (int i = 0; i < 1200; ++i) {
    job = WaitForJob(*stub_, sec_, "killed", 1, [](const v1::Job&) { return true; });
    if (job.trials_done() >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_GE(job.trials_done(), 4) << Logs();
  ASSERT_LT(job.trials_done(), 24) << "the job ended before the board could be killed";
  board_->Kill(SIGKILL);
  board_ = StartBoard("board1.log");
  job = WaitDone("killed", 600);
  ASSERT_EQ(job.status(), "done") << job.error() << "\n" << Logs();
  const std::vector<database::TuningRecord> records = Records(job.tasks(0).workload_hash());
  ASSERT_GE(records.size(), 24u);
  std::set<std::string> uids;
  int ok = 0;
  for (const database::TuningRecord& r : records) {
    EXPECT_TRUE(uids.insert(r.uid).second) << "record " << r.uid << " stored twice";
    EXPECT_NE(r.error_kind, database::ErrorKind::kWrongResult) << r.error_msg;
    ok += r.ok();
  }
  EXPECT_GE(ok, 16) << Logs();
}

}  // namespace
}  // namespace tunefarm::fleet_test
