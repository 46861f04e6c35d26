// The tunefarm binary end to end: tune briefly into a fresh log, resume,
// compile the best record into an object, link it into a program and check it
// against the reference interpreter; and every user-facing error of the
// commands (a clear message and its exit code).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "tunefarm/compiler/interpreter/host_buffer.h"
#include "tunefarm/compiler/interpreter/interpreter.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"
#include "cli_test_util.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::Output;
using cli_test::RunTunefarm;

// The record a log hands out, ranked by brute force as docs/database.md says:
// the trace with the lowest mean over its successful records (ties: the older
// fastest record), answered by its fastest record.
class BestByTrace {
 public:
  void Add(const database::TuningRecord& r) {
    if (!r.ok()) return;
    Times& t = traces_[r.trace];
    t.sum += *r.TimeSec();
    ++t.count;
    if (t.fastest_id == 0 || *r.TimeSec() < t.fastest) {
      t.fastest = *r.TimeSec();
      t.fastest_id = r.id;
    }
  }
  int64_t id() const {
    const Times* best = nullptr;
    for (const auto& [trace, t] : traces_) {
      if (!best || t.sum / t.count < best->sum / best->count ||
          (t.sum / t.count == best->sum / best->count && t.fastest_id < best->fastest_id)) {
        best = &t;
      }
    }
    return best ? best->fastest_id : 0;
  }

 private:
  struct Times {
    double sum = 0, fastest = 0;
    int count = 0;
    int64_t fastest_id = 0;
  };
  std::map<std::string, Times> traces_;
};

class CliTest : public cli_test::CliFolderTest {
 protected:
  CliTest() : CliFolderTest("tunefarm_cli_", 64, 48, 32) {}
};

