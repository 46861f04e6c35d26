// FleetWorker against an in-process fake tuner, measuring with the test
// device: registration, heartbeats, one result per candidate, reconnecting
// after a tuner restart, results kept across a broken stream, clean stop,
// wrong credentials; and option checks.
#include <set>

#include "fake_fleet.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/worker/device_backend.h"
#include "tunefarm/worker/test_device.h"

namespace tunefarm::testing {
namespace {

v1::MeasureRequest Request(const std::string& id, int candidates, int repeat = 3, const std::string& prefix = "c") {
  v1::MeasureRequest r;
  r.set_request_id(id);
  r.mutable_options()->set_repeat(repeat);
  for (int i = 0; i < candidates; ++i) {
    v1::MeasureInput* in = r.add_inputs();
    in->set_candidate_id(prefix + std::to_string(i));
    in->set_workload_text("workload w" + std::to_string(i) + "() {}");
    in->set_trace_text("tunefarm-trace 1\n# " + std::to_string(i) + "\n");
    in->set_target("llvm");
  }
  return r;
}

TEST(FleetWorkerTestDevice, SyntheticTimesAreDeterministicAndLabelled) {
  TestDeviceMeasurer device;
  MeasureOptions options;
  options.repeat = 5;
  MeasureInput a{"a", "workload x", "trace 1", "llvm"}, b{"b", "workload x", "trace 2", "llvm"};
  auto results = device.Measure({a, b, a}, options);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].candidate_id, "a");
  EXPECT_EQ(results[0].error, MeasureErrorKind::kNone);
  EXPECT_EQ(results[0].error_message, kTestDeviceMessage);
  ASSERT_EQ(results[0].repeat_seconds.size(), 5u);
  EXPECT_EQ(results[0].repeat_seconds, results[2].repeat_seconds);
  EXPECT_NE(results[0].repeat_seconds[0], results[1].repeat_seconds[0]);
  for (const auto& r : results) {
    EXPECT_GE(r.repeat_seconds[0], 1e-3);
    EXPECT_LT(r.repeat_seconds[0], 2e-3);
  }
  // Workload and trace are hashed apart: moving text between them changes the time.
  EXPECT_NE(TestDeviceMeasurer::SyntheticSeconds({"x", "ab", "c", ""}),
            TestDeviceMeasurer::SyntheticSeconds({"x", "a", "bc", ""}));

  // The latency is per candidate, as a device that times one kernel at a time.
  TestDeviceMeasurer slow(TestDeviceOptions{75});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(slow.Measure({a, b}, options).size(), 2u);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
}

TEST(FleetWorkerCreateTest, RejectsBadOptionsNamingWhatIsWrong) {
  auto error = [](FleetWorkerOptions o) {
    auto w = FleetWorker::Create(std::move(o));
    return w.ok() ? std::string("OK") : w.status().ToString();
  };
  auto base = LoopbackOptions(7878, "test");
  for (std::string bad : {"", "localhost", "127.0.0.1:", "127.0.0.1:99999", ":7878", "127.0.0.1:78x"}) {
    auto o = base;
    o.tuner_address = bad;
    EXPECT_NE(error(o).find("InvalidArgument"), std::string::npos) << bad << ": " << error(o);
  }
  EXPECT_EQ(error(base), "OK");
  auto o = base;
  o.device = "tpu:0";
  EXPECT_NE(error(o).find("unknown device 'tpu:0'"), std::string::npos);
  o = base;
  o.device_key = "cpu znver4";
  EXPECT_NE(error(o).find("letters, digits"), std::string::npos) << error(o);
  o = base;
  o.max_in_flight = 0;
  EXPECT_NE(error(o).find("1..1024"), std::string::npos);
  o = base;
  o.tuner_address = "10.1.2.3:7878";
  EXPECT_NE(error(o).find("loopback"), std::string::npos) << error(o);
  o = base;
  o.security.insecure = false;
  EXPECT_NE(error(o).find("--cert"), std::string::npos) << error(o);
  o.security.ca = "/nonexistent/ca.pem";
  o.security.cert = "/nonexistent/worker.pem";
  o.security.key = "/nonexistent/worker.key";
  EXPECT_NE(error(o).find("/nonexistent/ca.pem"), std::string::npos) << error(o);
  o = base;
  o.inject_fault = "crash";  // TEST ONLY faults need the runner: device cpu
  EXPECT_NE(error(o).find("device cpu"), std::string::npos) << error(o);
  EXPECT_EQ(*RunnerFaultName("crash"), "segfault");
  EXPECT_EQ(*RunnerFaultName("hang"), "hang");
  EXPECT_FALSE(RunnerFaultName("explode").ok());
  EXPECT_EQ(DefaultDeviceKey("test"), "test");
  EXPECT_EQ(DefaultDeviceKey("cpu").rfind("cpu-", 0), 0u);
  o = base;
  o.test_latency_ms = 5;
  o.device = "cpu";
  EXPECT_NE(error(o).find("test latency"), std::string::npos) << error(o);
}

