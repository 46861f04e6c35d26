// Lexer of the workload language. The text is validated as UTF-8 once, up
// front, so that later stages can count columns in characters and quote any
// part of the source in a message without producing invalid UTF-8 themselves.
#include "workload_lexer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

namespace tunefarm::wl {
namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 if it is malformed
// (overlong forms, surrogates and code points above U+10FFFF are malformed).
size_t Utf8Length(std::string_view text, size_t i, uint32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char b0 = byte(i);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  size_t len;
  uint32_t cp;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return len;
}

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  Result<std::vector<Token>> Run() {
    TF_RETURN_IF_ERROR(CheckBytes());
    bool line_start = true;
    while (true) {
      // Skip whitespace and comments, noting line breaks.
      while (i_ < text_.size()) {
        char c = text_[i_];
        if (c == '\n') {
          Advance(1);
          line_start = true;
        } else if (c == ' ' || c == '\t' || c == '\r') {
          Advance(1);
        } else if (c == '#') {
          while (i_ < text_.size() && text_[i_] != '\n') Advance(CharLength());
        } else {
          break;
        }
      }
      Token token;
      token.pos = pos_;
      token.starts_line = line_start;
      line_start = false;
      if (i_ >= text_.size()) {
        token.kind = Tok::kEnd;
        tokens_.push_back(token);
        return std::move(tokens_);
      }
      size_t start = i_;
      TF_RETURN_IF_ERROR(LexOne(&token));
      token.text = text_.substr(start, i_ - start);
      tokens_.push_back(token);
    }
  }

 private:
  // Rejects malformed UTF-8 and control characters anywhere, comments included.
  Status CheckBytes() {
    SourcePos pos;
    for (size_t i = 0; i < text_.size();) {
      uint32_t cp = 0;
      size_t len = Utf8Length(text_, i, &cp);
      if (len == 0) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "0x%02X", static_cast<unsigned char>(text_[i]));
        return ErrorAt(source_, pos, std::string("byte ") + hex +
                                         " is not valid UTF-8, expected UTF-8 text");
      }
      if ((cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') || cp == 0x7F ||
          (cp >= 0x80 && cp < 0xA0)) {
        char hex[12];
        std::snprintf(hex, sizeof(hex), "U+%04X", static_cast<unsigned>(cp));
        return ErrorAt(source_, pos, std::string("control character ") + hex +
                                         " is not allowed, expected printable text");
      }
      if (cp == '\n') {
        ++pos.line;
        pos.col = 1;
      } else {
        ++pos.col;
      }
      i += len;
    }
    return Status::OK();
  }

  size_t CharLength() const {
    uint32_t cp;
    size_t len = Utf8Length(text_, i_, &cp);
    return len == 0 ? 1 : len;
  }

  // Moves over n bytes that form whole characters on one line (or one '\n').
  void Advance(size_t n) {
    if (text_[i_] == '\n') {
      ++pos_.line;
      pos_.col = 1;
    } else {
      ++pos_.col;
    }
    i_ += n;
  }
  void AdvanceAscii(size_t n) {
    i_ += n;
    pos_.col += static_cast<int>(n);
  }

  char Peek(size_t k = 0) const { return i_ + k < text_.size() ? text_[i_ + k] : '\0'; }

  Status LexOne(Token* token) {
    char c = Peek();
    if (IsIdentStart(c)) {
      size_t n = 0;
      while (IsIdentChar(Peek(n))) ++n;
      token->kind = Tok::kIdent;
      AdvanceAscii(n);
      return Status::OK();
    }
    if (IsDigit(c)) return LexNumber(token);
    struct Punct {
      const char* text;
      Tok kind;
    };
    static constexpr Punct kPuncts[] = {
        {"&&", Tok::kAndAnd}, {"||", Tok::kOrOr}, {"<=", Tok::kLe}, {">=", Tok::kGe},
        {"==", Tok::kEq},     {"!=", Tok::kNe},   {"(", Tok::kLParen}, {")", Tok::kRParen},
        {"[", Tok::kLBracket}, {"]", Tok::kRBracket}, {"{", Tok::kLBrace}, {"}", Tok::kRBrace},
        {",", Tok::kComma},   {":", Tok::kColon}, {";", Tok::kSemicolon}, {"=", Tok::kAssign},
        {"+", Tok::kPlus},    {"-", Tok::kMinus}, {"*", Tok::kStar},  {"/", Tok::kSlash},
        {"%", Tok::kPercent}, {"<", Tok::kLt},    {">", Tok::kGt},    {"!", Tok::kBang},
    };
    for (const Punct& p : kPuncts) {
      std::string_view s(p.text);
      if (text_.substr(i_, s.size()) == s) {
        token->kind = p.kind;
        AdvanceAscii(s.size());
        return Status::OK();
      }
    }
    std::string shown(text_.substr(i_, CharLength()));
    return ErrorAt(source_, pos_, "unexpected character '" + shown +
                                      "', expected a name, a number, an operator or punctuation");
  }

  // int:   [0-9]+
  // float: [0-9]+ '.' [0-9]* ([eE] [+-]? [0-9]+)?  |  [0-9]+ [eE] [+-]? [0-9]+
  Status LexNumber(Token* token) {
    size_t n = 0;
    while (IsDigit(Peek(n))) ++n;
    bool is_float = false;
    if (Peek(n) == '.') {
      is_float = true;
      ++n;
      while (IsDigit(Peek(n))) ++n;
    }
    if (Peek(n) == 'e' || Peek(n) == 'E') {
      size_t m = n + 1;
      if (Peek(m) == '+' || Peek(m) == '-') ++m;
      if (!IsDigit(Peek(m))) {
        return ErrorAt(source_, pos_, "malformed number '" + std::string(text_.substr(i_, m)) +
                                          "', expected digits after the exponent");
      }
      while (IsDigit(Peek(m))) ++m;
      n = m;
      is_float = true;
    }
    if (IsIdentStart(Peek(n))) {
      return ErrorAt(source_, pos_, "malformed number '" + std::string(text_.substr(i_, n + 1)) +
                                        "', expected an operator or space after a number");
    }
    std::string_view digits = text_.substr(i_, n);
    if (is_float) {
      double value = 0.0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size() || !std::isfinite(value)) {
        return ErrorAt(source_, pos_, "float literal '" + std::string(digits) +
                                          "' is out of range, expected a finite double");
      }
      token->kind = Tok::kFloat;
      token->float_value = value;
    } else {
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (ec != std::errc() || ptr != digits.data() + digits.size()) {
        return ErrorAt(source_, pos_, "integer literal '" + std::string(digits) +
                                          "' is too large, expected at most 9223372036854775807");
      }
      token->kind = Tok::kInt;
      token->int_value = value;
    }
    AdvanceAscii(n);
    return Status::OK();
  }

  std::string_view text_;
  const std::string& source_;
  size_t i_ = 0;
  SourcePos pos_;
  std::vector<Token> tokens_;
};

}  // namespace