TEST_F(CliTest, TuneResumeCompileLinkAndCheck) {
  Output tune = RunTunefarm("tune " + P("mm.tf") + " --trials 10 --batch-size 5 --repeat 2 --min-repeat-ms 2 --db " + P("log.db") +
                    " --curve " + P("curve.svg"));
  ASSERT_EQ(tune.code, 0) << tune.text;
  EXPECT_NE(tune.text.find("speed-up"), std::string::npos) << tune.text;
  // The runner's speed probe came back with every kernel: steady or not (a
  // busy test machine can be either), the run says how fast the machine was.
  EXPECT_NE(tune.text.find("machine speed"), std::string::npos) << tune.text;
  std::ifstream svg(P("curve.svg"));
  std::string svg_text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  EXPECT_NE(svg_text.find("<svg"), std::string::npos);
  EXPECT_NE(svg_text.find("polyline"), std::string::npos);

  // Resume: the earlier trials count and are not measured again. A best that
  // falls back when measured again is confirmed past the budget, so the first
  // run may hold a trial or two more than its 10.
  int64_t first_run_records = 0;
  {
    auto first = database::Database::Open(P("log.db"));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    ASSERT_TRUE((*first)->ForEachRecord({}, [&](const database::TuningRecord&) {
                         ++first_run_records;
                         return Status::OK();
                       }).ok());
  }
  ASSERT_GE(first_run_records, 10);
  Output again = RunTunefarm("tune " + P("mm.tf") + " --trials 14 --batch-size 4 --repeat 2 --min-repeat-ms 2 --db " + P("log.db") +
                     " --curve ''");
  ASSERT_EQ(again.code, 0) << again.text;
  EXPECT_NE(again.text.find(std::to_string(first_run_records) + " resumed"), std::string::npos) << again.text;

  auto db = database::Database::Open(P("log.db"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  int64_t records = 0;
  BestByTrace ranking;
  std::vector<database::TuningRecord> tuned;  // successful, with a schedule
  ASSERT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                  ++records;
                  ranking.Add(r);
                  if (r.ok() && !r.trace.empty()) tuned.push_back(r);
                  return Status::OK();
                }).ok());
  const int64_t best_id = ranking.id();
  EXPECT_GE(records, 14);
  EXPECT_LE(records, 16);  // at most two confirmations past the budget
  ASSERT_GT(best_id, 0);
  ASSERT_GE(tuned.size(), 2u);
  // A failed measurement of one of those schedules, for `show --record` below.
  database::TuningRecord failed = tuned[0];
  failed.uid.clear();
  failed.run_secs.clear();
  failed.error_kind = database::ErrorKind::kTimeout;
  failed.error_msg = "run exceeded 10 s";
  auto failed_id = (*db)->CommitRecord(failed);
  ASSERT_TRUE(failed_id.ok()) << failed_id.status().ToString();
  db->reset();

  Output compile = RunTunefarm("compile " + P("mm.tf") + " --db " + P("log.db") + " -o " + P("mm.o") + " --header " + P("mm.h"));
  ASSERT_EQ(compile.code, 0) << compile.text;
  std::ifstream header(P("mm.h"));
  std::string header_text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
  EXPECT_NE(header_text.find("record id: " + std::to_string(best_id) + "\n"), std::string::npos)
      << "the object must hold the log's best schedule\n" << header_text;
  EXPECT_NE(header_text.find("int32_t mm("), std::string::npos) << header_text;

  // `show --db` names the same record and prints its trace and loop nest.
  Output show = RunTunefarm("show " + P("mm.tf") + " --db " + P("log.db") + " --lowered");
  ASSERT_EQ(show.code, 0) << show.text;
  EXPECT_NE(show.text.find("# tuned schedule: record #" + std::to_string(best_id) + " "), std::string::npos) << show.text;
  EXPECT_NE(show.text.find("tunefarm-trace 1\n"), std::string::npos) << show.text;
  size_t nest = show.text.find("# tuned loop nest\nfunc mm(");
  EXPECT_NE(nest, std::string::npos) << show.text;
  EXPECT_GT(show.text.find("# after lowering for code generation"), nest) << show.text;
  // --record: any record of the log, a failed one too; an id that is not the workload's is an error.
  const database::TuningRecord& other = tuned[0].id != best_id ? tuned[0] : tuned[1];
  Output one = RunTunefarm("show " + P("mm.tf") + " --db " + P("log.db") + " --record " + std::to_string(other.id));
  ASSERT_EQ(one.code, 0) << one.text;
  EXPECT_NE(one.text.find("# tuned schedule: record #" + std::to_string(other.id) + " "), std::string::npos) << one.text;
  EXPECT_NE(one.text.find(other.trace), std::string::npos) << one.text;
  EXPECT_NE(one.text.find("# its loop nest\nfunc mm("), std::string::npos) << one.text;
  Output bad = RunTunefarm("show " + P("mm.tf") + " --db " + P("log.db") + " --record " + std::to_string(*failed_id));
  ASSERT_EQ(bad.code, 0) << bad.text;
  EXPECT_NE(bad.text.find("# record #" + std::to_string(*failed_id) + " of " + P("log.db") +
                          ": failed (timeout: run exceeded 10 s)"),
            std::string::npos)
      << bad.text;
  Output missing = RunTunefarm("show " + P("mm.tf") + " --db " + P("log.db") + " --record 9999");
  EXPECT_EQ(missing.code, 1) << missing.text;
  EXPECT_NE(missing.text.find("record #9999 of " + P("log.db") + " is not a record of workload mm"), std::string::npos)
      << missing.text;

  // Link the object with the runtime into a library, load it, run it.
  std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
  std::string link = "cc -shared -o " + P("mm.so") + " " + P("mm.o") + " -L" + runtime + " -ltunefarm_runtime -Wl,-rpath," +
                     runtime + " -lm";
  ASSERT_EQ(std::system(link.c_str()), 0);
  void* lib = dlopen(P("mm.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto fn = reinterpret_cast<int32_t (*)(void*, void*, void*)>(dlsym(lib, "mm"));
  ASSERT_NE(fn, nullptr);
  auto w = ParseWorkloadFile(P("mm.tf"));
  ASSERT_TRUE(w.ok());
  auto f = LowerToPrimFunc(*w);
  ASSERT_TRUE(f.ok());
  HostBuffer a(ir::DataType::Float(32), {64, 32}), b(ir::DataType::Float(32), {32, 48});
  HostBuffer c(ir::DataType::Float(32), {64, 48}), c_ref(ir::DataType::Float(32), {64, 48});
  std::mt19937_64 rng(9);
  a.FillRandom(rng);
  b.FillRandom(rng);
  ASSERT_EQ(fn(a.data(), b.data(), c.data()), 0);
  ASSERT_TRUE(Interpret(*f, {&a, &b, &c_ref}).ok());
  CompareResult cmp = CompareBuffers(c, c_ref, 1e-4, 1e-4);
  EXPECT_TRUE(cmp.equal) << cmp.message;
  dlclose(lib);
}

TEST_F(CliTest, CompileWithoutRecordFallsBackOrFailsWhenTuningIsRequired) {
  ASSERT_EQ(RunTunefarm("tune " + P("mm.tf") + " --trials 2 --batch-size 1 --repeat 1 --min-repeat-ms 1 --db " + P("log.db") +
                " --curve ''").code, 0);
  std::ofstream(P("other.tf")) << "workload other(N = 32) {\n  X = input f32[N]\n  Y[i] = X[i] * 2.0\n  output Y\n}\n";
  Output fallback = RunTunefarm("compile " + P("other.tf") + " --db " + P("log.db") + " -o " + P("o.o"));
  EXPECT_EQ(fallback.code, 0) << fallback.text;
  EXPECT_NE(fallback.text.find("warning: no tuning record"), std::string::npos) << fallback.text;
  Output required = RunTunefarm("compile " + P("other.tf") + " --db " + P("log.db") + " -o " + P("o.o") + " --require-tuned");
  EXPECT_EQ(required.code, 3) << required.text;
  EXPECT_NE(required.text.find("--require-tuned"), std::string::npos) << required.text;
  Output show = RunTunefarm("show " + P("other.tf") + " --db " + P("log.db"));
  EXPECT_EQ(show.code, 0) << show.text;
  EXPECT_NE(show.text.find("no tuning record"), std::string::npos) << show.text;
  EXPECT_EQ(show.text.find("# tuned"), std::string::npos) << show.text;

  // A log whose only record of `other` no longer replays (tuned for another
  // loop nest): show says which record and why, and exits 1; --record too.
  auto other = ParseWorkloadFile(P("other.tf"));
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  int64_t stale_id = 0;
  {
    auto db = database::Database::Open(P("log.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    std::optional<database::TuningRecord> any;
    ASSERT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                    any = r;
                    return Status::OK();
                  }).ok());
    ASSERT_TRUE(any.has_value());
    ASSERT_TRUE((*db)->CommitWorkload({StructuralHashHex(*other), other->name, PrintWorkload(*other)}).ok());
    database::TuningRecord stale;
    stale.workload_hash = StructuralHashHex(*other);
    stale.target = any->target;
    stale.trace = "tunefarm-trace 1\nb0 = get_block(\"Y_before\")\n";
    stale.run_secs = {1e-6};
    auto id = (*db)->CommitRecord(stale);
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    stale_id = *id;
  }
  for (const std::string& extra : {std::string(), " --record " + std::to_string(stale_id)}) {
    Output stale_show = RunTunefarm("show " + P("other.tf") + " --db " + P("log.db") + extra);
    EXPECT_EQ(stale_show.code, 1) << extra << "\n" << stale_show.text;
    EXPECT_NE(stale_show.text.find("Y_before"), std::string::npos) << extra << "\n" << stale_show.text;
    EXPECT_NE(stale_show.text.find("error"), std::string::npos) << extra << "\n" << stale_show.text;
  }
  Output stale_show = RunTunefarm("show " + P("other.tf") + " --db " + P("log.db"));
  EXPECT_NE(stale_show.text.find("record #" + std::to_string(stale_id) + " of " + P("log.db") + " does not replay on other"),
            std::string::npos)
      << stale_show.text;
  Output stale_run = RunTunefarm("run " + P("other.tf") + " --db " + P("log.db"));
  EXPECT_EQ(stale_run.code, 1) << stale_run.text;
  EXPECT_NE(stale_run.text.find("record #" + std::to_string(stale_id) + " of " + P("log.db") + " does not replay on other"),
            std::string::npos)
      << stale_run.text;
}

