// `tunefarm compile` for an arm64 board whose only record was measured under
// emulation (an arm64 worker under qemu): the kernel is built from it (exit
// 0), stderr warns naming the workload, target, record uid and device, and
// the header's schedule line says so; `tunefarm db best`, `db top` and
// `show --db` show the mark. A real board's record, slower, replaces it and the warning goes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_test_util.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"

namespace tunefarm::cli_test {
namespace {

constexpr char kBoard[] = "llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class CompileEmulatedTest : public CliFolderTest {
 protected:
  CompileEmulatedTest() : CliFolderTest("tunefarm_compile_emulated_", 32, 24, 16) {}

  // mm's workload and a trace that splits and vectorizes its inner loop.
  void SetUp() override {
    CliFolderTest::SetUp();
    std::ifstream in(P("mm.tf"));
    std::stringstream text;
    text << in.rdbuf();
    auto w = ParseWorkload(text.str());
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    workload_ = *w;
    auto f = LowerToPrimFunc(workload_);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    Schedule sch(*f);
    auto block = sch.GetBlock("C");
    ASSERT_TRUE(block.ok());
    auto loops = sch.GetLoops(*block);
    ASSERT_TRUE(loops.ok());
    ASSERT_TRUE(sch.Split((*loops)[0], {4, 8}).ok());
    trace_ = sch.trace().ToText();
  }

  // A record of the board's target: by a worker under qemu (`emulated`, its
  // fingerprint's arch "cortex-a72-emulated") or by the board itself.
  database::TuningRecord Commit(double seconds, bool emulated) {
    auto db = database::Database::Open(P("log.db"));
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_TRUE((*db)->CommitWorkload({StructuralHashHex(workload_), workload_.name, PrintWorkload(workload_)}).ok());
    database::TuningRecord record;
    record.uid = database::NewRecordUid();  // the caller checks messages for it
    record.workload_hash = StructuralHashHex(workload_);
    record.target.target = Target::Parse(kBoard).value().ToString();
    record.target.fingerprint = {"aarch64", {"+neon"}, emulated ? "cortex-a72-emulated" : "cortex-a72",
                                 emulated ? 2 : 4, "tuner-built lowering-r" + std::to_string(kLoweringRevision)};
    record.trace = trace_;
    record.run_secs = {seconds};
    record.worker = emulated ? "ci:cpu#3" : "pi:cpu#1";
    record.device = emulated ? "cpu-cortex-a72-emulated" : "cpu-cortex-a72";
    record.emulated = emulated;
    auto id = (*db)->CommitRecord(record);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    record.id = id.ok() ? *id : 0;
    return record;
  }

  Output Compile() {
    return RunTunefarm("compile " + P("mm.tf") + " --target '" + kBoard + "' --db " + P("log.db") + " -o " +
                       P("mm.o") + " --header " + P("mm.h") + " --require-tuned");
  }

  Workload workload_;
  std::string trace_;
};

TEST_F(CompileEmulatedTest, TheOnlyRecordMeasuredUnderEmulationIsUsedWithAWarning) {
  database::TuningRecord emulated = Commit(2e-3, /*emulated=*/true);
  Output out = Compile();
  ASSERT_EQ(out.code, 0) << "the emulated record is the only one and must be used:\n" << out.text;
  EXPECT_NE(out.text.find("mm: using record #" + std::to_string(emulated.id)), std::string::npos) << out.text;
  // The target as the compile names it (canonical: LLVM's normalised triple).
  const std::string warning = "mm: warning: the only record for mm on llvm -mtriple=aarch64";
  EXPECT_NE(out.text.find(warning), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("-mcpu=cortex-a72 -mattr=+neon was measured under emulation (record uid " + emulated.uid +
                          ", device " + emulated.device),
            std::string::npos)
      << out.text;
  EXPECT_NE(out.text.find("says nothing about a real board"), std::string::npos) << out.text;
  const std::string header = ReadFile(P("mm.h"));
  EXPECT_NE(header.find("record #" + std::to_string(emulated.id)), std::string::npos) << header;
  EXPECT_NE(header.find("UNDER EMULATION (record uid " + emulated.uid), std::string::npos) << header;
  EXPECT_GT(ReadFile(P("mm.o")).size(), 0u);

  Output best = RunTunefarm("db best --workload mm --target '" + std::string(kBoard) + "' --db " + P("log.db"));
  ASSERT_EQ(best.code, 0) << best.text;
  EXPECT_NE(best.text.find("measured under emulation"), std::string::npos) << best.text;
  EXPECT_NE(best.text.find("emulated yes"), std::string::npos) << best.text;
  Output top = RunTunefarm("db top --workload mm --target '" + emulated.target.target + "' --db " + P("log.db") +
                           " --json");
  ASSERT_EQ(top.code, 0) << top.text;
  EXPECT_NE(top.text.find("\"emulated\":true"), std::string::npos) << top.text;
  Output show = RunTunefarm("show " + P("mm.tf") + " --target '" + std::string(kBoard) + "' --db " + P("log.db"));
  ASSERT_EQ(show.code, 0) << show.text;
  EXPECT_NE(show.text.find("measured on cortex-a72-emulated under emulation (says nothing about a real board)"),
            std::string::npos)
      << show.text;

  // The board's own record, slower, is the answer now: no warning.
  database::TuningRecord real = Commit(7e-3, /*emulated=*/false);
  Output again = Compile();
  ASSERT_EQ(again.code, 0) << again.text;
  EXPECT_NE(again.text.find("mm: using record #" + std::to_string(real.id)), std::string::npos) << again.text;
  EXPECT_EQ(again.text.find("emulation"), std::string::npos) << again.text;
  EXPECT_EQ(ReadFile(P("mm.h")).find("EMULATION"), std::string::npos);
  Output stats = RunTunefarm("db stats --db " + P("log.db"));
  EXPECT_NE(stats.text.find("1 emulated"), std::string::npos) << stats.text;
}

}  // namespace
}  // namespace tunefarm::cli_test
