// The Compile service over a real gRPC server: tuned and default kernels
// that link, load and match the reference interpreter; require_tuned and
// tune_on_miss; authentication; single-flight and LRU caching; and every
// kind of malformed request.
#include <dlfcn.h>

#include <barrier>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "service_test_util.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"

namespace tunefarm::daemon::testing {
namespace {

// Writes the answer's binary, links it when it is an object, loads it and
// runs `symbol` on random inputs; compares with the interpreter on `w`.
::testing::AssertionResult RunsCorrectly(const ServiceHarness& h, const v1::CompileResponse& r, const Workload& w,
                                         const std::string& name, bool is_object) {
  std::string library = h.File(name + ".so");
  std::string written = is_object ? h.File(name + ".o") : library;
  {
    std::ofstream out(written, std::ios::binary);
    out.write(r.binary().data(), std::streamsize(r.binary().size()));
  }
  if (is_object) {
    std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    std::string link = "cc -shared -o " + library + " " + written + " -L" + runtime + " -ltunefarm_runtime -Wl,-rpath," +
                       runtime + " -lm";
    if (std::system(link.c_str()) != 0) return ::testing::AssertionFailure() << "link failed: " << link;
  }
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return ::testing::AssertionFailure() << dlerror();
  void* fn = dlsym(lib, r.symbol().c_str());
  if (fn == nullptr) return ::testing::AssertionFailure() << "no symbol " << r.symbol();
  auto f = LowerToPrimFunc(w);
  if (!f.ok()) return ::testing::AssertionFailure() << f.status().ToString();
  std::mt19937_64 rng(11);
  std::vector<HostBuffer> actual, expected;
  for (size_t i = 0; i < f->params.size(); ++i) {
    actual.push_back(HostBuffer::Like(f->params[i]));
    expected.push_back(HostBuffer::Like(f->params[i]));
    if (i < f->num_inputs) {
      actual.back().FillRandom(rng);
      std::memcpy(expected.back().data(), actual.back().data(), size_t(actual.back().size_bytes()));
    }
  }
  std::vector<HostBuffer*> expected_ptrs;
  for (HostBuffer& b : expected) expected_ptrs.push_back(&b);
  Status interpreted = Interpret(*f, expected_ptrs);
  if (!interpreted.ok()) return ::testing::AssertionFailure() << interpreted.ToString();
  int32_t rc = -1;
  if (actual.size() == 3) {
    rc = reinterpret_cast<int32_t (*)(void*, void*, void*)>(fn)(actual[0].data(), actual[1].data(), actual[2].data());
  } else if (actual.size() == 2) {
    rc = reinterpret_cast<int32_t (*)(void*, void*)>(fn)(actual[0].data(), actual[1].data());
  }
  dlclose(lib);
  if (rc != 0) return ::testing::AssertionFailure() << "kernel returned " << rc;
  for (size_t i = f->num_inputs; i < actual.size(); ++i) {
    CompareResult cmp = CompareBuffers(actual[i], expected[i], 1e-4, 1e-4);
    if (!cmp.equal) return ::testing::AssertionFailure() << cmp.message;
  }
  return ::testing::AssertionSuccess();
}

// A start_tuning callback that records its calls.
struct FakeTuner {
  std::mutex mu;
  int calls = 0;
  std::vector<std::string> texts;
  std::string target, device_key;
  int trials = 0;
  StartTuningFn Fn() {
    return [this](const std::vector<std::string>& workload_texts, const std::string& t, const std::string& key,
                  int n) -> Result<std::string> {
      std::lock_guard<std::mutex> lock(mu);
      ++calls;
      texts = workload_texts;
      target = t;
      device_key = key;
      trials = n;
      return std::string("job-42");
    };
  }
};

TEST(CompileServiceTest, TunedWorkloadComesBackAsTheRecordsKernelAndRuns) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  auto trace = ParallelMatmulTrace(mm);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  int64_t id = h->CommitRecord(mm, *trace, {2e-5, 3e-5});

  v1::CompileResponse object;
  grpc::Status s = h->Compile(TextRequest(kMatmulText), &object);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(object.source(), v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE);
  EXPECT_EQ(object.record_id(), id);
  EXPECT_EQ(object.trace(), *trace);
  EXPECT_NEAR(object.latency_seconds(), 2e-5, 1e-12);  // the record's time: its fastest group
  EXPECT_EQ(object.workload_hash(), StructuralHashHex(mm));
  EXPECT_EQ(object.symbol(), "mm");
  EXPECT_FALSE(object.cached());
  EXPECT_EQ(object.binary().substr(0, 4), "\x7f" "ELF");
  // The record's schedule, not the default: only it calls the thread pool.
  EXPECT_NE(object.binary().find("tunefarm_parallel_for"), std::string::npos);
  EXPECT_NE(object.header().find("record id: " + std::to_string(id) + "\n"), std::string::npos) << object.header();
  EXPECT_NE(object.header().find("int32_t mm("), std::string::npos);
  EXPECT_TRUE(RunsCorrectly(*h, object, mm, "mm_object", true));