// `run --db` runs the record compile would build, checked and timed with this
// build's code, next to the log's time: against the interpreter when the
// workload is small, else against the default schedule at full size (itself
// checked on a shrunk copy). A workload the log has no record of runs its
// default schedule and says so.
TEST_F(CliTest, RunWithDbChecksAndTimesTheLogsBestSchedule) {
  std::ofstream(dir_ / "big.tf") << "workload big(M = 256, N = 256, K = 512) {\n"
                                    "  A = input f32[M, K]\n  B = input f32[K, N]\n"
                                    "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
  const std::string quick = " --trials 6 --batch-size 6 --repeat 1 --min-repeat-ms 1 --curve '' --db " + P("log.db");
  ASSERT_EQ(RunTunefarm("tune " + P("mm.tf") + quick).code, 0);
  ASSERT_EQ(RunTunefarm("tune " + P("big.tf") + quick).code, 0);
  auto best_id = [&](const std::string& name) -> int64_t {
    auto db = database::Database::Open(P("log.db"));
    EXPECT_TRUE(db.ok());
    auto w = ParseWorkloadFile(P(name));
    EXPECT_TRUE(w.ok());
    BestByTrace ranking;
    EXPECT_TRUE((*db)->ForEachRecord({StructuralHashHex(*w), ""}, [&](const database::TuningRecord& r) {
                    ranking.Add(r);
                    return Status::OK();
                  }).ok());
    return ranking.id();
  };
  Output small = RunTunefarm("run " + P("mm.tf") + " --db " + P("log.db") + " --repeat 2 --min-repeat-ms 5");
  ASSERT_EQ(small.code, 0) << small.text;
  EXPECT_NE(small.text.find("schedule  tuned: record #" + std::to_string(best_id("mm.tf")) + " of the user log"),
            std::string::npos)
      << small.text;
  EXPECT_NE(small.text.find("compile   "), std::string::npos) << small.text;
  EXPECT_NE(small.text.find("check     correct: matches the reference interpreter on random inputs, full size"),
            std::string::npos)
      << small.text;
  EXPECT_TRUE(std::regex_search(small.text, std::regex("[0-9.]+x the log's time for this record"))) << small.text;

  Output big = RunTunefarm("run " + P("big.tf") + " --db " + P("log.db") + " --repeat 2 --min-repeat-ms 5");
  ASSERT_EQ(big.code, 0) << big.text;
  EXPECT_NE(big.text.find("schedule  tuned: record #" + std::to_string(best_id("big.tf"))), std::string::npos)
      << big.text;
  EXPECT_NE(big.text.find("check     default schedule correct: matches the reference interpreter on random inputs, "
                          "a shrunk copy"),
            std::string::npos)
      << big.text;
  EXPECT_NE(big.text.find("check     correct: the tuned kernel matches the default schedule on random inputs, full "
                          "size"),
            std::string::npos)
      << big.text;

  std::ofstream(P("other.tf")) << "workload other(N = 32) {\n  X = input f32[N]\n  Y[i] = X[i] * 2.0\n  output Y\n}\n";
  Output untuned = RunTunefarm("run " + P("other.tf") + " --db " + P("log.db"));
  ASSERT_EQ(untuned.code, 0) << untuned.text;
  EXPECT_NE(untuned.text.find("schedule  default: " + P("log.db") + " holds no tuning record"), std::string::npos)
      << untuned.text;
  EXPECT_EQ(untuned.text.find("the log's time"), std::string::npos) << untuned.text;
}

