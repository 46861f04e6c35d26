// Shared by the tests of `tunefarm compile MODEL.onnx`: the test models
// (paths, imported with their weights), how far a run's values are from the
// test-model script's, a C program linked against a compiled model's object
// and loaded, and a tuning record whose schedule packs a task's weights.
#pragma once

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "tunefarm/compiler/codegen/llvm/toolchain.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target_fingerprint.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/database/database.h"
#include "tunefarm/frontend/model.h"

namespace tunefarm::cli_test {

// A file the test-model script wrote (an .onnx model or a .pb tensor).
inline std::string Model(const std::string& name) { return std::string(TUNEFARM_TEST_MODELS_DIR) + "/" + name; }

// The test model `file` (an .onnx under Model()) imported with its weights read.
inline Result<frontend::Model> ImportWithWeights(const std::string& file) {
  frontend::ImportOptions options;
  options.read_weights = true;
  return frontend::ImportOnnx(Model(file), options);
}

// The worst of |actual - expected| / (|expected| + 1e-3); infinite where the
// sizes differ or a value is NaN.
inline double WorstError(const std::vector<float>& actual, const std::vector<float>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double err = std::fabs(double(actual[i]) - expected[i]) / (std::fabs(expected[i]) + 1e-3);
    worst = std::max(worst, std::isnan(actual[i]) ? INFINITY : err);
  }
  return worst;
}

// A record for `task` whose schedule copies the weights its block `block`
// reads (read 1) into panels of `factor` along their dimension 0, at the
// root: a prepack split. Committed with its workload into `db`; its id.
inline Result<int64_t> CommitPackingRecord(database::Database& db, const Workload& task, const std::string& block,
                                           int64_t factor) {
  TF_ASSIGN_OR_RETURN(ir::PrimFunc f, LowerToPrimFunc(task));
  Schedule sch(f, 1);
  TF_ASSIGN_OR_RETURN(BlockRV anchor, sch.GetBlock(block));
  TF_ASSIGN_OR_RETURN(BlockRV copy, sch.CacheRead(anchor, 1, ir::MemoryScope::kGlobal));
  TF_RETURN_IF_ERROR(sch.PackLayout(copy, 0, factor, 0));
  TF_RETURN_IF_ERROR(db.CommitWorkload({StructuralHashHex(task), task.name, PrintWorkload(task)}));
  database::TuningRecord r;
  r.workload_hash = StructuralHashHex(task);
  r.target.target = Target::Host().ToString();
  r.target.fingerprint = HostFingerprint(Target::Host(), CodegenToolchain());
  database::CanonicalizeFingerprint(&r.target.fingerprint);
  r.trace = sch.trace().ToText();
  r.run_secs = {2e-6, 2e-6};
  return db.CommitRecord(r);
}

// A test folder whose C drivers, linked against compiled models, are loaded
// into the test process; the fixture owns the loaded libraries and closes
// them after the test.
class CompiledModelTest : public CliFolderTest {
 protected:
  explicit CompiledModelTest(std::string prefix) : CliFolderTest(std::move(prefix), 8, 8, 8) {}

  void TearDown() override {
    for (void* lib : libraries_) dlclose(lib);
    CliFolderTest::TearDown();
  }

  // The C source `driver` written to <stem>_driver.c, compiled with the
  // object `object` and the runtime into <stem>.so and loaded; null (after
  // a failed expectation) if that fails.
  void* LinkDriver(const std::string& driver, const std::string& object, const std::string& stem) {
    std::ofstream(P(stem + "_driver.c")) << driver;
    const std::string runtime = std::string(TUNEFARM_BINARY_DIR) + "/runtime";
    Output link = testing_support::RunCommand(
        "cc -std=c11 -Wall -Wextra -Werror -fPIC -shared -I" + dir_.string() + " -o " + P(stem + ".so") + " " +
        P(stem + "_driver.c") + " " + object + " -L" + runtime + " -ltunefarm_runtime -Wl,-rpath," + runtime + " -lm");
    EXPECT_EQ(link.code, 0) << link.text;
    void* lib = dlopen(P(stem + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(lib, nullptr) << dlerror();
    if (lib != nullptr) libraries_.push_back(lib);
    return lib;
  }

  // The text of a file in the test folder (a header the compile wrote).
  std::string ReadText(const std::string& name) const {
    std::ifstream in(P(name));
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  std::vector<void*> libraries_;
};

}  // namespace tunefarm::cli_test