  v1::CompileRequest shared = TextRequest(kMatmulText);
  shared.set_output(v1::CompileRequest::OUTPUT_SHARED_LIBRARY);
  v1::CompileResponse library;
  s = h->Compile(shared, &library);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(library.cached()) << "another output kind is another key";
  EXPECT_NE(library.binary(), object.binary());
  EXPECT_TRUE(RunsCorrectly(*h, library, mm, "mm_shared", false));

  // The same workload by hash: the same key, answered from the cache.
  v1::CompileRequest by_hash;
  by_hash.set_workload_hash(StructuralHashHex(mm));
  v1::CompileResponse again;
  s = h->Compile(by_hash, &again);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(again.cached());
  EXPECT_EQ(again.binary(), object.binary());
  EXPECT_EQ(h->compile_service().compilations(), 2);
}

// A best record whose trace no longer fits the workload's loop nest (tuned
// before a change to lowering) is an error naming the record and the remedy,
// not a kernel built from something else.
TEST(CompileServiceTest, ARecordThatNoLongerReplaysIsAnErrorNamingIt) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  int64_t id = h->CommitRecord(mm, "tunefarm-trace 1\nb0 = get_block(\"C_before\")\n", {1e-5});
  v1::CompileResponse r;
  grpc::Status s = h->Compile(TextRequest(kMatmulText), &r);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error_message().find("record #" + std::to_string(id)), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("does not replay on mm"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("C_before"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("tune the workload again"), std::string::npos) << s.error_message();
}

// A faster record that no longer replays is passed over for the fastest one
// that does, and the answer's schedule description says so.
TEST(CompileServiceTest, ARecordThatNoLongerReplaysIsPassedOver) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  auto trace = ParallelMatmulTrace(mm);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  int64_t good = h->CommitRecord(mm, *trace, {3e-5});
  int64_t stale = h->CommitRecord(mm, "tunefarm-trace 1\nb0 = get_block(\"C_before\")\n", {1e-5});
  v1::CompileResponse r;
  grpc::Status s = h->Compile(TextRequest(kMatmulText), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.record_id(), good);
  EXPECT_EQ(r.trace(), *trace);
  EXPECT_NE(r.header().find("passed over faster record(s) #" + std::to_string(stale)), std::string::npos)
      << r.header();
  EXPECT_TRUE(RunsCorrectly(*h, r, mm, "mm_passed_over", true));
}

TEST(CompileServiceTest, UntunedWorkloadGetsTheDefaultScheduleOrNotFound) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  v1::CompileResponse r;
  grpc::Status s = h->Compile(TextRequest(kScaleText), &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  EXPECT_EQ(r.record_id(), 0);
  EXPECT_TRUE(r.trace().empty());
  EXPECT_TRUE(r.tuning_job_id().empty());
  EXPECT_TRUE(RunsCorrectly(*h, r, ParseOrDie(kScaleText), "scale", true));

  v1::CompileRequest required = TextRequest(kScaleText);
  required.set_require_tuned(true);
  s = h->Compile(required, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find(StructuralHashHex(ParseOrDie(kScaleText))), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find(Target::Host().ToString()), std::string::npos) << s.error_message();
}

