// The machine line the side-by-side benchmarks print first
// (bench/host_description.h), read from given /proc/cpuinfo texts.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>

#include "host_description.h"

namespace tunefarm::bench {
namespace {

TEST(HostDescriptionTest, NamesTheCpuAndItsFamilyFromTheFirstProcessor) {
  // Two processors; "model name" must not be read as "model".
  std::istringstream cpuinfo(
      "processor\t: 0\n"
      "vendor_id\t: AuthenticAMD\n"
      "cpu family\t: 26\n"
      "model\t\t: 2\n"
      "model name\t: AMD EPYC\n"
      "stepping\t: 1\n"
      "\n"
      "processor\t: 1\n"
      "cpu family\t: 25\n"
      "model\t\t: 17\n"
      "model name\t: another CPU\n"
      "stepping\t: 0\n");
  EXPECT_EQ(HostDescriptionFrom(cpuinfo, 2), "AMD EPYC, family 26 model 2 stepping 1, 2 logical CPUs");
}

TEST(HostDescriptionTest, LeavesOutWhatAnArmBoardDoesNotReport) {
  std::istringstream cpuinfo(
      "processor\t: 0\n"
      "BogoMIPS\t: 48.00\n"
      "CPU implementer\t: 0x41\n"
      "CPU part\t: 0xd0c\n");
  EXPECT_EQ(HostDescriptionFrom(cpuinfo, 4), "unknown CPU, 4 logical CPUs");
}

TEST(HostDescriptionTest, ThisMachinesLineEndsWithItsCpuCount) {
  const std::string line = HostDescription();
  const std::string tail = ", " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs";
  ASSERT_GE(line.size(), tail.size()) << line;
  EXPECT_EQ(line.substr(line.size() - tail.size()), tail) << line;
}

}  // namespace
}  // namespace tunefarm::bench
