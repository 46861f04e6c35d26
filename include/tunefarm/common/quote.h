// Caller input inside error messages, bounded.
//
// Every message that quotes what a caller sent (a job id, a target string, a
// status filter, a file path) goes through QuoteInput, so that no request can
// make the answer as long as itself: a 20,000-character id echoed back would
// exceed what gRPC accepts as a status message. LimitMessage is the last guard
// for whole messages (rpc::ToGrpc applies it to every status it converts).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tunefarm {

inline constexpr size_t kMaxQuotedChars = 64;     // characters of caller input in a message
inline constexpr size_t kMaxMessageBytes = 2048;  // a whole error message

// `text` in single quotes: its first `max_chars` characters (a UTF-8 sequence
// counts as one), then "…" and the full length in bytes when it was longer.
// Control characters, quotes, backslashes and bytes that are not UTF-8 appear
// escaped (\n, \', \\, \xNN), so the quote is one printable line.
//   QuoteInput("llvm")                -> 'llvm'
//   QuoteInput(std::string(7000,'a')) -> 'aaa…a…' (7000 bytes), with 64 a's
std::string QuoteInput(std::string_view text, size_t max_chars = kMaxQuotedChars);

// `message` cut to at most `max_bytes` bytes (at a character boundary) with
// "… (N bytes cut)" appended when it was longer; unchanged otherwise.
std::string LimitMessage(std::string message, size_t max_bytes = kMaxMessageBytes);

}  // namespace tunefarm
