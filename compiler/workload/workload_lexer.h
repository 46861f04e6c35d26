// Lexer of the workload language (private to compiler/; see
// docs/workload-language.md for the grammar).
//
// Turns UTF-8 text into tokens that carry their 1-based line and column
// (columns count characters, not bytes). Rejects, with a positioned message,
// bytes that are not UTF-8, control characters, characters outside the
// language, and numeric literals that do not fit (i64 / finite double).
// The token list always ends with one kEnd token.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::wl {

struct SourcePos {
  int line = 1;
  int col = 1;
};

enum class Tok : uint8_t {
  kEnd,
  kIdent,
  kInt,
  kFloat,
  kLParen, kRParen, kLBracket, kRBracket, kLBrace, kRBrace,
  kComma, kColon, kSemicolon, kAssign,
  kPlus, kMinus, kStar, kSlash, kPercent,
  kLt, kLe, kGt, kGe, kEq, kNe,
  kAndAnd, kOrOr, kBang,
};

// Spelling of a token kind for messages: "'('", "identifier", "end of file".
const char* TokName(Tok kind);

struct Token {
  Tok kind = Tok::kEnd;
  SourcePos pos;
  std::string_view text;      // view into the source text
  bool starts_line = false;   // first token on its line (statements must start a line)
  int64_t int_value = 0;      // kInt
  double float_value = 0.0;   // kFloat
};

// "<source>:<line>:<col>: <message>" as an InvalidArgument status.
Status ErrorAt(const std::string& source, SourcePos pos, const std::string& message);

// Lexes the whole text. On success the last token is kEnd.
Result<std::vector<Token>> Lex(std::string_view text, const std::string& source);

// Quotes a token for a message: "'foo'", "'+'", "end of file".
std::string Describe(const Token& token);

}  // namespace tunefarm::wl
