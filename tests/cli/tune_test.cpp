// `tunefarm tune` end to end: the closing round, thread counts in the
// device key, what it says about transferred and realigned records, and
// records of an older toolchain measured again.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/database/database.h"
#include "cli_test_util.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::Output;
using cli_test::RunTunefarm;

class CliTuneTest : public cli_test::CliFolderTest {
 protected:
  CliTuneTest() : CliFolderTest("tunefarm_cli_tune_", 64, 48, 32) {}
};

TEST_F(CliTuneTest, TuneFinalRoundMeasuresTheFastestAgainWithinTheBudget) {
  Output tune = RunTunefarm("tune " + P("mm.tf") + " --trials 16 --batch-size 4 --repeat 2 --min-repeat-ms 2 " +
                            "--final-candidates 2 --db " + P("final.db") + " --curve ''");
  ASSERT_EQ(tune.code, 0) << tune.text;
  EXPECT_NE(tune.text.find("the final round measured the "), std::string::npos) << tune.text;
  EXPECT_NE(tune.text.find("again (2 trials), up to 3 measurements each"), std::string::npos) << tune.text;
  auto db = database::Database::Open(P("final.db"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::map<std::string, int> per_trace;
  std::vector<std::string> traces;  // in commit order
  ASSERT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                  traces.push_back(r.trace);
                  ++per_trace[r.trace];
                  return Status::OK();
                }).ok());
  // The final round's trials are part of --trials; past them only the last
  // best's confirmation, should the final round leave one measured once.
  ASSERT_GE(traces.size(), 16u);
  std::map<std::string, int> seen;
  for (size_t i = 0; i < traces.size(); ++i) {
    if (i >= 16) {
      EXPECT_GE(seen[traces[i]], 1) << "record " << i + 1 << " past the budget is a new kernel";
    }
    ++seen[traces[i]];
  }
  // The round's two trials measured kernels of the search again.
  for (size_t i = 14; i < 16; ++i) EXPECT_GE(per_trace[traces[i]], 2) << "record " << i + 1;
  for (const auto& [trace, count] : per_trace) EXPECT_LE(count, 3);
}

// Records are kept per thread count: --threads 1 tunes for 'llvm
// -num-threads=1', which compile names to get those kernels; a run at the
// default thread count resumes none of them, and compile for the default
// target serves its own records first.
TEST_F(CliTuneTest, TuneWithThreadsKeysItsRecordsByThatThreadCount) {
  const std::string quick = " --trials 3 --batch-size 3 --repeat 1 --min-repeat-ms 1 --curve '' --db " + P("log.db");
  Output one = RunTunefarm("tune " + P("mm.tf") + " --threads 1" + quick);
  ASSERT_EQ(one.code, 0) << one.text;
  EXPECT_NE(one.text.find("-num-threads=1"), std::string::npos) << "the job names the target it tunes for\n" << one.text;
  Output all = RunTunefarm("tune " + P("mm.tf") + quick);
  ASSERT_EQ(all.code, 0) << all.text;
  EXPECT_EQ(all.text.find("resumed"), std::string::npos) << "one thread's records are not this run's\n" << all.text;

  std::map<bool, std::set<int64_t>> ids;  // keyed at one thread -> successful record ids
  {
    auto db = database::Database::Open(P("log.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    int records = 0;
    ASSERT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord& r) {
                    ++records;
                    EXPECT_EQ(r.target.target.find("-num-threads=2"), std::string::npos) << r.target.target;
                    if (r.ok()) ids[r.target.target.find(" -num-threads=1") != std::string::npos].insert(r.id);
                    return Status::OK();
                  }).ok());
    EXPECT_EQ(records, 6);
  }
  ASSERT_FALSE(ids[true].empty());
  ASSERT_FALSE(ids[false].empty());
  auto compiled_record = [&](const std::string& target) -> int64_t {
    Output out = RunTunefarm("compile " + P("mm.tf") + target + " --db " + P("log.db") + " -o " + P("mm.o") +
                             " --header " + P("mm.h") + " --require-tuned");
    EXPECT_EQ(out.code, 0) << target << "\n" << out.text;
    std::ifstream header(P("mm.h"));
    std::string text((std::istreambuf_iterator<char>(header)), std::istreambuf_iterator<char>());
    std::smatch m;
    return std::regex_search(text, m, std::regex("record id: ([0-9]+)\n")) ? std::stoll(m[1]) : 0;
  };
  EXPECT_TRUE(ids[true].count(compiled_record(" --target 'llvm -num-threads=1'")));
  EXPECT_TRUE(ids[false].count(compiled_record("")));
}

