// tunefarm_compile_latency: latency and throughput of the Compile service on
// a cached key, over real gRPC channels on loopback.
//
//   tunefarm_compile_latency [--threads T] [--requests N] [--shared-connection] [--by-hash]
//
// Starts the Compile service in this process (plaintext on 127.0.0.1, bearer
// token) over a temporary tuning log holding one tuned matmul record, warms
// the key with one request (its compile time is printed), then T client
// threads (default 32), each with its own channel and TCP connection unless
// --shared-connection, issue N requests each (default 200) for that key by
// workload text (or --by-hash). Prints p50/p99/mean/max latency in
// microseconds, requests/s, and the load average before and after: clients
// and server share this machine's cores, so compare runs made under the same
// load. Every answer is checked (OK, cached, same binary).
#include <stdlib.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/layered_database.h"
#include "tunefarm/rpc/server_setup.h"
#include "tunefarm/daemon/compile_service.h"
#include "tunefarm/tuner/tuning_loop.h"

namespace {

using namespace tunefarm;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "a-token-of-16-chars-or-more";
constexpr char kMatmul[] =
    "workload mm(M = 256, N = 256, K = 256) {\n"
    "  A = input f32[M, K]\n  B = input f32[K, N]\n"
    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";

struct Config {
  int threads = 32;
  int requests = 200;
  bool shared_connection = false;
  bool by_hash = false;
};

Config ParseArgs(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(1);
      }
      return std::atoi(argv[++i]);
    };
    if (a == "--threads") c.threads = next();
    else if (a == "--requests") c.requests = next();
    else if (a == "--shared-connection") c.shared_connection = true;
    else if (a == "--by-hash") c.by_hash = true;
    else {
      std::fprintf(stderr, "usage: %s [--threads T] [--requests N] [--shared-connection] [--by-hash]\n", argv[0]);
      std::exit(1);
    }
  }
  if (c.threads < 1 || c.requests < 1) {
    std::fprintf(stderr, "--threads and --requests must be positive\n");
    std::exit(1);
  }
  return c;
}

template <typename T>
T OrDie(Result<T> r, const char* what) {
  if (!r.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, r.status().ToString().c_str());
    std::exit(2);
  }
  return std::move(r).value();
}

// A tuned record: the outer tile of i in parallel.
std::string TunedTrace(const Workload& w) {
  Schedule sch(OrDie(LowerToPrimFunc(w), "lower"));
  BlockRV c = OrDie(sch.GetBlock("C"), "get_block");
  std::vector<LoopRV> loops = OrDie(sch.GetLoops(c), "get_loops");
  std::vector<LoopRV> i = OrDie(sch.Split(loops[0], {16, 16}), "split i");
  if (!sch.Parallel(i[0]).ok()) std::exit(2);
  return sch.trace().ToText();
}

// Its own connection unless `shared`: gRPC shares subchannels between
// channels with equal arguments, which would put every client on one socket.
std::shared_ptr<grpc::Channel> ClientChannel(const std::string& address, int index, bool shared) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  if (!shared) {
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("tunefarm.bench_client", index);
  }
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

std::string LoadAverage() {
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) != 3) return "unknown";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f %.2f %.2f", load[0], load[1], load[2]);
  return buf;
}

