// oneDNN's primitive for a model task's peer (task_peer.h), on the same
// buffers as the tunefarm kernel, for kernel_comparison.h to check and time.
//
// Layouts follow the layer benchmark (bench/tune/onednn_reference.h):
// oneDNN picks its own for a convolution's activations and for constant
// weights (format `any`), and the reorders into them happen at setup (the
// weights, the input) or in fetch (the output) and are not timed; pooling
// reads its input in oneDNN's blocked layout (nChw16c, else nChw8c, else
// plain), as its convolutions hand it on. Everything else (matmul's
// activations, softmax, layer norm, reductions, reorders, eltwise and
// binary) reads and writes the workload's row-major buffers where they are,
// as the tunefarm kernel does. The fused operators are post-ops of the
// primitive; a bias is its bias argument; a convolution's residual is the
// sum post-op onto a dst that holds the residual from setup (each run adds
// to what the last one left: the first run's output is the task's, later
// runs cost the same).
#pragma once

#include <map>
#include <string>

#include "task_peer.h"
#include "tune/onednn_reference.h"
#include "tunefarm/common/status.h"
#include "tunefarm/compiler/interpreter/host_buffer.h"

namespace tunefarm::bench {

// `buffers` maps the workload's input names to host buffers; `output` is
// written by fetch(). Create it after setting oneDNN's thread count.
// Unimplemented for a peer of kind kNone (its reason) and when oneDNN
// refuses the primitive with these post-ops (its message).
Result<OneDnnOp> MakeTaskOp(const TaskPeer& peer, std::map<std::string, HostBuffer*>& buffers, HostBuffer* output);

}  // namespace tunefarm::bench
