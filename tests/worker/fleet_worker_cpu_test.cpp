// FleetWorker with device "cpu": real measurements through LocalMeasurer and
// the build tree's runner, and the TEST ONLY fault injection (a crashing
// candidate is a runtime error; the worker keeps serving on the same stream).
#include <algorithm>
#include <iterator>
#include <set>

#include "fake_fleet.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "worker_test_util.h"

namespace tunefarm::testing {
namespace {

v1::MeasureInput Input(const std::string& id, const std::string& workload, const std::string& trace = "") {
  v1::MeasureInput in;
  in.set_candidate_id(id);
  in.set_workload_text(workload);
  in.set_trace_text(trace);
  in.set_target("llvm");
  return in;
}

v1::MeasureRequest Request(const std::string& id, std::vector<v1::MeasureInput> inputs) {
  v1::MeasureRequest r;
  r.set_request_id(id);
  r.mutable_options()->set_repeat(3);
  r.mutable_options()->set_min_repeat_ms(1);
  for (auto& in : inputs) *r.add_inputs() = std::move(in);
  return r;
}

FleetWorkerOptions CpuOptions(int port) {
  FleetWorkerOptions o = LoopbackOptions(port, "cpu");
  o.local.runner_path = RunnerPath();
  o.local.build_threads = 2;
  return o;
}

const v1::MeasureResult* Find(FakeFleet& fleet, const std::string& id) {
  for (const auto& m : fleet.results) {
    for (const auto& r : m.results()) {
      if (r.candidate_id() == id) return &r;
    }
  }
  return nullptr;
}

TEST(FleetWorkerCpuTest, MeasuresARealMatmul) {
  FakeTuner tuner;
  WorkerThread w(CpuOptions(tuner.port()));
  const std::string matmul = MatmulText(32, 64, 32);
  const std::string trace = VectorizedMatmulTrace(matmul);
  ASSERT_TRUE(Eventually(
      [&] {
        return tuner.fleet->Send(Request("mm", {Input("default", matmul), Input("vec", matmul, trace)}));
      },
      10s))
      << w.Log();
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->AnsweredLocked().size() == 2; }, 120s)) << w.Log();
  tuner.fleet->Read([&] {
    const v1::Register& reg = tuner.fleet->registers.at(0);
    EXPECT_EQ(reg.device(), "cpu");
    EXPECT_FALSE(reg.synthetic());
    EXPECT_EQ(reg.device_key(), DefaultDeviceKey("cpu"));
    EXPECT_EQ(reg.targets_size(), 1);
    // Every instruction its runner replays, so that the daemon can route padded traces.
    EXPECT_EQ(reg.trace_instructions_size(), int(ReplayedInstructionNames().size()));
    EXPECT_NE(std::find(reg.trace_instructions().begin(), reg.trace_instructions().end(), "pad_input"),
              reg.trace_instructions().end());
    // And every loop annotation key, so that it is sent int8 dot products.
    EXPECT_EQ(std::set<std::string>(reg.loop_annotations().begin(), reg.loop_annotations().end()),
              std::set<std::string>(std::begin(ir::kLoopAnnotations), std::end(ir::kLoopAnnotations)));
    EXPECT_NE(std::find(reg.loop_annotations().begin(), reg.loop_annotations().end(), "pragma_dot_product"),
              reg.loop_annotations().end());
    EXPECT_EQ(reg.fingerprint().toolchain().rfind("llvm-", 0), 0u);
    for (const char* id : {"default", "vec"}) {
      const v1::MeasureResult* r = Find(*tuner.fleet, id);
      ASSERT_NE(r, nullptr) << id;
      EXPECT_EQ(r->error(), v1::MEASURE_ERROR_NONE) << id << ": " << r->error_message();
      EXPECT_FALSE(r->synthetic()) << id;
      ASSERT_EQ(r->repeat_seconds_size(), 3) << id;
      for (double s : r->repeat_seconds()) EXPECT_GT(s, 0) << id;
      EXPECT_GT(r->build_seconds(), 0) << id;
      EXPECT_GT(r->speed_probe_seconds(), 0) << id << ": the probe travels with the times";
    }
  });
}

TEST(FleetWorkerCpuTest, InjectedCrashIsARuntimeErrorAndTheWorkerKeepsServing) {
  FakeTuner tuner;
  auto o = CpuOptions(tuner.port());
  o.inject_fault = "crash";  // TEST ONLY
  o.inject_every = 2;
  WorkerThread w(o);
  const std::string matmul = MatmulText(16, 16, 16);
  ASSERT_TRUE(Eventually(
      [&] {
        return tuner.fleet->Send(Request("one", {Input("a", matmul), Input("b", matmul)}));
      },
      10s))
      << w.Log();
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->AnsweredLocked().size() == 2; }, 120s)) << w.Log();
  // Served on: the next request is measured over the same stream.
  ASSERT_TRUE(tuner.fleet->Send(Request("two", {Input("c", matmul), Input("d", matmul)})));
  ASSERT_TRUE(tuner.fleet->WaitFor([&] { return tuner.fleet->AnsweredLocked().size() == 4; }, 120s)) << w.Log();
  tuner.fleet->Read([&] {
    for (const char* id : {"a", "c"}) {
      const v1::MeasureResult* r = Find(*tuner.fleet, id);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->error(), v1::MEASURE_ERROR_NONE) << id << ": " << r->error_message();
    }
    for (const char* id : {"b", "d"}) {  // every 2nd candidate crashes its runner
      const v1::MeasureResult* r = Find(*tuner.fleet, id);
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->error(), v1::MEASURE_ERROR_RUNTIME) << id << ": " << r->error_message();
      EXPECT_EQ(r->repeat_seconds_size(), 0);
    }
    EXPECT_EQ(tuner.fleet->registers.size(), 1u);
  });
  EXPECT_EQ(w.worker()->stats().registrations, 1);
  EXPECT_TRUE(w.Logged("TEST ONLY")) << w.Log();
}

}  // namespace
}  // namespace tunefarm::testing