double Percentile(const std::vector<double>& sorted, double p) {
  size_t i = std::min(sorted.size() - 1, size_t(p * double(sorted.size() - 1) + 0.5));
  return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
  Config config = ParseArgs(argc, argv);
  std::string dir = (std::filesystem::temp_directory_path() / "tunefarm_compile_latency_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 2;

  int rc = 0;
  {
    auto db = OrDie(database::LayeredDatabase::Open(dir + "/log.db", ""), "open");
    Workload mm = OrDie(ParseWorkload(kMatmul), "parse");
    std::string hash = StructuralHashHex(mm);
    if (!db->user().CommitWorkload({hash, mm.name, PrintWorkload(mm)}).ok()) return 2;
    database::TuningRecord record;
    record.workload_hash = hash;
    record.target = tuner::RecordTarget(Target::Host());
    record.trace = TunedTrace(mm);
    record.run_secs = {1e-3};
    record.worker = "bench";
    record.device = "cpu";
    OrDie(db->user().CommitRecord(record), "commit");

    rpc::ServerSecurity security;
    security.insecure = true;
    security.client_tokens = {kToken};
    daemon::CompileServiceImpl service(db.get(), security, 64, nullptr);
    auto server = OrDie(rpc::StartServer("127.0.0.1:0", security, 64 << 20, {&service}), "start server");
    std::string address = "127.0.0.1:" + std::to_string(server.port);
    rpc::ClientSecurity client;
    client.insecure = true;
    client.token = kToken;

    v1::CompileRequest request;
    if (config.by_hash) request.set_workload_hash(hash);
    else request.set_workload_text(kMatmul);

    // Warm the key (the one compile).
    auto warm_stub = v1::Compile::NewStub(ClientChannel(address, -1, config.shared_connection));
    v1::CompileResponse warm;
    grpc::ClientContext warm_context;
    rpc::PrepareCall(&warm_context, client, 120);
    auto t0 = Clock::now();
    grpc::Status warm_status = warm_stub->Compile(&warm_context, request, &warm);
    double compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!warm_status.ok() || warm.source() != v1::CompileResponse::SOURCE_TUNED_SAME_DEVICE) {
      std::fprintf(stderr, "warm-up failed: %s\n", warm_status.error_message().c_str());
      return 2;
    }

    std::vector<std::vector<double>> latencies(size_t(config.threads));
    std::vector<int> failures(size_t(config.threads), 0);
    std::barrier start(config.threads + 1);
    std::vector<std::thread> threads;
    for (int t = 0; t < config.threads; ++t) {
      threads.emplace_back([&, t] {
        auto stub = v1::Compile::NewStub(ClientChannel(address, t, config.shared_connection));
        {  // connect before the clock starts
          v1::CompileResponse r;
          grpc::ClientContext context;
          rpc::PrepareCall(&context, client, 120);
          if (!stub->Compile(&context, request, &r).ok()) ++failures[size_t(t)];
        }
        std::vector<double>& mine = latencies[size_t(t)];
        mine.reserve(size_t(config.requests));
        start.arrive_and_wait();
        for (int n = 0; n < config.requests; ++n) {
          v1::CompileResponse r;
          grpc::ClientContext context;
          rpc::PrepareCall(&context, client, 120);
          auto begin = Clock::now();
          grpc::Status s = stub->Compile(&context, request, &r);
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - begin).count());
          if (!s.ok() || !r.cached() || r.binary() != warm.binary()) ++failures[size_t(t)];
        }
      });
    }
    std::string load_before = LoadAverage();
    start.arrive_and_wait();
    auto begin = Clock::now();
    for (std::thread& t : threads) t.join();
    double wall_s = std::chrono::duration<double>(Clock::now() - begin).count();

    std::vector<double> all;
    for (const auto& v : latencies) all.insert(all.end(), v.begin(), v.end());
    std::sort(all.begin(), all.end());
    double mean = 0;
    for (double x : all) mean += x;
    mean /= double(all.size());
    int failed = 0;
    for (int f : failures) failed += f;

    std::printf("tunefarm_compile_latency: Compile on a cached key over loopback gRPC (plaintext + token)\n");
    std::printf("  machine: %u hardware threads; load average before %s, after %s\n",
                std::thread::hardware_concurrency(), load_before.c_str(), LoadAverage().c_str());
    std::printf("  workload: mm 256x256x256 by %s; answer %zu bytes (object + header); first compile %.1f ms\n",
                config.by_hash ? "hash" : "text", warm.binary().size() + warm.header().size(), compile_ms);
    std::printf("  clients: %d threads x %d requests, %s\n", config.threads, config.requests,
                config.shared_connection ? "one shared connection" : "one connection each");
    std::printf("  latency us: p50 %.0f  p99 %.0f  mean %.0f  max %.0f\n", Percentile(all, 0.50),
                Percentile(all, 0.99), mean, all.back());
    std::printf("  throughput: %.0f requests/s (%zu requests in %.2f s)\n", double(all.size()) / wall_s, all.size(),
                wall_s);
    std::printf("  compilations: %lld; failed or wrong answers: %d\n",
                static_cast<long long>(service.compilations()), failed);
    rc = failed == 0 && service.compilations() == 1 ? 0 : 1;
    server.server->Shutdown(rpc::DeadlineIn(5));
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  return rc;
}
