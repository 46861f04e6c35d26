// What the Compile and TuningLog services do with what a caller sends and
// what they send back: one target check for every entry, fingerprints
// checked field by field, bounded error messages, a shared library that names
// no folder of the daemon's machine, per-service health and server reflection.
#include <dlfcn.h>

#include <fstream>

#include "../elf_dynamic.h"
#include "../grpc_probes.h"
#include "service_test_util.h"
#include "tunefarm/common/quote.h"
#include "tunefarm/daemon/job_manager.h"

namespace tunefarm::daemon::testing {
namespace {

using grpc_probes::Health;

v1::HardwareFingerprint HostLikeFingerprint() {
  v1::HardwareFingerprint f;
  f.set_isa("x86_64");
  f.set_arch("znver4");
  f.add_features("+avx512f");
  f.add_features("-xop");
  f.set_cores(16);
  f.set_toolchain("llvm-16 lowering-r1");
  return f;
}

TEST(RequestLimitsTest, AnUnknownTripleGetsOneMessageFromEveryEntry) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  const std::string banana = "llvm -mtriple=banana";
  auto expected = ParseTargetField("target", banana);
  ASSERT_FALSE(expected.ok());
  const std::string message = expected.status().message();
  EXPECT_EQ(message.rfind("target: unknown triple 'banana' in 'llvm -mtriple=banana'", 0), 0u) << message;

