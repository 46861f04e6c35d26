// The command line's own errors and pages: a mistyped option is named with
// the closest real one, every argument error exits 1, each command group's
// --help ends with its own examples, `compile` says why it cannot write, and
// `db best` / `db top` take the short target `llvm` as the services do.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

namespace tunefarm {
namespace {

namespace fs = std::filesystem;

using cli_test::Output;
using cli_test::RunTunefarm;

class ArgumentErrors : public cli_test::CliFolderTest {
 protected:
  ArgumentErrors() : CliFolderTest("tunefarm_args_", 24, 40, 16) {}
};

TEST_F(ArgumentErrors, AMistypedOptionIsNamedWithTheClosestRealOne) {
  Output out = RunTunefarm("tune " + P("mm.tf") + " --trails 8 --db " + P("t.db"));
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("unknown option --trails for `tunefarm tune`; did you mean --trials?"), std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("File does not exist"), std::string::npos) << out.text;
  EXPECT_FALSE(fs::exists(P("t.db")));

  Output nested = RunTunefarm("db top --workload mm --target llvm --db " + P("t.db") + " --jsn");
  EXPECT_EQ(nested.code, 1) << nested.text;
  EXPECT_NE(nested.text.find("unknown option --jsn for `tunefarm db top`; did you mean --json?"), std::string::npos)
      << nested.text;

  // Nothing close: no suggestion, but the way to the options.
  Output far = RunTunefarm("run " + P("mm.tf") + " --completely-different");
  EXPECT_EQ(far.code, 1) << far.text;
  EXPECT_EQ(far.text.find("did you mean"), std::string::npos) << far.text;
  EXPECT_NE(far.text.find("tunefarm run --help"), std::string::npos) << far.text;
}

TEST_F(ArgumentErrors, EveryArgumentErrorExitsOne) {
  for (const std::string& args :
       {std::string("tune"), std::string("no-such-command"), "tune " + P("mm.tf") + " --batch-size abc",
        "tune " + P("missing.tf"), "compile " + P("mm.tf"), std::string("db top --workload mm"),
        "jobs submit " + P("mm.tf") + " --insecure", "jobs submit " + P("mm.tf") + " --device-key k --trials 0",
        "run " + P("mm.tf") + " --threads", std::string("db")}) {
    Output out = RunTunefarm(args);
    EXPECT_EQ(out.code, 1) << args << "\n" << out.text;
    EXPECT_FALSE(out.text.empty()) << args;
  }
  EXPECT_EQ(RunTunefarm("--version").code, 0);
  EXPECT_EQ(RunTunefarm("tune --help").code, 0);
}

TEST_F(ArgumentErrors, CommandGroupsHelpEndsWithTheirOwnExamples) {
  const std::string top_level_example = "tunefarm run configs/workloads/gmm_1024.tf --threads 1";
  for (std::string group : {"db", "fleet", "jobs"}) {
    Output help = RunTunefarm(group + " --help");
    EXPECT_EQ(help.code, 0) << help.text;
    EXPECT_NE(help.text.find("tunefarm " + group + " "), std::string::npos) << group << "\n" << help.text;
    EXPECT_EQ(help.text.find(top_level_example), std::string::npos) << group << "\n" << help.text;
  }
  Output submit = RunTunefarm("jobs submit --help");
  EXPECT_NE(submit.text.find("1..100000"), std::string::npos) << submit.text;
  Output zero = RunTunefarm("jobs submit " + P("mm.tf") + " --device-key k --trials 0 --insecure");
  EXPECT_EQ(zero.code, 1);
  EXPECT_NE(zero.text.find("--trials"), std::string::npos) << zero.text;
}

TEST_F(ArgumentErrors, CompileSaysWhyItCannotWriteBeforeCompiling) {
  Output missing = RunTunefarm("compile " + P("mm.tf") + " -o /no/such/dir/k.o");
  EXPECT_EQ(missing.code, 1) << missing.text;
  EXPECT_NE(missing.text.find("cannot write -o /no/such/dir/k.o: the folder /no/such/dir does not exist"),
            std::string::npos)
      << missing.text;
  Output header_is_dir = RunTunefarm("compile " + P("mm.tf") + " -o " + P("k.o") + " --header " + dir_.string());
  EXPECT_EQ(header_is_dir.code, 1) << header_is_dir.text;
  EXPECT_NE(header_is_dir.text.find("it is a folder"), std::string::npos) << header_is_dir.text;
  EXPECT_FALSE(fs::exists(P("k.o"))) << "nothing is written when one output cannot be";
  // A file where a folder should be.
  std::ofstream(P("plain")) << "x";
  Output under_file = RunTunefarm("compile " + P("mm.tf") + " -o " + P("plain") + "/k.o");
  EXPECT_EQ(under_file.code, 1) << under_file.text;
  EXPECT_NE(under_file.text.find("is not a folder"), std::string::npos) << under_file.text;
}

TEST_F(ArgumentErrors, DbBestAndTopTakeTheShortTargetAsTheServicesDo) {
  Output tune = RunTunefarm("tune " + P("mm.tf") + " --trials 4 --batch-size 4 --db " + P("log.db") + " --curve ''");
  ASSERT_EQ(tune.code, 0) << tune.text;
  Output top = RunTunefarm("db top --workload mm --target llvm -k 3 --db " + P("log.db"));
  EXPECT_EQ(top.code, 0) << top.text;
  EXPECT_EQ(top.text.find("0 record(s)"), std::string::npos) << top.text;
  EXPECT_NE(top.text.find("#1"), std::string::npos) << top.text;
  Output best = RunTunefarm("db best --workload mm --target llvm --db " + P("log.db"));
  EXPECT_EQ(best.code, 0) << best.text;
  EXPECT_EQ(best.text.find("no successful record"), std::string::npos) << best.text;
  Output exported = RunTunefarm("db export --target llvm --db " + P("log.db"));
  EXPECT_EQ(exported.code, 0) << exported.text;
  EXPECT_NE(exported.text.find("\"trace\""), std::string::npos) << exported.text;
  Output bad = RunTunefarm("db best --workload mm --target 'llvm -mtriple=banana' --db " + P("log.db"));
  EXPECT_EQ(bad.code, 1) << bad.text;
  EXPECT_NE(bad.text.find("banana"), std::string::npos) << bad.text;
}

// Token files are read the same way by the clients and the worker, and an
// error names the file's absolute path and the system's reason.
TEST_F(ArgumentErrors, TokenFileErrorsNameTheAbsolutePathAndWhy) {
  const std::string binary = std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm";
  auto in_dir = [&](const std::string& args) {
    return testing_support::RunCommand("cd " + dir_.string() + " && " + binary + " " + args);
  };
  for (const std::string& command : {std::string("jobs list --insecure --tuner 127.0.0.1:1"),
                                     std::string("worker --insecure --tuner 127.0.0.1:1 --device test")}) {
    Output missing = in_dir(command + " --token-file nope.token");
    EXPECT_EQ(missing.code, 1) << command << "\n" << missing.text;
    EXPECT_NE(missing.text.find("--token-file: cannot read " + P("nope.token") + ": No such file or directory"),
              std::string::npos)
        << command << "\n" << missing.text;
    std::ofstream(dir_ / "two.token") << "two words\n";
    Output two = in_dir(command + " --token-file two.token");
    EXPECT_EQ(two.code, 1) << command << "\n" << two.text;
    EXPECT_NE(two.text.find(P("two.token") + " must hold the token alone, on one line"), std::string::npos)
        << command << "\n" << two.text;
  }
}

}  // namespace
}  // namespace tunefarm