const char* TokName(Tok kind) {
  switch (kind) {
    case Tok::kEnd: return "end of file";
    case Tok::kIdent: return "a name";
    case Tok::kInt: return "an integer";
    case Tok::kFloat: return "a float";
    case Tok::kLParen: return "'('";
    case Tok::kRParen: return "')'";
    case Tok::kLBracket: return "'['";
    case Tok::kRBracket: return "']'";
    case Tok::kLBrace: return "'{'";
    case Tok::kRBrace: return "'}'";
    case Tok::kComma: return "','";
    case Tok::kColon: return "':'";
    case Tok::kSemicolon: return "';'";
    case Tok::kAssign: return "'='";
    case Tok::kPlus: return "'+'";
    case Tok::kMinus: return "'-'";
    case Tok::kStar: return "'*'";
    case Tok::kSlash: return "'/'";
    case Tok::kPercent: return "'%'";
    case Tok::kLt: return "'<'";
    case Tok::kLe: return "'<='";
    case Tok::kGt: return "'>'";
    case Tok::kGe: return "'>='";
    case Tok::kEq: return "'=='";
    case Tok::kNe: return "'!='";
    case Tok::kAndAnd: return "'&&'";
    case Tok::kOrOr: return "'||'";
    case Tok::kBang: return "'!'";
  }
  return "a token";
}

std::string Describe(const Token& token) {
  if (token.kind == Tok::kEnd) return "end of file";
  std::string_view text = token.text;
  if (text.size() > 40) text = text.substr(0, 40);  // identifiers/numbers are ASCII
  return "'" + std::string(text) + "'";
}

Status ErrorAt(const std::string& source, SourcePos pos, const std::string& message) {
  return Status::InvalidArgument(source + ":" + std::to_string(pos.line) + ":" +
                                 std::to_string(pos.col) + ": " + message);
}

Result<std::vector<Token>> Lex(std::string_view text, const std::string& source) {
  return Lexer(text, source).Run();
}

}  // namespace tunefarm::wl