TEST_F(CliTest, UserErrorsGetAClearMessageAndExitCodeOne) {
  std::ofstream(P("bad.tf")) << "workload bad(N = 4) {\n  X = input f32[N]\n  Y[i: N] = Z[i]\n  output Y\n}\n";
  std::ofstream(P("corrupt.db")) << "this is not a database";
  struct Case {
    std::string args;
    std::string expect;
  } cases[] = {
      {"compile " + P("bad.tf") + " -o " + P("x.o"), "bad.tf:3:"},
      {"run " + P("bad.tf"), "bad.tf:3:"},
      {"tune " + P("bad.tf") + " --db " + P("t.db"), "bad.tf:3:"},
      {"compile " + P("mm.tf") + " --db " + P("missing.db") + " -o " + P("x.o"), "missing.db"},
      {"compile " + P("mm.tf") + " --db " + P("corrupt.db") + " -o " + P("x.o"), "not a tunefarm database"},
      {"tune " + P("mm.tf") + " --db " + P("corrupt.db"), "not a tunefarm database"},
      {"show " + P("mm.tf") + " --db " + P("corrupt.db"), "not a tunefarm database"},
      {"run " + P("mm.tf") + " --db " + P("corrupt.db"), "not a tunefarm database"},
      {"run " + P("mm.tf") + " --db " + P("missing.db"), "missing.db"},
      {"show " + P("mm.tf") + " --target 'llvm -mcpu=notacpu'", "notacpu"},
      {"compile " + P("mm.tf") + " --target 'llvm -mcpu=notacpu' -o " + P("x.o"), "notacpu"},
      {"compile " + P("mm.tf") + " --target 'gpu' -o " + P("x.o"), "gpu"},
      {"run " + P("mm.tf") + " --set M=abc", "not an integer"},
      {"run " + P("mm.tf") + " --set M=0", "M"},
      {"tune " + P("mm.tf") + " --target 'llvm -mtriple=aarch64-linux-gnu' --db " + P("t.db"), "cannot run on this machine"},
      {"tune " + P("mm.tf") + " --threads 2 --target 'llvm -num-threads=1' --db " + P("t.db"), "--threads 2 contradicts"},
  };
  for (const Case& c : cases) {
    Output out = RunTunefarm(c.args);
    EXPECT_EQ(out.code, 1) << c.args << "\n" << out.text;
    EXPECT_NE(out.text.find(c.expect), std::string::npos) << c.args << "\n" << out.text;
    EXPECT_NE(out.text.find("error"), std::string::npos) << c.args << "\n" << out.text;
  }
  // The corrupt log is left exactly as it was.
  std::ifstream in(P("corrupt.db"));
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "this is not a database");
}

