// SplitPrepack: layout-free constant inputs -- a kernel's packing of its
// weights, moved out of the call into an entry point run once.
//
// A workload input declared `input const` (BufferNode::constant: a layer's
// weights) has the same value on every call. A schedule may copy it into a
// layout of its own choosing (CacheRead + PackLayout at the root: panels for
// the vector units); as written, that copy runs inside every call. When a
// statement at the root of the scheduled function
//   - reads no buffer but constant inputs,
//   - writes only buffers allocated at the root (global scope), which no
//     other statement writes, and
//   - follows no statement that reads what it writes,
// it is a prepack statement. SplitPrepack moves every prepack statement into
//   prepack:   `<name>_prepack(constant inputs read..., packed buffers...)`
//              runs the prepack statements in their order (num_inputs = the
//              constant inputs);
//   prepacked: `<name>_prepacked(f's params..., packed buffers...)` runs the
//              rest of the body, reading the packed buffers as parameters
//              (num_inputs = f's).
// Calling prepack once and prepacked any number of times on the same
// constant inputs computes what f computes per call. The constant inputs stay
// among prepacked's params, so its argument list is f's followed by the
// packed buffers (which it must not write, and does not).
//
// This is what TVM calls layout rewrite for constant weights; oneDNN's
// "reorder the weights once at setup" is the same contract.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm {

struct PrepackSplit {
  ir::PrimFunc prepack;
  ir::PrimFunc prepacked;
  // The packed buffers, in parameter order (the tail of both functions' params).
  std::vector<ir::Buffer> packed;
  // For each of prepack's leading params, its index among f's params.
  std::vector<size_t> constant_params;
};

// Suffixes of the two entry points' names.
inline constexpr const char* kPrepackSuffix = "_prepack";
inline constexpr const char* kPrepackedSuffix = "_prepacked";

// nullopt when f has no prepack statement (no constant input, or none that
// the schedule copies at the root). Deterministic in f: the code generator
// and the callers of the entry points agree on the split by calling it.
std::optional<PrepackSplit> SplitPrepack(const ir::PrimFunc& f);

// LowerForCodegen (lower.h) of what one measured call of the scheduled `f`
// runs: its prepacked entry when SplitPrepack splits it, else f itself. This
// is the program cost models read and the search tells programs apart by; the
// packing that runs once ahead of the calls is left out of both.
Result<ir::PrimFunc> LowerMeasuredCall(const ir::PrimFunc& f);

}  // namespace tunefarm
