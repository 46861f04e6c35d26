// `tunefarm jobs submit model.onnx` against a running daemon with one worker:
// the client imports the model and submits its tasks' workloads, each weighted
// by its calls; the job completes and `jobs get` shows each task's weight;
// the daemon stores the weights with the job; a model with more tasks than a
// job takes is refused before anything is sent; and the Tuner service refuses
// a bad weight naming its index.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <numeric>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "../run_command.h"
#include "fleet_harness.h"
#include "tunefarm/database/database.h"

namespace tunefarm::fleet_test {
namespace {

using Output = testing_support::CommandOutput;

Output RunCli(const std::string& args) { return testing_support::RunCommand(TunefarmBinary() + " " + args); }

std::string TestModel(const std::string& name) { return std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name + ".onnx"; }

// "model PATH: N tasks for its M calls": (N, M), or (-1, -1) when absent.
std::pair<int, int> TasksAndCalls(const std::string& text, const std::string& path) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex("model " + path + ": ([0-9]+) tasks for its ([0-9]+) calls"))) {
    return {-1, -1};
  }
  return {std::stoi(m[1].str()), std::stoi(m[2].str())};
}

// The spec the daemon stored with job `id` (JSON); null when there is none.
nlohmann::json StoredSpec(const fs::path& db_path, const std::string& id) {
  database::OpenOptions o;
  o.read_only = true;
  auto db = database::Database::Open(db_path.string(), o);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return nullptr;
  auto job = (*db)->GetJob(id);
  EXPECT_TRUE(job.ok() && job->has_value()) << id;
  if (!job.ok() || !job->has_value()) return nullptr;
  return nlohmann::json::parse((**job).spec);
}

// The workload weights stored with job `id`; empty when it has none (all 1).
std::vector<double> StoredWeights(const fs::path& db_path, const std::string& id) {
  nlohmann::json spec = StoredSpec(db_path, id);
  if (!spec.is_object() || !spec.contains("workload_weights")) return {};
  return spec["workload_weights"].get<std::vector<double>>();
}

class FleetModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tunefarm_fleetmodel_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    port_ = FreePort();
    DaemonOptions o;
    o.tls = false;  // loopback plaintext with tokens: what one machine runs
    daemon_ = StartDaemon(WriteFleetConfig(dir_, port_, dir_ / "farm.db", o), dir_ / "daemon.log");
    std::ofstream(dir_ / "client.token") << "client-token-0123456789\n";
    client_ = " --insecure --tuner 127.0.0.1:" + std::to_string(port_) + " --token-file " + (dir_ / "client.token").string();
  }
  void TearDown() override {
    worker_.reset();
    daemon_.reset();
    if (!HasFailure()) fs::remove_all(dir_);
  }

  fs::path dir_;
  int port_ = 0;
  std::string client_;
  std::unique_ptr<Child> daemon_, worker_;
};

TEST_F(FleetModel, ASmallCnnJobCompletesOnOneWorkerWithEachTaskWeighted) {
  WorkerOptions wo;
  wo.tls = false;
  worker_ = StartWorker(dir_, port_, wo, dir_ / "worker.log");
  const std::string model = TestModel("small_cnn");
  // Batches of 8 and 8 trials a task: each task's first batch, and a few more.
  Output submit = RunCli("jobs submit " + model + " --device-key test-key --trials 72 --batch-size 8 --job-id cnn --watch" +
                         client_);
  ASSERT_EQ(submit.code, 0) << submit.text << daemon_->Log() << worker_->Log();
  const auto [tasks, calls] = TasksAndCalls(submit.text, model);
  ASSERT_GT(tasks, 0) << submit.text;
  EXPECT_GE(calls, tasks);
  EXPECT_TRUE(std::regex_search(submit.text, std::regex("cnn +done +72/72"))) << submit.text;

  Output get = RunCli("jobs get cnn" + client_);
  ASSERT_EQ(get.code, 0) << get.text;
  // One line per task, named after the model, with its weight: small_cnn runs each task once.
  std::regex task_line("\n    small_cnn_[a-z0-9_]+ +weight ([0-9.]+) +trials +([0-9]+)");
  int lines = 0, trials = 0;
  double weights = 0;
  for (auto it = std::sregex_iterator(get.text.begin(), get.text.end(), task_line); it != std::sregex_iterator(); ++it) {
    ++lines;
    weights += std::stod((*it)[1].str());
    trials += std::stoi((*it)[2].str());
  }
  EXPECT_EQ(lines, tasks) << get.text;
  EXPECT_EQ(weights, calls) << get.text;  // a task weighs its calls
  EXPECT_EQ(trials, 72) << get.text;
  const std::vector<double> stored = StoredWeights(dir_ / "farm.db", "cnn");
  EXPECT_EQ(int(stored.size()), tasks);
  EXPECT_EQ(std::accumulate(stored.begin(), stored.end(), 0.0), calls);
}