TEST(DeviceBackendTest, EachDeviceSaysHowItMeasuresAndAnUnknownOneListsThem) {
  auto unknown = FindDeviceBackend("tpu:0");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  for (const DeviceBackend& d : DeviceBackends()) {
    EXPECT_NE(unknown.status().message().find(d.name + ": " + d.summary), std::string::npos)
        << unknown.status().message();
    auto found = FindDeviceBackend(d.name);
    ASSERT_TRUE(found.ok()) << d.name;
    EXPECT_EQ(*found, &d);
    EXPECT_EQ(DefaultDeviceKey(d.name), d.default_key(d.name));
    EXPECT_EQ(IsSyntheticDevice(d.name), d.synthetic);
  }
  const DeviceBackend& cpu = **FindDeviceBackend("cpu");
  EXPECT_FALSE(cpu.synthetic);
  EXPECT_TRUE(cpu.runs_runner);
  EXPECT_EQ(cpu.targets("cpu"), std::vector<std::string>{Target::Host().ToString()});
  const DeviceBackend& test = **FindDeviceBackend("test");
  EXPECT_TRUE(test.synthetic);
  EXPECT_TRUE(test.targets("test").empty());  // builds nothing: takes any target
  EXPECT_EQ(test.toolchain("test"), "none (test device)");

  // The test device's measurer answers with its synthetic message.
  FleetWorkerOptions options;
  auto measurer = test.make_measurer(options);
  ASSERT_TRUE(measurer.ok()) << measurer.status().ToString();
  MeasureInput in;
  in.candidate_id = "c";
  in.workload_text = "w";
  auto results = (*measurer)->Measure({in}, MeasureOptions{});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].error_message, kTestDeviceMessage);
}

TEST(FleetWorkerTest, RegistersFirstWithItsFieldsThenHeartbeats) {
  FakeTuner tuner;
  auto o = LoopbackOptions(tuner.port(), "test");
  o.device_key = "test-unit";
  o.hostname = "unit-host";
  o.max_in_flight = 8;
  WorkerThread w(o);
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->heartbeats.size() >= 3; }, 10s)) << w.Log();
  tuner.fleet->Read([&] {
    ASSERT_EQ(tuner.fleet->registers.size(), 1u);
    const v1::Register& r = tuner.fleet->registers[0];
    EXPECT_EQ(r.device_key(), "test-unit");
    EXPECT_EQ(r.device(), "test");
    EXPECT_TRUE(r.synthetic()) << "a test device registered as one that measures";
    EXPECT_EQ(r.hostname(), "unit-host");
    EXPECT_EQ(r.max_in_flight(), 8);
    EXPECT_FALSE(r.tunefarm_version().empty());
    EXPECT_FALSE(r.fingerprint().isa().empty());
    EXPECT_FALSE(r.fingerprint().arch().empty());
    EXPECT_GT(r.fingerprint().cores(), 0);
    EXPECT_EQ(tuner.fleet->protocol_errors, 0);
    for (int in_flight : tuner.fleet->heartbeats) EXPECT_EQ(in_flight, 0);
  });
  EXPECT_TRUE(w.Logged("connected to 127.0.0.1:" + std::to_string(tuner.port()) + " as worker id fake#1"));
  EXPECT_EQ(w.worker()->stats().worker_id, "fake#1");
  EXPECT_TRUE(w.Stop().ok());
}