TEST(CompileServiceTest, AnAArch64ObjectIsBuiltOnAnyHost) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  v1::CompileRequest request = TextRequest(kMatmulText);
  request.set_target("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
  v1::CompileResponse r;
  grpc::Status s = h->Compile(request, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_GT(r.binary().size(), 20u);
  EXPECT_EQ(uint8_t(r.binary()[18]), 183);  // e_machine EM_AARCH64
}

TEST(CompileServiceTest, TuneOnMissStartsAJobAndStillAnswers) {
  FakeTuner tuner;
  auto h = ServiceHarness::Start(16, tuner.Fn());
  ASSERT_NE(h, nullptr);
  v1::CompileRequest request = TextRequest(kScaleText);
  request.set_tune_on_miss(true);
  request.set_device_key("llvm/x86_64/znver4");
  v1::CompileResponse r;
  grpc::Status s = h->Compile(request, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(r.tuning_job_id(), "job-42");
  EXPECT_EQ(r.source(), v1::CompileResponse::SOURCE_DEFAULT_SCHEDULE);
  EXPECT_FALSE(r.binary().empty());
  ASSERT_EQ(tuner.calls, 1);
  ASSERT_EQ(tuner.texts.size(), 1u);
  EXPECT_TRUE(StructurallyEqual(ParseOrDie(tuner.texts[0]), ParseOrDie(kScaleText)));
  EXPECT_EQ(tuner.target, Target::Host().ToString());
  EXPECT_EQ(tuner.device_key, "llvm/x86_64/znver4");
  EXPECT_EQ(tuner.trials, kDefaultTuneTrials);

  request.set_require_tuned(true);
  request.set_tune_trials(37);
  s = h->Compile(request, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_NE(s.error_message().find("job-42"), std::string::npos) << s.error_message();
  EXPECT_EQ(tuner.trials, 37);

  // A hit starts nothing.
  Workload mm = ParseOrDie(kMatmulText);
  h->CommitRecord(mm, *ParallelMatmulTrace(mm), {1e-5});
  v1::CompileRequest hit = TextRequest(kMatmulText);
  hit.set_tune_on_miss(true);
  hit.set_device_key("llvm/x86_64/znver4");
  s = h->Compile(hit, &r);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(r.tuning_job_id().empty());
  EXPECT_EQ(tuner.calls, 2);

  hit.clear_device_key();
  EXPECT_EQ(h->Compile(hit, &r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(CompileServiceTest, ADaemonThatCannotTuneSaysSo) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  v1::CompileRequest request = TextRequest(kScaleText);
  request.set_tune_on_miss(true);
  request.set_device_key("cpu");
  v1::CompileResponse r;
  grpc::Status s = h->Compile(request, &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("cannot tune"), std::string::npos);
}

TEST(CompileServiceTest, NoOrWrongTokenIsUnauthenticatedAndDoesNothing) {
  FakeTuner tuner;
  auto h = ServiceHarness::Start(16, tuner.Fn());
  ASSERT_NE(h, nullptr);
  v1::CompileRequest request = TextRequest(kScaleText);
  request.set_tune_on_miss(true);
  request.set_device_key("cpu");
  for (const std::string& token : {std::string(), std::string("not-the-token-but-long-enough")}) {
    v1::CompileResponse r;
    grpc::Status s = h->Compile(request, &r, token);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << token;
    EXPECT_TRUE(r.binary().empty());
  }
  // Malformed and unauthenticated: authentication is checked first.
  v1::CompileResponse r;
  EXPECT_EQ(h->Compile(v1::CompileRequest(), &r, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(tuner.calls, 0);
  EXPECT_EQ(h->compile_service().compilations(), 0);
}

TEST(CompileServiceTest, ConcurrentIdenticalRequestsCompileOnce) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  h->CommitRecord(mm, *ParallelMatmulTrace(mm), {1e-5});
  constexpr int kClients = 32;
  std::vector<v1::CompileResponse> answers(kClients);
  std::vector<grpc::Status> statuses(kClients);
  std::barrier start(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      statuses[i] = h->Compile(TextRequest(kMatmulText), &answers[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(h->compile_service().compilations(), 1);
  int fresh = 0;
  for (int i = 0; i < kClients; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << statuses[i].error_message();
    EXPECT_EQ(answers[i].binary(), answers[0].binary());
    EXPECT_EQ(answers[i].header(), answers[0].header());
    EXPECT_EQ(answers[i].record_id(), answers[0].record_id());
    fresh += answers[i].cached() ? 0 : 1;
  }
  EXPECT_EQ(fresh, 1);
}

TEST(CompileServiceTest, ANewerBetterRecordIsPickedUpAtOnce) {
  auto h = ServiceHarness::Start(16, nullptr);
  ASSERT_NE(h, nullptr);
  Workload mm = ParseOrDie(kMatmulText);
  int64_t slow = h->CommitRecord(mm, *ParallelMatmulTrace(mm, 8), {5e-5});
  v1::CompileResponse first, second;
  ASSERT_TRUE(h->Compile(TextRequest(kMatmulText), &first).ok());
  EXPECT_EQ(first.record_id(), slow);
  int64_t fast = h->CommitRecord(mm, *ParallelMatmulTrace(mm, 4), {1e-5});
  ASSERT_TRUE(h->Compile(TextRequest(kMatmulText), &second).ok());
  EXPECT_EQ(second.record_id(), fast);
  EXPECT_FALSE(second.cached());
  EXPECT_EQ(second.trace(), *ParallelMatmulTrace(mm, 4));
  EXPECT_EQ(h->compile_service().compilations(), 2);
}

TEST(CompileServiceTest, TheCacheIsBoundedLeastRecentlyUsedFirst) {
  auto h = ServiceHarness::Start(1, nullptr);
  ASSERT_NE(h, nullptr);
  v1::CompileResponse r;
  ASSERT_TRUE(h->Compile(TextRequest(kScaleText), &r).ok());
  ASSERT_TRUE(h->Compile(TextRequest(kScaleText), &r).ok());
  EXPECT_TRUE(r.cached());
  ASSERT_TRUE(h->Compile(TextRequest(kMatmulText), &r).ok());  // evicts scale
  EXPECT_EQ(h->compile_service().cached_entries(), 1u);
  ASSERT_TRUE(h->Compile(TextRequest(kScaleText), &r).ok());
  EXPECT_FALSE(r.cached());
  EXPECT_EQ(h->compile_service().compilations(), 3);
}

TEST(CompileServiceTest, MalformedRequestsAreInvalidArgument) {
  FakeTuner tuner;
  auto h = ServiceHarness::Start(16, tuner.Fn());
  ASSERT_NE(h, nullptr);
  struct Case {
    std::string name;
    v1::CompileRequest request;
    grpc::StatusCode code;
    std::string expect;  // in the message
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, v1::CompileRequest r, grpc::StatusCode code, std::string expect) {
    cases.push_back({std::move(name), std::move(r), code, std::move(expect)});
  };
  add("parse error", TextRequest("workload bad(N = 4) {\n  X = input f32[N]\n  Y[i] = Z[i]\n  output Y\n}\n"),
      grpc::StatusCode::INVALID_ARGUMENT, "workload_text:3:");
  add("oversize", TextRequest(std::string(kMatmulText) + "#" + std::string(kMaxWorkloadTextBytes, 'x') + "\n"),
      grpc::StatusCode::INVALID_ARGUMENT, "workload_text");
  add("no workload", v1::CompileRequest(), grpc::StatusCode::INVALID_ARGUMENT, "workload");
  v1::CompileRequest r = TextRequest(kMatmulText);
  r.set_target("llvm -mcpu=notacpu");
  add("bad cpu", r, grpc::StatusCode::INVALID_ARGUMENT, "notacpu");
  r.set_target("gpu");
  add("bad target", r, grpc::StatusCode::INVALID_ARGUMENT, "gpu");
  r.set_target("cuda -arch=sm_90");
  r.set_output(v1::CompileRequest::OUTPUT_SHARED_LIBRARY);
  add("cuda shared library", r, grpc::StatusCode::INVALID_ARGUMENT, "a cuda target is built as a cubin");
  r = TextRequest(kMatmulText);
  r.set_tune_trials(-1);
  add("negative trials", r, grpc::StatusCode::INVALID_ARGUMENT, "tune_trials");
  r.set_tune_trials(kMaxTuneTrials + 1);
  add("too many trials", r, grpc::StatusCode::INVALID_ARGUMENT, "tune_trials");
  r = TextRequest(kMatmulText);
  r.set_output(static_cast<v1::CompileRequest::Output>(7));
  add("unknown output", r, grpc::StatusCode::INVALID_ARGUMENT, "output");
  r.set_output(v1::CompileRequest::OUTPUT_SHARED_LIBRARY);
  r.set_target("llvm -mtriple=aarch64-linux-gnu");
  add("foreign shared library", r, grpc::StatusCode::INVALID_ARGUMENT, "OUTPUT_OBJECT");
  r = v1::CompileRequest();
  r.set_workload_hash("0123456789abcdef");
  add("unknown hash", r, grpc::StatusCode::NOT_FOUND, "0123456789abcdef");
  r.set_workload_hash("not a hash; drop table");
  add("garbage hash", r, grpc::StatusCode::INVALID_ARGUMENT, "workload_hash");
  r.set_workload_hash("");
  add("empty hash", r, grpc::StatusCode::INVALID_ARGUMENT, "workload_hash");
  r = TextRequest(kMatmulText);
  r.set_tune_on_miss(true);
  add("tune without device key", r, grpc::StatusCode::INVALID_ARGUMENT, "device_key");
  for (const Case& c : cases) {
    v1::CompileResponse response;
    grpc::Status s = h->Compile(c.request, &response);
    EXPECT_EQ(s.error_code(), c.code) << c.name << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.expect), std::string::npos) << c.name << ": " << s.error_message();
    EXPECT_TRUE(response.binary().empty()) << c.name;
  }
  EXPECT_EQ(tuner.calls, 0);
  EXPECT_EQ(h->compile_service().compilations(), 0);
}

}  // namespace
}  // namespace tunefarm::daemon::testing
