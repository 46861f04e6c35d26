// fleet.toml's [builders] table: which device keys have their candidates
// built on the tuner, read with file:line:col errors like every other key;
// and the shipped configs/fleet.toml parses.
#include <gtest/gtest.h>

#include "tunefarm/rpc/fleet_config.h"

namespace tunefarm::rpc {
namespace {

constexpr const char* kBase =
    "[server]\n"
    "listen = \"127.0.0.1:7878\"\n"
    "insecure = true\n";

Result<FleetConfig> Parse(const std::string& builders) {
  return ParseFleetConfig(std::string(kBase) + builders, "fleet.toml", "/etc/tunefarm");
}

TEST(FleetConfigBuildersTest, ListedDeviceKeysAreTunerBuiltOthersWorkerBuilt) {
  auto c = Parse("[builders]\ntuner_built = [\"arm-board-1\", \"riscv:sim.2\"]\nbuild_threads = 3\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->builders.TunerBuilt("arm-board-1"));
  EXPECT_TRUE(c->builders.TunerBuilt("riscv:sim.2"));
  EXPECT_FALSE(c->builders.TunerBuilt("cpu"));
  EXPECT_FALSE(c->builders.TunerBuilt("arm-board"));
  EXPECT_EQ(c->builders.build_threads, 3);

  auto none = Parse("");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->builders.tuner_built.empty());
  EXPECT_EQ(none->builders.build_threads, 0);
}

TEST(FleetConfigBuildersTest, MistakesNameFileLineAndKey) {
  struct Case {
    const char* text;
    const char* where;
    const char* what;
  };
  const Case cases[] = {
      {"[builders]\ntuner_built = \"arm-board-1\"\n", "fleet.toml:5:", "must be a list of strings"},
      {"[builders]\ntuner_built = [\"a\", 3]\n", "fleet.toml:5:", "must hold strings only"},
      {"[builders]\ntuner_built = [\"ok\", \"bad key\"]\n", "fleet.toml:5:", "'bad key' is not a device key"},
      {"[builders]\ntuner_built = [\"\"]\n", "fleet.toml:5:", "is not a device key"},
      {"[builders]\ntuner_built = [\"a\",\n  \"a\"]\n", "fleet.toml:6:", "'a' is listed twice"},
      {"[builders]\nbuild_threads = -1\n", "fleet.toml:5:", "out of range"},
      {"[builders]\nworker_built = [\"a\"]\n", "fleet.toml:5:", "unknown key 'worker_built' in [builders]"},
      {"[builder]\ntuner_built = [\"a\"]\n", "fleet.toml:4:", "unknown section 'builder'"},
  };
  for (const Case& c : cases) {
    auto r = Parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(r.status().message().find(c.where), std::string::npos) << c.text << " -> " << r.status().message();
    EXPECT_NE(r.status().message().find(c.what), std::string::npos) << c.text << " -> " << r.status().message();
  }
}

TEST(FleetConfigBuildersTest, ShippedConfigParsesWithEveryDeviceKeyWorkerBuilt) {
  auto c = LoadFleetConfig(std::string(TUNEFARM_SOURCE_DIR) + "/configs/fleet.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->builders.tuner_built.empty());
  EXPECT_EQ(c->builders.build_threads, 0);
}

}  // namespace
}  // namespace tunefarm::rpc