// Options checked by the command line parser: a value out of range names the
// option and its range, exits non-zero and creates no log.
TEST_F(CliTest, OutOfRangeOptionsNameTheOptionAndTheRange) {
  for (const std::string& option : {std::string("--epsilon 1.5"), std::string("--epsilon -0.1"),
                                    std::string("--batch-size 0"), std::string("--population 16"),
                                    std::string("--generations -1"), std::string("--transfer-check -1"),
                                    std::string("--choice-seeds -1"), std::string("--choice-seeds 65"),
                                    std::string("--threads -1"), std::string("--seeds-per-choice 0"),
                                    std::string("--choice-picks 17"), std::string("--final-candidates -1"),
                                    std::string("--final-candidates 65"), std::string("--final-measurements 1")}) {
    Output out = RunTunefarm("tune " + P("mm.tf") + " --db " + P("range.db") + " " + option);
    EXPECT_NE(out.code, 0) << option << "\n" << out.text;
    EXPECT_NE(out.text.find(option.substr(0, option.find(' '))), std::string::npos) << out.text;
    EXPECT_NE(out.text.find("not in range"), std::string::npos) << out.text;
    EXPECT_FALSE(fs::exists(P("range.db"))) << option;
  }
}

// --final-candidates: the search leaves an eighth of the 16 trials, and the
// final round spends them measuring the fastest kernels again.
TEST_F(CliTest, HelpTeachesEveryCommand) {
  Output help = RunTunefarm("--help");
  EXPECT_EQ(help.code, 0);
  for (const char* cmd : {"tune", "run", "show", "compile", "db"}) EXPECT_NE(help.text.find(cmd), std::string::npos) << cmd;
  Output tune_help = RunTunefarm("tune --help");
  EXPECT_NE(tune_help.text.find("resumes"), std::string::npos) << tune_help.text;
  EXPECT_NE(RunTunefarm("compile --help").text.find("--require-tuned"), std::string::npos);
}

TEST_F(CliTest, SharedLibraryLoadsAndRuns) {
  Output out = RunTunefarm("compile " + P("mm.tf") + " --shared -o " + P("mm.so") + " --header " + P("mm.h"));
  ASSERT_EQ(out.code, 0) << out.text;
  void* lib = dlopen(P("mm.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  EXPECT_NE(dlsym(lib, "mm"), nullptr);
  dlclose(lib);
  Output cross = RunTunefarm("compile " + P("mm.tf") + " --shared --target 'llvm -mtriple=aarch64-linux-gnu' -o " + P("a.so"));
  EXPECT_EQ(cross.code, 1) << cross.text;
  EXPECT_NE(cross.text.find("--shared"), std::string::npos) << cross.text;
}

TEST_F(CliTest, CrossTargetObjectForAArch64) {
  Output out = RunTunefarm("compile " + P("mm.tf") + " --target 'llvm -mtriple=aarch64-linux-gnu -mattr=+neon' -o " + P("arm.o"));
  ASSERT_EQ(out.code, 0) << out.text;
  std::ifstream obj(P("arm.o"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(obj)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 20u);
  EXPECT_EQ(bytes.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(uint8_t(bytes[18]), 183);  // e_machine EM_AARCH64
}

}  // namespace
}  // namespace tunefarm
