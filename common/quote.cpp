// Bounded quoting of caller input (quote.h).
#include "tunefarm/common/quote.h"

#include <cstdio>

namespace tunefarm {

namespace {

// Length of the well-formed UTF-8 sequence starting at text[i] (2 to 4), or 0.
size_t Utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  size_t n = 0;
  if (lead >= 0xc2 && lead <= 0xdf) n = 2;
  else if (lead >= 0xe0 && lead <= 0xef) n = 3;
  else if (lead >= 0xf0 && lead <= 0xf4) n = 4;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  return n;
}

std::string HexByte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\x%02x", c);
  return buf;
}

}  // namespace

std::string QuoteInput(std::string_view text, size_t max_chars) {
  std::string out = "'";
  size_t i = 0, chars = 0;
  while (i < text.size() && chars < max_chars) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\'' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else if (size_t n = c >= 0x80 ? Utf8Length(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
      ++chars;
      continue;
    } else {
      out += HexByte(c);
    }
    ++i;
    ++chars;
  }
  if (i < text.size()) return out + "…' (" + std::to_string(text.size()) + " bytes)";
  return out + "'";
}

std::string LimitMessage(std::string message, size_t max_bytes) {
  if (message.size() <= max_bytes) return message;
  size_t cut = max_bytes;
  // Back up to the start of a UTF-8 sequence: never split one.
  while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xc0) == 0x80) --cut;
  size_t dropped = message.size() - cut;
  message.resize(cut);
  return message + "… (" + std::to_string(dropped) + " bytes cut)";
}

}  // namespace tunefarm