  // SubmitJob's check (the daemon's Tuner service calls it first).
  JobSpec spec;
  spec.workloads = {kMatmulText};
  spec.target = banana;
  spec.device_key = "cpu";
  spec.trials = 8;
  Status submitted = ValidateJobSpec(spec);
  EXPECT_EQ(submitted.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(submitted.message(), message);

  v1::CompileRequest compile = TextRequest(kMatmulText);
  compile.set_target(banana);
  v1::CompileResponse compiled;
  grpc::Status c = h->Compile(compile, &compiled);
  EXPECT_EQ(c.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(c.error_message(), message);

  auto call = [&](auto&& rpc) {
    grpc::ClientContext context;
    rpc::PrepareCall(&context, h->client(), kDeadlineS);
    return rpc(&context);
  };
  v1::BestRecordRequest best;
  best.set_workload_hash("0123456789abcdef");
  best.set_target(banana);
  v1::BestRecordResponse best_reply;
  grpc::Status b = call([&](grpc::ClientContext* ctx) { return h->log_stub().GetBest(ctx, best, &best_reply); });
  EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(b.error_message(), message);

  v1::TopKRequest top;
  top.set_workload_hash("0123456789abcdef");
  top.set_target(banana);
  top.set_k(3);
  v1::TopKResponse top_reply;
  grpc::Status t = call([&](grpc::ClientContext* ctx) { return h->log_stub().GetTopK(ctx, top, &top_reply); });
  EXPECT_EQ(t.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(t.error_message(), message);

  v1::ExportRequest ex;
  ex.set_target(banana);
  grpc::Status e = call([&](grpc::ClientContext* ctx) {
    auto reader = h->log_stub().Export(ctx, ex);
    v1::ExportChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish();
  });
  EXPECT_EQ(e.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(e.error_message(), message);
}

TEST(RequestLimitsTest, EveryFingerprintFieldIsCheckedByName) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  struct Case {
    std::string name, field;
    std::function<void(v1::HardwareFingerprint&)> edit;
  };
  std::vector<Case> cases = {
      {"negative cores", "fingerprint.cores: must be in 0..", [](auto& f) { f.set_cores(-4); }},
      {"absurd cores", "fingerprint.cores", [](auto& f) { f.set_cores(int64_t(1) << 40); }},
      {"1,000-character feature", "fingerprint.features[2]: ",
       [](auto& f) { f.add_features(std::string(1000, 'f')); }},
      {"empty feature", "fingerprint.features[3]: is empty", [](auto& f) { f.add_features("+a"), f.add_features(""); }},
      {"feature with a comma", "fingerprint.features[1]", [](auto& f) { f.set_features(1, "+a,+b"); }},
      {"too many features", "fingerprint.features: at most",
       [](auto& f) { for (int i = 0; i < kMaxFingerprintFeatures; ++i) f.add_features("+f" + std::to_string(i)); }},
      {"isa with a space", "fingerprint.isa", [](auto& f) { f.set_isa("x86 64"); }},
      {"long isa", "fingerprint.isa", [](auto& f) { f.set_isa(std::string(33, 'i')); }},
      {"long arch", "fingerprint.arch", [](auto& f) { f.set_arch(std::string(5000, 'a')); }},
      {"arch with a quote", "fingerprint.arch", [](auto& f) { f.set_arch("zen'4"); }},
      {"toolchain with a newline", "fingerprint.toolchain", [](auto& f) { f.set_toolchain("llvm-16\nlowering-r1"); }},
      {"long toolchain", "fingerprint.toolchain", [](auto& f) { f.set_toolchain(std::string(129, 't')); }},
  };
  for (const Case& c : cases) {
    v1::HardwareFingerprint fp = HostLikeFingerprint();
    c.edit(fp);
    v1::CompileRequest compile = TextRequest(kMatmulText);
    *compile.mutable_fingerprint() = fp;
    v1::CompileResponse compiled;
    grpc::Status s = h->Compile(compile, &compiled);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name << ": " << s.error_message();
    EXPECT_NE(s.error_message().find(c.field), std::string::npos) << c.name << ": " << s.error_message();
    EXPECT_LT(s.error_message().size(), 200u) << c.name << ": " << s.error_message();
    EXPECT_TRUE(compiled.binary().empty()) << c.name;

    v1::BestRecordRequest best;
    best.set_workload_hash("0123456789abcdef");
    *best.mutable_fingerprint() = fp;
    v1::BestRecordResponse reply;
    grpc::ClientContext context;
    rpc::PrepareCall(&context, h->client(), kDeadlineS);
    grpc::Status b = h->log_stub().GetBest(&context, best, &reply);
    EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.name << ": " << b.error_message();
    EXPECT_NE(b.error_message().find(c.field), std::string::npos) << c.name << ": " << b.error_message();
  }
  EXPECT_EQ(h->compile_service().compilations(), 0);
  // A fingerprint as a worker reports it passes.
  v1::CompileRequest good = TextRequest(kMatmulText);
  *good.mutable_fingerprint() = HostLikeFingerprint();
  v1::CompileResponse compiled;
  grpc::Status ok = h->Compile(good, &compiled);
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  EXPECT_FALSE(compiled.binary().empty());
}

TEST(RequestLimitsTest, LongInputIsQuotedShortInErrors) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  // A workload text near the size limit whose error names a huge identifier.
  std::string name(60000, 'q');
  v1::CompileRequest r = TextRequest("workload w(N = 4) {\n  X = input f32[N]\n  Y[i] = " + name +
                                     "[i]\n  output Y\n}\n");
  v1::CompileResponse response;
  grpc::Status s = h->Compile(r, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message().substr(0, 200);
  EXPECT_LE(s.error_message().size(), kMaxMessageBytes + 40);
  EXPECT_NE(s.error_message().find("workload_text:3:"), std::string::npos) << s.error_message().substr(0, 200);
  // A structural hash with odd bytes is echoed escaped and short.
  v1::BestRecordRequest best;
  best.set_workload_hash(std::string("abc\n\x01") + std::string(100, 'z'));
  v1::BestRecordResponse reply;
  grpc::ClientContext context;
  rpc::PrepareCall(&context, h->client(), kDeadlineS);
  grpc::Status b = h->log_stub().GetBest(&context, best, &reply);
  EXPECT_EQ(b.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(b.error_message().find("'abc\\n\\x01zzz"), std::string::npos) << b.error_message();
  EXPECT_LT(b.error_message().size(), 160u) << b.error_message();
}

TEST(RequestLimitsTest, TheSharedLibraryNamesNoFolderOfTheDaemonsMachine) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  // A parallel schedule: its kernel calls the runtime, so the library needs it.
  Workload w = ParseOrDie(kMatmulText);
  auto trace = ParallelMatmulTrace(w);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  h->CommitRecord(w, *trace, {1e-4, 1e-4});
  v1::CompileRequest r = TextRequest(kMatmulText);
  r.set_output(v1::CompileRequest::OUTPUT_SHARED_LIBRARY);
  v1::CompileResponse response;
  grpc::Status s = h->Compile(r, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::string path = h->File("kernel.so");
  std::ofstream(path, std::ios::binary) << response.binary();
  elf_test::DynamicSection dynamic = elf_test::ReadDynamicSection(path);
  ASSERT_TRUE(dynamic.error.empty()) << dynamic.error;
  EXPECT_NE(std::find(dynamic.needed.begin(), dynamic.needed.end(), "libtunefarm_runtime.so"), dynamic.needed.end());
  EXPECT_EQ(response.source(), v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE);
  EXPECT_TRUE(dynamic.rpath.empty()) << dynamic.rpath[0];
  for (const std::string& p : dynamic.runpath) {
    EXPECT_EQ(p, "$ORIGIN") << "the library's RUNPATH names " << p;
    EXPECT_EQ(p.find(TUNEFARM_BINARY_DIR), std::string::npos) << p;
    EXPECT_EQ(p.find(TUNEFARM_SOURCE_DIR), std::string::npos) << p;
  }
  // Shipped with the runtime beside it, it loads (RUNPATH $ORIGIN).
  std::filesystem::copy_file(std::string(TUNEFARM_BINARY_DIR) + "/runtime/libtunefarm_runtime.so",
                             h->File("libtunefarm_runtime.so"));
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_NE(dlsym(lib, response.symbol().c_str()), nullptr);
  dlclose(lib);
}

TEST(RequestLimitsTest, HealthAnswersForEachServiceAndTurnsWhenDraining) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  for (const std::string& name : {std::string(), std::string("tunefarm.v1.Compile"), std::string("tunefarm.v1.TuningLog")}) {
    Health health;
    grpc::Status s = grpc_probes::CheckHealth(h->channel(), h->client(), name, &health);
    ASSERT_TRUE(s.ok()) << "'" << name << "': " << s.error_message();
    EXPECT_EQ(health, Health::kServing) << "'" << name << "'";
  }
  // Not served here: the health service does not claim it.
  Health health;
  EXPECT_EQ(grpc_probes::CheckHealth(h->channel(), h->client(), "tunefarm.v1.Tuner", &health).error_code(),
            grpc::StatusCode::NOT_FOUND);
  rpc::SetNotServing(h->server());
  for (const std::string& name : {std::string(), std::string("tunefarm.v1.Compile"), std::string("tunefarm.v1.TuningLog")}) {
    grpc::Status s = grpc_probes::CheckHealth(h->channel(), h->client(), name, &health);
    ASSERT_TRUE(s.ok()) << "'" << name << "': " << s.error_message();
    EXPECT_EQ(health, Health::kNotServing) << "'" << name << "'";
  }
}

TEST(RequestLimitsTest, ReflectionListsTheServicesAndDescribesThem) {
  auto h = ServiceHarness::Start(4, nullptr);
  ASSERT_NE(h, nullptr);
  grpc_probes::ReflectionAnswer list = grpc_probes::Reflect(h->channel(), h->client(), "list_services", "*");
  ASSERT_TRUE(list.status.ok()) << list.status.error_message();
  auto has = [&](const std::string& s) { return std::find(list.services.begin(), list.services.end(), s) != list.services.end(); };
  EXPECT_TRUE(has("tunefarm.v1.Compile"));
  EXPECT_TRUE(has("tunefarm.v1.TuningLog"));
  EXPECT_TRUE(has("grpc.health.v1.Health"));
  EXPECT_FALSE(has("tunefarm.v1.Tuner"));  // not registered on this server

  grpc_probes::ReflectionAnswer file =
      grpc_probes::Reflect(h->channel(), h->client(), "file_containing_symbol", "tunefarm.v1.Compile");
  ASSERT_TRUE(file.status.ok()) << file.status.error_message();
  ASSERT_FALSE(file.files.empty()) << file.error;
  bool found = false;
  for (const auto& f : file.files) {
    for (const auto& service : f.service()) {
      if (service.name() == "Compile" && service.method_size() == 1 && service.method(0).name() == "Compile") found = true;
    }
  }
  EXPECT_TRUE(found) << "no Compile service with its Compile method in " << file.files[0].name();
}

}  // namespace
}  // namespace tunefarm::daemon::testing
