// libFuzzer target for the workload language.
//
// Feeds arbitrary bytes to ParseWorkload. Any crash, sanitizer report, abort
// (an IR InternalCheck) or hang is a bug. For every input that parses, it
// also checks the language's own invariants and traps when one breaks:
//   * the result passes Workload::Validate;
//   * PrintWorkload re-parses to a StructurallyEqual workload with the same
//     StructuralHash, and printing is idempotent;
//   * Flops() is finite and non-negative.
// Build and run: tests/fuzz/build.sh (see docs/workload-language.md).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "tunefarm/compiler/workload/workload_parser.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "workload fuzz invariant broken: %s\n%s\n", what, detail.c_str());
  __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunefarm;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Workload> w = ParseWorkload(text);
  if (!w.ok()) {
    if (w.status().code() != StatusCode::kInvalidArgument) Fail("error is not InvalidArgument", w.status().ToString());
    if (w.status().message().rfind("<input>:", 0) != 0) Fail("error has no position", w.status().message());
    return 0;
  }
  Status valid = w->Validate();
  if (!valid.ok()) Fail("parsed workload fails Validate", valid.ToString());
  double flops = w->Flops();
  if (!std::isfinite(flops) || flops < 0) Fail("bad Flops", std::to_string(flops));
  std::string printed = PrintWorkload(*w);
  Result<Workload> again = ParseWorkload(printed);
  if (!again.ok()) Fail("printed text does not parse", printed + "\n" + again.status().ToString());
  if (!StructurallyEqual(*w, *again)) Fail("round trip is not structurally equal", printed);
  if (StructuralHash(*w) != StructuralHash(*again)) Fail("round trip changes the hash", printed);
  if (PrintWorkload(*again) != printed) Fail("printing is not idempotent", printed + "\n" + PrintWorkload(*again));
  return 0;
}
