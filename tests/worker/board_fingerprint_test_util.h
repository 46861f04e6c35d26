// Helpers of the board fingerprint tests: /proc/cpuinfo texts built the way
// the kernel prints them, and ParseArmBoard that must succeed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "tunefarm/worker/board_fingerprint.h"

namespace tunefarm::board_test {

// `count` cpuinfo blocks numbered from `first`: "processor : N", `body`, a blank line.
inline std::string Blocks(int first, int count, std::string_view body) {
  std::string text;
  for (int i = first; i < first + count; ++i) {
    text += "processor\t: " + std::to_string(i) + "\n" + std::string(body) + "\n";
  }
  return text;
}

// The board of an aarch64 machine with these sources; a failed parse fails the test.
inline ArmBoard MustParse(std::string_view cpuinfo, uint64_t hwcap, uint64_t hwcap2, std::string_view kernel) {
  auto board = ParseArmBoard(cpuinfo, hwcap, hwcap2, kernel, "aarch64");
  EXPECT_TRUE(board.ok()) << board.status().ToString();
  return board.ok() ? *board : ArmBoard{};
}

}  // namespace tunefarm::board_test
