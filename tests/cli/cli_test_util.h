// Shared by the tests of the tunefarm binary: running it, and a fresh folder
// per test holding a small matmul workload, mm.tf.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "../run_command.h"

namespace tunefarm::cli_test {

namespace fs = std::filesystem;

using Output = testing_support::CommandOutput;

// The build's tunefarm with `args` (a shell command line), stdout and stderr together.
inline Output RunTunefarm(const std::string& args) {
  return testing_support::RunCommand(std::string(TUNEFARM_BINARY_DIR) + "/cli/tunefarm " + args);
}

// A folder of its own per test (removed after it), named by `prefix` and the
// test, with mm.tf: C[M, N] = A[M, K] x B[K, N].
class CliFolderTest : public ::testing::Test {
 protected:
  CliFolderTest(std::string prefix, int m, int n, int k) : prefix_(std::move(prefix)), m_(m), n_(n), k_(k) {}
  void SetUp() override {
    dir_ = fs::temp_directory_path() / (prefix_ + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream(dir_ / "mm.tf") << "workload mm(M = " << m_ << ", N = " << n_ << ", K = " << k_ << ") {\n"
                                  << "  A = input f32[M, K]\n  B = input f32[K, N]\n"
                                     "  C[i, j] = sum(k: K) A[i, k] * B[k, j]\n  output C\n}\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;

 private:
  std::string prefix_;
  int m_, n_, k_;
};

}  // namespace tunefarm::cli_test