// Transfer: a second workload's job says how many records of the first it
// learned from and what the transfer check decided; --transfer-check 0 keeps
// the records unchecked and says nothing of a check.
TEST_F(CliTuneTest, TuneReportsTransferAndTheCheck) {
  const std::string quick = " --repeat 1 --min-repeat-ms 1 --curve '' --db " + P("log.db");
  ASSERT_EQ(RunTunefarm("tune " + P("mm.tf") + " --trials 16 --batch-size 8" + quick).code, 0);
  auto write = [&](const std::string& name, int m) {
    std::ofstream(dir_ / name) << "workload " << name.substr(0, name.find('.')) << "(M = " << m
                               << ", N = 48, K = 32) {\n  A = input f32[M, K]\n  B = input f32[K, N]\n"
                                  "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
  };
  write("mm2.tf", 96);
  write("mm3.tf", 80);
  // A run may end with a confirmation past its budget: count what the log holds.
  auto records_in_log = [&] {
    auto db = database::Database::Open(P("log.db"));
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    int n = 0;
    if (db.ok()) {
      EXPECT_TRUE((*db)->ForEachRecord({}, [&](const database::TuningRecord&) { ++n; return Status::OK(); }).ok());
    }
    return n;
  };
  const int mm_records = records_in_log();
  Output checked = RunTunefarm("tune " + P("mm2.tf") + " --trials 33 --batch-size 8 --transfer-check 20" + quick);
  ASSERT_EQ(checked.code, 0) << checked.text;
  EXPECT_NE(checked.text.find("warm-started from " + std::to_string(mm_records) + " records of 1 other workload(s)"),
            std::string::npos)
      << checked.text;
  const int mm_and_mm2_records = records_in_log();
  EXPECT_TRUE(checked.text.find("dropped after") != std::string::npos ||
              checked.text.find("kept: on") != std::string::npos)
      << checked.text;
  Output unchecked = RunTunefarm("tune " + P("mm3.tf") + " --trials 33 --batch-size 8 --transfer-check 0" + quick);
  ASSERT_EQ(unchecked.code, 0) << unchecked.text;
  EXPECT_NE(unchecked.text.find("warm-started from " + std::to_string(mm_and_mm2_records) +
                                " records of 2 other workload(s)"),
            std::string::npos)
      << unchecked.text;
  EXPECT_EQ(unchecked.text.find("dropped after"), std::string::npos) << unchecked.text;
  EXPECT_EQ(unchecked.text.find("kept: on"), std::string::npos) << unchecked.text;
}