TEST(FleetWorkerTest, AnswersEveryCandidateExactlyOnce) {
  FakeTuner tuner;
  WorkerThread w(LoopbackOptions(tuner.port(), "test"));
  ASSERT_TRUE(Eventually([&] { return tuner.fleet->Send(Request("r1", 6, 4)); }, 10s)) << w.Log();
  ASSERT_TRUE(tuner.fleet->Send(Request("r2", 3, 2, "d")));
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->AnsweredLocked().size() == 9; }, 10s)) << w.Log();
  std::this_thread::sleep_for(300ms);  // a duplicate would arrive by now
  tuner.fleet->Read([&] {
    ASSERT_EQ(tuner.fleet->results.size(), 2u);  // one message per request
    std::set<std::string> requests;
    for (const auto& m : tuner.fleet->results) {
      requests.insert(m.request_id());
      for (const auto& r : m.results()) {
        EXPECT_EQ(r.error(), v1::MEASURE_ERROR_NONE);
        EXPECT_EQ(r.error_message(), kTestDeviceMessage);
        EXPECT_TRUE(r.synthetic()) << "a test device's time was sent as measured";
        EXPECT_EQ(r.repeat_seconds_size(), m.request_id() == "r1" ? 4 : 2);
        EXPECT_EQ(r.candidate_id()[0], m.request_id() == "r1" ? 'c' : 'd');
      }
    }
    EXPECT_EQ(requests, (std::set<std::string>{"r1", "r2"}));
    for (const auto& [id, count] : tuner.fleet->AnsweredLocked()) EXPECT_EQ(count, 1) << id;
  });
  v1::MeasureRequest r1 = Request("r1", 6, 4);
  MeasureInput first{"c0", r1.inputs(0).workload_text(), r1.inputs(0).trace_text(), "llvm"};
  tuner.fleet->Read([&] {
    EXPECT_EQ(tuner.fleet->results[0].results(0).repeat_seconds(0), TestDeviceMeasurer::SyntheticSeconds(first));
  });
  EXPECT_TRUE(Eventually([&] { return w.worker()->stats().candidates_measured == 9; }, 5s));
}

TEST(FleetWorkerTest, ReconnectsByItselfAfterTheTunerRestarts) {
  auto tuner = std::make_unique<FakeTuner>();
  const int port = tuner->port();
  WorkerThread w(LoopbackOptions(port, "test"));
  ASSERT_TRUE(tuner->fleet->WaitFor([&] { return !tuner->fleet->registers.empty(); }, 10s)) << w.Log();
  tuner.reset();  // the tuner goes away
  ASSERT_TRUE(Eventually([&] { return w.Logged("lost connection"); }, 10s)) << w.Log();
  std::this_thread::sleep_for(500ms);  // a few failed attempts while it is down
  tuner = std::make_unique<FakeTuner>(port);
  ASSERT_EQ(tuner->port(), port);
  ASSERT_TRUE(tuner->fleet->WaitFor([&] { return !tuner->fleet->registers.empty(); }, 15s)) << w.Log();
  ASSERT_TRUE(Eventually([&] { return tuner->fleet->Send(Request("again", 2)); }, 5s));
  EXPECT_TRUE(tuner->fleet->WaitFor([&] { return tuner->fleet->AnsweredLocked().size() == 2; }, 10s)) << w.Log();
  FleetWorkerStats stats = w.worker()->stats();
  EXPECT_EQ(stats.registrations, 2);
  EXPECT_GE(stats.connect_attempts, 3);  // first, at least one refused, the reconnect
  EXPECT_TRUE(w.Logged("retrying in")) << w.Log();
}

