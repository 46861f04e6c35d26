// oneDNN's implementation of a workload, on the same buffers as the tunefarm
// kernel, built from an op class (onednn_spec.h): matmul (GMM), matmul with
// a bias and an activation post-op (dense layers), convolution (C2D and the
// layer suite's convolutions, with their strides and padding), grouped
// convolution with groups = C (depthwise), deconvolution (T2D), and batch
// matmul. oneDNN picks its own best layouts for constant weights and for a
// convolution's activations (format "any"); reorders into and out of them
// happen at setup (weights, the input) or in fetch (the output) and are not
// timed. A batch matmul's operands are both activations: oneDNN reads them
// in the workload's layout.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "onednn_spec.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"

namespace tunefarm::bench {

struct OneDnnOp {
  std::string what;             // e.g. "matmul", "deconvolution"
  std::function<void()> run;    // one timed execution (waits for the stream)
  std::function<void()> fetch;  // copies the last result into the output buffer
};

// `buffers` maps the workload's tensor names (onednn_spec.h lists them per op
// class) to host buffers, whose shapes give the op's; inputs are read,
// `output` is written by fetch(). Create it after setting oneDNN's thread
// count: oneDNN sizes its team when a primitive is made.
Result<OneDnnOp> MakeOneDnnOp(const OneDnnSpec& spec, std::map<std::string, HostBuffer*>& buffers,
                              HostBuffer* output);

}  // namespace tunefarm::bench
