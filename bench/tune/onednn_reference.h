// oneDNN's implementation of each suite workload, on the same buffers as the
// tunefarm kernel: matmul (GMM), convolution (C2D), grouped convolution with
// groups = C (DEP), deconvolution (T2D), and matmul with a bias and a ReLU
// post-op (dense+bias+relu). oneDNN picks its own best memory layouts (format
// "any"); reorders into and out of them happen at setup and are not timed.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"

namespace tunefarm::bench {

struct OneDnnOp {
  std::string what;             // e.g. "matmul", "deconvolution"
  std::function<void()> run;    // one timed execution (waits for the stream)
  std::function<void()> fetch;  // copies the last result into the output buffer
};

// `buffers` maps the workload's parameter names (from its .tf file) to host
// buffers; inputs are read, `output` is written by fetch(). Create it after
// setting oneDNN's thread count: oneDNN sizes its team when a primitive is made.
Result<OneDnnOp> MakeOneDnnOp(const std::string& workload_name, std::map<std::string, HostBuffer*>& buffers,
                              HostBuffer* output);

}  // namespace tunefarm::bench
