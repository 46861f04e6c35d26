// QuoteInput and LimitMessage: caller input in error messages stays short,
// one line, and valid UTF-8 however long or odd the input.
#include "tunefarm/common/quote.h"

#include <gtest/gtest.h>

namespace tunefarm {
namespace {

TEST(QuoteInput, ShortInputIsQuotedWhole) {
  EXPECT_EQ(QuoteInput("llvm -mtriple=banana"), "'llvm -mtriple=banana'");
  EXPECT_EQ(QuoteInput(""), "''");
  EXPECT_EQ(QuoteInput(std::string(64, 'a')), "'" + std::string(64, 'a') + "'");
}

TEST(QuoteInput, LongInputIsCutAfter64CharactersWithItsLength) {
  std::string quoted = QuoteInput(std::string(7000, 'j'));
  EXPECT_EQ(quoted, "'" + std::string(64, 'j') + "…' (7000 bytes)");
  EXPECT_LT(quoted.size(), 90u);
  EXPECT_EQ(QuoteInput(std::string(65, 'b')), "'" + std::string(64, 'b') + "…' (65 bytes)");
  EXPECT_EQ(QuoteInput("abcdef", 3), "'abc…' (6 bytes)");
}

TEST(QuoteInput, ControlCharactersQuotesAndBrokenUtf8AreEscaped) {
  EXPECT_EQ(QuoteInput("a\nb\tc"), "'a\\nb\\tc'");
  EXPECT_EQ(QuoteInput("it's"), "'it\\'s'");
  EXPECT_EQ(QuoteInput("back\\slash"), "'back\\\\slash'");
  EXPECT_EQ(QuoteInput(std::string("\0\x01\x7f", 3)), "'\\x00\\x01\\x7f'");
  EXPECT_EQ(QuoteInput("\xff\xfe"), "'\\xff\\xfe'");
  // A lead byte without its continuation, and a sequence cut by the end.
  EXPECT_EQ(QuoteInput("\xc3(x"), "'\\xc3(x'");
  EXPECT_EQ(QuoteInput("\xe2\x82"), "'\\xe2\\x82'");
}

TEST(QuoteInput, Utf8CharactersCountAsOneAndAreNeverSplit) {
  EXPECT_EQ(QuoteInput("π≈3"), "'π≈3'");
  std::string many;
  for (int i = 0; i < 100; ++i) many += "é";  // 2 bytes each
  std::string quoted = QuoteInput(many);
  std::string expected = "'";
  for (int i = 0; i < 64; ++i) expected += "é";
  EXPECT_EQ(quoted, expected + "…' (200 bytes)");
}

TEST(LimitMessage, CutsLongMessagesAtACharacterBoundary) {
  EXPECT_EQ(LimitMessage("short"), "short");
  std::string exact(kMaxMessageBytes, 'm');
  EXPECT_EQ(LimitMessage(exact), exact);
  std::string cut = LimitMessage(std::string(20000, 'x'));
  EXPECT_EQ(cut, std::string(kMaxMessageBytes, 'x') + "… (" + std::to_string(20000 - kMaxMessageBytes) + " bytes cut)");
  // "é" is two bytes: a cut at byte 3 of "aéé" would split the second one.
  EXPECT_EQ(LimitMessage("aééz", 4), "aé… (3 bytes cut)");
}

}  // namespace
}  // namespace tunefarm