// A model whose layers repeat: a task of several calls weighs that many. No
// worker serves the key, so the job waits; the daemon has stored it.
TEST_F(FleetModel, ATaskThatRunsSeveralTimesWeighsItsCalls) {
  const std::string model = TestModel("small_transformer");
  Output submit = RunCli("jobs submit " + model + " --device-key nobody --trials 200 --job-id transformer" + client_);
  ASSERT_EQ(submit.code, 0) << submit.text << daemon_->Log();
  const auto [tasks, calls] = TasksAndCalls(submit.text, model);
  ASSERT_GT(tasks, 0) << submit.text;
  ASSERT_GT(calls, tasks) << "the model is expected to repeat a layer: " << submit.text;
  const std::vector<double> stored = StoredWeights(dir_ / "farm.db", "transformer");
  ASSERT_EQ(int(stored.size()), tasks);
  EXPECT_EQ(std::accumulate(stored.begin(), stored.end(), 0.0), calls);
  EXPECT_GT(*std::max_element(stored.begin(), stored.end()), 1);
  Output cancel = RunCli("jobs cancel transformer" + client_);
  EXPECT_EQ(cancel.code, 0) << cancel.text;
}

// --set applies to workload files too: the workload is sent as overridden.
// Without a model no weights are sent, and every workload weighs 1.
TEST_F(FleetModel, SetOverridesAWorkloadFilesShapeBeforeItIsSent) {
  std::ofstream(dir_ / "mm.tf") << SmallMatmul(32, 16, 16);
  Output submit = RunCli("jobs submit " + (dir_ / "mm.tf").string() + " --set K=24 --device-key nobody --job-id set" +
                         client_);
  ASSERT_EQ(submit.code, 0) << submit.text << daemon_->Log();
  nlohmann::json spec = StoredSpec(dir_ / "farm.db", "set");
  ASSERT_TRUE(spec.is_object());
  const std::string text = spec["workloads"][0].get<std::string>();
  EXPECT_NE(text.find("K = 24"), std::string::npos) << text;
  EXPECT_FALSE(spec.contains("workload_weights")) << spec.dump();
  Output bad = RunCli("jobs submit " + (dir_ / "mm.tf").string() + " --set K --device-key nobody" + client_);
  EXPECT_EQ(bad.code, 1) << bad.text;
  EXPECT_NE(bad.text.find("--set expects NAME=VALUE, got 'K'"), std::string::npos) << bad.text;
  Output cancel = RunCli("jobs cancel set" + client_);
  EXPECT_EQ(cancel.code, 0) << cancel.text;
}

TEST_F(FleetModel, AModelWithMoreTasksThanAJobTakesIsRefusedBeforeItIsSent) {
  // 30 + 32 + 11 tasks: over the 64 workloads a job takes.
  Output big = RunCli("jobs submit " + TestModel("resnet50") + " " + TestModel("mobilenet_v2") + " " +
                      TestModel("bert_layer") + " --device-key test-key" + client_);
  EXPECT_EQ(big.code, 1) << big.text;
  EXPECT_TRUE(std::regex_search(big.text, std::regex("error: [0-9]+ workloads \\(each task of a model is one\\): a "
                                                      "fleet job tunes at most 64; .*tunefarm tune.*tunefarm import")))
      << big.text;
  // Not ONNX: the import's error names the file.
  std::ofstream(dir_ / "broken.onnx") << "this is not a model";
  Output broken = RunCli("jobs submit " + (dir_ / "broken.onnx").string() + " --device-key test-key" + client_);
  EXPECT_EQ(broken.code, 1) << broken.text;
  EXPECT_NE(broken.text.find("broken.onnx"), std::string::npos) << broken.text;
  Output list = RunCli("jobs list" + client_);
  EXPECT_EQ(list.code, 0) << list.text;
  EXPECT_NE(list.text.find("no jobs"), std::string::npos) << list.text;
}

// The Tuner service over the wire: weights are none or one per workload,
// each finite and > 0; anything else is INVALID_ARGUMENT naming the field.
TEST_F(FleetModel, SubmitJobRefusesABadWeightNamingItsIndex) {
  rpc::ClientSecurity sec = ClientCreds(dir_, false, "client-token-0123456789");
  auto stub = TunerStub(port_, sec);
  struct Case {
    std::vector<double> weights;
    std::string message_start;
  };
  const std::vector<Case> cases = {
      {{3, 0}, "workload_weights[1]: must be a finite number > 0, got 0"},
      {{std::numeric_limits<double>::quiet_NaN(), 1}, "workload_weights[0]: must be a finite number > 0, got nan"},
      {{1, std::numeric_limits<double>::infinity()}, "workload_weights[1]: must be a finite number > 0, got inf"},
      {{2}, "workload_weights: 1 given for 2 workload(s)"},
  };
  for (const Case& c : cases) {
    v1::SubmitJobRequest req;
    req.add_workloads(SmallMatmul(32, 16, 16));
    req.add_workloads(SmallMatmul(32, 16, 24));
    req.set_device_key("test-key");
    req.set_trials(8);
    for (double w : c.weights) req.add_workload_weights(w);
    grpc::ClientContext ctx;
    rpc::PrepareCall(&ctx, sec, 30);
    v1::Job job;
    grpc::Status st = stub->SubmitJob(&ctx, req, &job);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message_start;
    EXPECT_EQ(st.error_message().rfind(c.message_start, 0), 0u) << st.error_message();
  }
}

}  // namespace
}  // namespace tunefarm::fleet_test
