// Loop annotation keys across a fleet of mixed versions: a worker reports the
// keys its runner's `annotate` replays; one that reports none (built before
// the list) is taken to know the keys of that time, not pragma_dot_product;
// a candidate annotated with a key goes only to a worker that knows it; one
// that no connected worker of its key knows is answered naming the key and
// the workers; and a job whose workers lack pragma_dot_product searches
// without the int8 dot products.
#include <gtest/gtest.h>

#include <iterator>

#include "../tuner/sketch_test_util.h"
#include "dispatch_test_util.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/daemon/fleet_dispatcher.h"
#include "tunefarm/daemon/fleet_service.h"
#include "tunefarm/tuner/search.h"
#include "tunefarm/tuner/sketch.h"

namespace tunefarm::daemon {
namespace {

using testing::BatchThread;
using testing::Eventually;
using RecordingWorker = testing::FakeWorker;

std::set<std::string> AllKeys() { return {std::begin(ir::kLoopAnnotations), std::end(ir::kLoopAnnotations)}; }

// A Register as a worker of this build sends it, or (`lists` false) as one
// built before Register.loop_annotations and trace_instructions.
v1::Register Registration(bool lists) {
  v1::Register reg;
  reg.set_device_key("cpu-x");
  reg.set_device("cpu");
  reg.set_max_in_flight(8);
  if (lists) {
    for (const std::string& n : ReplayedInstructionNames()) reg.add_trace_instructions(n);
    for (const char* key : ir::kLoopAnnotations) reg.add_loop_annotations(key);
  }
  return reg;
}

// What the fleet service makes of a registration (fleet_session.cpp).
WorkerInfo Info(const std::string& host, const v1::Register& reg) {
  WorkerInfo w;
  w.device_key = reg.device_key();
  w.device = reg.device();
  w.hostname = host;
  w.max_in_flight = reg.max_in_flight();
  w.trace_instructions = TraceInstructionsOf(reg);
  w.loop_annotations = LoopAnnotationsOf(reg);
  return w;
}

const std::string kHead = "tunefarm-trace 1\nb0 = get_block(\"C\")\nl1, l2, l3 = get_loops(b0)\n";
const std::string kDotTrace = kHead + "annotate(l3, \"pragma_dot_product\", 4)\n";
const std::string kUnrollTrace = kHead + "annotate(l1, \"pragma_auto_unroll_max_step\", 16)\n";

MeasureInput Input(const std::string& id, const std::string& trace) { return {id, "w", trace, "llvm"}; }

MeasureResult Ok(const std::string& id) {
  MeasureResult r;
  r.candidate_id = id;
  r.repeat_seconds = {1e-3};
  return r;
}

TEST(FleetAnnotations, RegistrationsListTheirKeysOrAreTakenAsBeforeTheDotProduct) {
  v1::Register old_reg = Registration(false);
  EXPECT_TRUE(ValidateRegister(old_reg).ok());
  EXPECT_EQ(LoopAnnotationsOf(old_reg),
            (std::set<std::string>{"pragma_auto_unroll_max_step", "pragma_unroll_explicit"}));
  EXPECT_EQ(LoopAnnotationsOf(old_reg), UnlistedWorkerLoopAnnotations());
  v1::Register reg = Registration(true);
  EXPECT_TRUE(ValidateRegister(reg).ok());
  EXPECT_EQ(LoopAnnotationsOf(reg), AllKeys());
  EXPECT_EQ(LoopAnnotationsOf(reg).count(ir::kDotProductAnnotation), 1u);
  // A malformed list is the registration's error, naming the entry.
  reg.add_loop_annotations("");
  grpc::Status bad = ValidateRegister(reg);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  const std::string entry = "register.loop_annotations[" + std::to_string(std::size(ir::kLoopAnnotations)) + "]";
  EXPECT_NE(bad.error_message().find(entry), std::string::npos) << bad.error_message();
  reg.clear_loop_annotations();
  for (int i = 0; i < 257; ++i) reg.add_loop_annotations("pragma_" + std::to_string(i));
  EXPECT_NE(ValidateRegister(reg).error_message().find("at most 256"), std::string::npos);
}

// The search takes instruction names and annotation keys in one set.
TEST(FleetAnnotations, NoKeyIsNamedLikeAnInstruction) {
  for (const char* key : ir::kLoopAnnotations) EXPECT_FALSE(ParseInstructionKind(key).has_value()) << key;
}

// With `typed`, each input carries its trace as an object too, as the tuning
// loop's do.
void CheckDotProductTracesGoOnlyToWorkersThatKnowTheKey(bool typed) {
  FleetDispatcher fleet;
  RecordingWorker old_worker, new_worker;
  const std::string old_id = fleet.AddWorker(Info("old", Registration(false)), old_worker.Fn());
  // The new worker takes two at a time: the old one has free slots all along.
  WorkerInfo slow = Info("new", Registration(true));
  slow.max_in_flight = 2;
  const std::string new_id = fleet.AddWorker(slow, new_worker.Fn());
  std::vector<MeasureInput> batch;
  for (int i = 0; i < 4; ++i) batch.push_back(Input("dot" + std::to_string(i), kDotTrace));
  for (int i = 0; i < 4; ++i) batch.push_back(Input("unroll" + std::to_string(i), kUnrollTrace));
  if (typed) {
    for (MeasureInput& in : batch) {
      auto trace = Trace::Parse(in.trace_text);
      ASSERT_TRUE(trace.ok()) << trace.status().ToString();
      in.trace = std::make_shared<const Trace>(std::move(*trace));
    }
  }
  BatchThread job(fleet, batch);
  size_t answered_old = 0, answered_new = 0;
  EXPECT_TRUE(Eventually([&] {
    auto o = old_worker.Ids(), n = new_worker.Ids();
    for (; answered_old < o.size(); ++answered_old) fleet.OnResults(old_id, {Ok(o[answered_old])});
    for (; answered_new < n.size(); ++answered_new) fleet.OnResults(new_id, {Ok(n[answered_new])});
    return job.done();
  }));
  std::vector<MeasureResult> results = job.Results();
  for (const std::string& id : old_worker.Ids()) {
    EXPECT_EQ(id.rfind("unroll", 0), 0u) << id << " went to the old worker";
  }
  EXPECT_FALSE(old_worker.Ids().empty()) << "the old worker still measures the keys it knows";
  ASSERT_EQ(results.size(), 8u);
  for (const MeasureResult& r : results) EXPECT_EQ(r.error, MeasureErrorKind::kNone) << r.candidate_id;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(results[i].worker, new_id) << results[i].candidate_id;
}

TEST(FleetAnnotations, DotProductTracesGoOnlyToWorkersThatKnowTheKey) {
  CheckDotProductTracesGoOnlyToWorkersThatKnowTheKey(/*typed=*/false);
}

TEST(FleetAnnotations, TypedTracesAreRoutedByTheirKeysToo) {
  CheckDotProductTracesGoOnlyToWorkersThatKnowTheKey(/*typed=*/true);
}

TEST(FleetAnnotations, AKeyNoConnectedWorkerKnowsIsAnsweredNamingItAndTheWorkers) {
  FleetDispatcher fleet(std::chrono::milliseconds(200));
  RecordingWorker a, b;
  const std::string a_id = fleet.AddWorker(Info("board-1", Registration(false)), a.Fn());
  const std::string b_id = fleet.AddWorker(Info("board-2", Registration(false)), b.Fn());
  BatchThread job(fleet, {Input("dot", kDotTrace), Input("unroll", kUnrollTrace)});
  ASSERT_TRUE(Eventually([&] { return a.Ids().size() + b.Ids().size() == 1; }));
  fleet.OnResults(a.Ids().empty() ? b_id : a_id, {Ok("unroll")});
  std::vector<MeasureResult> results = job.Results();
  ASSERT_EQ(results.size(), 2u) << "the batch ends: the job does not hang";
  const std::string& m = results[0].error_message;
  EXPECT_EQ(results[0].error, MeasureErrorKind::kInvalidCandidate);
  EXPECT_NE(m.find("loop annotation 'pragma_dot_product'"), std::string::npos) << m;
  EXPECT_NE(m.find("'cpu-x'"), std::string::npos) << m;
  EXPECT_NE(m.find(a_id), std::string::npos) << m;
  EXPECT_NE(m.find(b_id), std::string::npos) << m;
  EXPECT_NE(m.find("upgrade"), std::string::npos) << m;
  EXPECT_EQ(results[0].worker, "tuner");
  EXPECT_EQ(results[1].error, MeasureErrorKind::kNone);
  EXPECT_EQ(a.Ids().size() + b.Ids().size(), 1u) << "the annotated candidate was never sent";
}

TEST(FleetAnnotations, CommonLoopAnnotationsAreWhatEveryWorkerOfTheKeyKnows) {
  FleetDispatcher fleet;
  RecordingWorker a, b, c;
  EXPECT_FALSE(fleet.CommonLoopAnnotations("cpu-x").has_value());
  fleet.AddWorker(Info("new", Registration(true)), a.Fn());
  EXPECT_EQ(fleet.CommonLoopAnnotations("cpu-x").value_or(std::set<std::string>{}), AllKeys());
  const std::string old_id = fleet.AddWorker(Info("old", Registration(false)), b.Fn());
  EXPECT_EQ(fleet.CommonLoopAnnotations("cpu-x").value_or(std::set<std::string>{}), UnlistedWorkerLoopAnnotations());
  WorkerInfo other_key = Info("elsewhere", Registration(false));
  other_key.device_key = "arm";
  fleet.AddWorker(other_key, c.Fn());
  fleet.RemoveWorker(old_id, "upgraded");
  EXPECT_EQ(fleet.CommonLoopAnnotations("cpu-x").value_or(std::set<std::string>{}), AllKeys())
      << "another key's workers do not count";
}

// The search of a job on an AArch64 key with dot products: with an older
// worker among the key's (its keys lack pragma_dot_product) the sketch draws
// no dot product, so none of its candidates is one that worker cannot build.
TEST(FleetAnnotations, WithoutTheKeyTheSketchDrawsNoDotProduct) {
  auto w = ParseWorkload(
      "workload gmm_int8(M = 7, N = 12, K = 20) {\n  A = input i8[M, K]\n  B = input i8[N, K]\n"
      "  C[i, j] = sum(k: K) i32(A[i, k]) * i32(B[j, k])\n  output C\n}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto target = Target::Parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon,+dotprod");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  auto annotated = [&](const std::set<std::string>& keys) {
    std::set<std::string> replayable(ReplayedInstructionNames().begin(), ReplayedInstructionNames().end());
    replayable.insert(keys.begin(), keys.end());
    auto policy = tuner::MakeSketchPolicy(*target, std::string(TUNEFARM_SOURCE_DIR) + "/configs", &replayable);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    if (!policy.ok()) return -1;
    tuner::EvolutionarySearch search(*f, policy->get(), tuner::SearchOptions{}, /*seed=*/31);
    int n = 0;
    for (int i = 0; i < 24; ++i) {
      auto c = search.Sample();
      EXPECT_TRUE(c.ok()) << c.status().ToString();
      if (c.ok()) n += c->trace.ToText().find(ir::kDotProductAnnotation) != std::string::npos;
    }
    return n;
  };
  EXPECT_GT(annotated(AllKeys()), 0) << "the control: every worker knows the key";
  EXPECT_EQ(annotated(UnlistedWorkerLoopAnnotations()), 0);
}

}  // namespace
}  // namespace tunefarm::daemon
