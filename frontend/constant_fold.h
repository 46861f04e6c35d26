// Constant folding at import: the shape arithmetic of exported graphs
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape,
// Expand of constants, Gather of a constant table at constant indices, Range,
// and the Where / Equal / Less / ... / Not / And / Or of attention masks)
// evaluated on the host so that every shape the tasks see is static.
//
// ConstTensor holds a constant's elements as doubles: exact for every f32
// value and for integers below 2^53, which covers shapes, axes and indices.
// FoldNode evaluates one node whose inputs are all constant; which nodes are
// folded is OnnxGraph::FoldConstants' decision (onnx_graph_fold.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_graph.h"

namespace tunefarm::frontend {

struct ConstTensor {
  ir::DataType dtype;
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major, one per element
  int64_t size() const;
};

// True if FoldNode evaluates `op_type`.
bool IsFoldableOp(const std::string& op_type);

// The value of node `n`'s single output from its inputs (nullptr where an
// optional input is omitted). Shape reads only its input's `shape`, whose
// values may be absent; a view takes `output_shape` (shape inference's, null
// when it has none). An attribute value ONNX allows but folding does not
// handle is InvalidArgument naming the node.
Result<ConstTensor> FoldNode(const OnnxGraph& g, const GraphNode& n, const std::vector<const ConstTensor*>& inputs,
                             const std::vector<int64_t>* output_shape);

// Normalises a possibly negative axis of a rank-`rank` tensor; false if out of range.
bool NormalizeAxis(int64_t* axis, int64_t rank);

// One axis of a Slice after ONNX's rules (negative starts and ends count from
// the end, both clamped to the axis, negative steps walk backwards): element
// i of the output axis is element start + i * step of the input axis.
struct AxisSlice {
  int64_t start = 0, step = 1, count = 0;
};
// Every axis of `shape` sliced by Slice node `n`'s starts, ends, axes (empty:
// the first starts.size() axes) and steps (empty: 1).
Result<std::vector<AxisSlice>> ResolveSlice(const OnnxGraph& g, const GraphNode& n, const std::vector<int64_t>& shape,
                                            const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                            std::vector<int64_t> axes, std::vector<int64_t> steps);
// Slice node `n`'s starts, ends, axes and steps: its inputs 1-4 (opset >= 10,
// each a constant or omitted) or its attributes (older opsets); `read`
// gives a constant input's values.
struct SliceArgs {
  std::vector<int64_t> starts, ends, axes, steps;
};
Result<SliceArgs> ReadSliceArgs(const OnnxGraph& g, const GraphNode& n,
                                const std::vector<const std::vector<double>*>& inputs);

}  // namespace tunefarm::frontend