TEST(FleetWorkerTest, KeepsResultsOfABrokenStreamAndResendsThem) {
  auto tuner = std::make_unique<FakeTuner>();
  const int port = tuner->port();
  auto o = LoopbackOptions(port, "test");
  o.test_latency_ms = 250;  // per candidate: 1 s for the request
  WorkerThread w(o);
  ASSERT_TRUE(Eventually([&] { return tuner->fleet->Send(Request("slow", 4)); }, 10s)) << w.Log();
  // The worker reports the candidates in flight: it has them.
  ASSERT_TRUE(tuner->fleet->WaitFor(
      [&] { return !tuner->fleet->heartbeats.empty() && tuner->fleet->heartbeats.back() == 4; }, 10s));
  tuner.reset();  // dies mid-measurement
  ASSERT_TRUE(Eventually([&] { return w.worker()->stats().candidates_measured == 4; }, 10s)) << w.Log();
  tuner = std::make_unique<FakeTuner>(port);
  ASSERT_TRUE(tuner->fleet->WaitFor([&] { return tuner->fleet->AnsweredLocked().size() == 4; }, 15s)) << w.Log();
  // The worker counts and logs the re-send just after writing it.
  EXPECT_TRUE(Eventually([&] { return w.Logged("re-sent 1 result message(s)"); }, 5s)) << w.Log();
  EXPECT_EQ(w.worker()->stats().results_resent, 1);
}

TEST(FleetWorkerTest, StopFinishesAndSendsTheBatchBeingMeasured) {
  FakeTuner tuner;
  auto o = LoopbackOptions(tuner.port(), "test");
  o.test_latency_ms = 200;  // per candidate: 0.6 s for the request
  WorkerThread w(o);
  ASSERT_TRUE(Eventually([&] { return tuner.fleet->Send(Request("last", 3)); }, 10s)) << w.Log();
  ASSERT_TRUE(tuner.fleet->WaitFor(
      [&] { return !tuner.fleet->heartbeats.empty() && tuner.fleet->heartbeats.back() == 3; }, 10s));
  EXPECT_TRUE(w.Stop().ok());
  tuner.fleet->Read([&] {
    EXPECT_EQ(tuner.fleet->AnsweredLocked().size(), 3u);
    EXPECT_EQ(tuner.fleet->streams_ended, 1);  // half-closed, not left hanging
  });
  EXPECT_TRUE(w.Logged("stopped"));
}

TEST(FleetWorkerTest, WrongTokenIsUnauthenticatedAndTheWorkerKeepsRetrying) {
  FakeTuner tuner;
  WorkerThread w(LoopbackOptions(tuner.port(), "test", "wrong-token"));
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->rejected >= 3; }, 15s)) << w.Log();
  tuner.fleet->Read([&] { EXPECT_TRUE(tuner.fleet->registers.empty()); });
  EXPECT_TRUE(w.Logged("Unauthenticated: the bearer token is not valid here")) << w.Log();
  FleetWorkerStats stats = w.worker()->stats();
  EXPECT_EQ(stats.registrations, 0);
  EXPECT_GE(stats.connect_attempts, 3);
  EXPECT_TRUE(w.Stop().ok());
}

// A Measurer that breaks its contract (no result for the last candidate).
class ShortMeasurer : public Measurer {
 public:
  std::vector<MeasureResult> Measure(const std::vector<MeasureInput>& inputs, const MeasureOptions&) override {
    std::vector<MeasureResult> results(inputs.size() - 1);
    for (size_t i = 0; i < results.size(); ++i) results[i].repeat_seconds = {1e-3};
    return results;
  }
};

TEST(FleetWorkerTest, EveryCandidateGetsAResultEvenFromABrokenMeasurer) {
  FakeTuner tuner;
  FleetWorkerOptions o = LoopbackOptions(tuner.port(), "test");
  o.log = [](std::string_view) {};
  auto worker = FleetWorker::Create(o, std::make_unique<ShortMeasurer>());
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  std::thread run([&] { EXPECT_TRUE((*worker)->Run().ok()); });
  ASSERT_TRUE(Eventually([&] { return tuner.fleet->Send(Request("short", 3)); }, 10s));
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->AnsweredLocked().size() == 3; }, 10s));
  (*worker)->Stop();
  run.join();
  EXPECT_EQ((*worker)->Run().code(), StatusCode::kFailedPrecondition);  // once only
  tuner.fleet->Read([&] {
    const auto& results = tuner.fleet->results.at(0).results();
    EXPECT_EQ(results[0].candidate_id(), "c0");  // ids come from the request, not the measurer
    EXPECT_EQ(results[0].error(), v1::MEASURE_ERROR_NONE);
    EXPECT_EQ(results[2].candidate_id(), "c2");
    EXPECT_EQ(results[2].error(), v1::MEASURE_ERROR_WORKER_LOST);
  });
}

}  // namespace
}  // namespace tunefarm::testing