// A log written by an older design space (here: the padding rule off, as
// before it existed) is resumed with the current one: tune says how many of
// the log's best records it realigned; a run on its own log says nothing.
TEST_F(CliTuneTest, TuneSaysItRealignedRecordsOfAnOlderDesignSpace) {
  std::ofstream(dir_ / "conv.tf") << "workload conv(C = 4, H = 8, W = 8, K = 16) {\n"
                                     "  X = input f32[C, H, W]\n  Wt = input const f32[K, C, 3, 3]\n"
                                     "  out[k, h: H, w: W] = sum(c: C, r: 3, s: 3)\n"
                                     "    select(h + r - 1 >= 0 && h + r - 1 < H && w + s - 1 >= 0 && w + s - 1 < W,\n"
                                     "           X[c, h + r - 1, w + s - 1], 0.0) * Wt[k, c, r, s]\n  output out\n}\n";
  fs::copy(fs::path(TUNEFARM_SOURCE_DIR) / "configs", dir_ / "older", fs::copy_options::recursive);
  const fs::path rules = dir_ / "older" / "sketch" / "cpu.toml";
  std::ifstream in(rules);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const size_t at = text.find("pad_inputs = true");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 17, "pad_inputs = false");
  std::ofstream(rules) << text;

  const std::string quick = " --batch-size 8 --repeat 1 --min-repeat-ms 1 --curve '' --db " + P("log.db");
  Output older = RunTunefarm("tune " + P("conv.tf") + " --trials 16 --configs " + (dir_ / "older").string() + quick);
  ASSERT_EQ(older.code, 0) << older.text;
  EXPECT_EQ(older.text.find("realigned"), std::string::npos) << older.text;
  Output resumed = RunTunefarm("tune " + P("conv.tf") + " --trials 24 --configs " +
                               (fs::path(TUNEFARM_SOURCE_DIR) / "configs").string() + quick);
  ASSERT_EQ(resumed.code, 0) << resumed.text;
  EXPECT_TRUE(std::regex_search(resumed.text, std::regex("conv: [1-9][0-9]* of the log's best records were written by "
                                                         "an older design space and realigned with this one")))
      << resumed.text;
}

// A log written by an older tunefarm (its records name the toolchain
// 'llvm-16'): compile serves its best with a note that the time is of other
// code; tune says it measured the fastest again, after which compile serves
// this build's records without the note.
TEST_F(CliTuneTest, TuneMeasuresAgainTheFastestRecordsOfAnOlderToolchain) {
  const std::string quick = " --batch-size 5 --repeat 1 --min-repeat-ms 1 --curve '' --db ";
  ASSERT_EQ(RunTunefarm("tune " + P("mm.tf") + " --trials 10" + quick + P("log.db")).code, 0);
  int older_records = 0;
  {
    auto fresh = database::Database::Open(P("log.db"));
    auto older = database::Database::Open(P("older.db"));
    ASSERT_TRUE(fresh.ok() && older.ok());
    auto workloads = (*fresh)->ListWorkloads();
    ASSERT_TRUE(workloads.ok());
    for (const auto& w : *workloads) ASSERT_TRUE((*older)->CommitWorkload(w).ok());
    ASSERT_TRUE((*fresh)->ForEachRecord({}, [&](database::TuningRecord r) {
                    r.uid.clear();
                    r.target.fingerprint.toolchain = "llvm-16";
                    ++older_records;
                    return (*older)->CommitRecord(r).status();
                  }).ok());
  }
  const std::string compile = "compile " + P("mm.tf") + " --db " + P("older.db") + " -o " + P("mm.o");
  Output stale = RunTunefarm(compile);
  ASSERT_EQ(stale.code, 0) << stale.text;
  EXPECT_NE(stale.text.find("same_arch match"), std::string::npos) << stale.text;
  EXPECT_NE(stale.text.find("note: that time was taken with code of toolchain 'llvm-16'"), std::string::npos)
      << stale.text;

  Output resumed = RunTunefarm("tune " + P("mm.tf") + " --trials 10" + quick + P("older.db"));
  ASSERT_EQ(resumed.code, 0) << resumed.text;
  // 10 trials, and the last best's confirmations should they have gone past them.
  EXPECT_TRUE(std::regex_search(resumed.text, std::regex("mm: " + std::to_string(older_records) +
                                                         " of the log's records were timed with code of "
                                                         "toolchain 'llvm-16'; (their [1-8] fastest were measured "
                                                         "again|none beat this build's own best)")))
      << resumed.text;
  Output current = RunTunefarm(compile);
  ASSERT_EQ(current.code, 0) << current.text;
  EXPECT_NE(current.text.find("same_device match"), std::string::npos) << current.text;
  EXPECT_EQ(current.text.find("note:"), std::string::npos) << current.text;
}

}  // namespace
}  // namespace tunefarm
