// Every malformed or unsupported model the test-model script writes gets a
// user error that names the node, tensor or file at fault.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tunefarm/frontend/model.h"

namespace tunefarm::frontend {
namespace {

struct Case {
  std::string file, must_contain, why;
};

std::vector<Case> Manifest() {
  std::ifstream in(std::string(TUNEFARM_TEST_MODELS_DIR) + "/malformed/manifest.tsv");
  std::vector<Case> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    Case c;
    std::getline(row, c.file, '\t');
    std::getline(row, c.must_contain, '\t');
    std::getline(row, c.why);
    if (!c.file.empty()) cases.push_back(c);
  }
  return cases;
}

class MalformedModelTest : public ::testing::TestWithParam<Case> {};

TEST_P(MalformedModelTest, IsAUserErrorNamingWhatIsWrong) {
  const Case& c = GetParam();
  ::testing::internal::CaptureStderr();
  auto m = ImportOnnx(std::string(TUNEFARM_TEST_MODELS_DIR) + "/malformed/" + c.file);
  std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(logged, "") << c.file << ": the error is the result, not a log line";
  ASSERT_FALSE(m.ok()) << c.file << " imported, but: " << c.why;
  EXPECT_TRUE(m.status().code() == StatusCode::kInvalidArgument || m.status().code() == StatusCode::kNotFound)
      << m.status().ToString();
  EXPECT_NE(m.status().message().find(c.must_contain), std::string::npos)
      << c.file << " (" << c.why << "): " << m.status().message();
  EXPECT_NE(m.status().message().find(c.file), std::string::npos) << m.status().message();
}

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  std::string s = info.param.file.substr(0, info.param.file.find('.'));
  for (char& ch : s) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Models, MalformedModelTest, ::testing::ValuesIn(Manifest()), CaseName);

TEST(MalformedModel, TheScriptWritesAtLeastTwentyCases) { EXPECT_GE(Manifest().size(), 20u); }

TEST(MalformedModel, AMissingFileIsNotFound) {
  auto m = ImportOnnx("/nonexistent/model.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_NE(m.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

}  // namespace
}  // namespace tunefarm::frontend
