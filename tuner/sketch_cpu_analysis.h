// What the CPU sketch rules read off a PrimFunc before rewriting it: its
// blocks and who consumes them, and, per reduction, the shape facts the
// tiling rule decides by (vector-axis candidates, reuse, constant inputs,
// stride classes). Everything here is copied out of the IR, so it stays valid
// after a schedule primitive frees the nodes it was read from -- except
// BlockInfo's pointers, which live as long as the PrimFunc they came from.
// Internal to the CPU rules (tuner/sketch_cpu.cpp, sketch_cpu_tiling.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::tuner::sketch_analysis {

struct BlockInfo {
  const ir::Block* block;
  const ir::Store* store;
  bool reduction;
  std::vector<std::string> consumers;  // blocks reading its output
};

// Every block of `f`, in post order, with its consumers.
std::vector<BlockInfo> Analyze(const ir::PrimFunc& f);

bool IsParam(const ir::PrimFunc& f, const ir::BufferNode* b);

// `s` stores at exactly b's iteration variables, in order.
bool StoresAtIterVars(const ir::Block* b, const ir::Store* s);

// Every read of `buffer` in `b` is at exactly b's iteration variables, in order
// (a one-to-one element-wise consumer, fusible into its producer's tile); a
// constant 0 in a unit dimension read by a unit iteration variable counts as
// that variable. The test of the fusion primitives themselves
// (tunefarm/compiler/schedule/iter_var_reads.h).
bool ReadsAtIterVars(const ir::Block* b, const ir::BufferNode* buffer);

// What TileReduction needs to know about a block, copied out before any
// rewrite frees the block's nodes.
struct ReductionShape {
  std::vector<ir::IterKind> kinds;
  std::vector<int64_t> spatial_extents;     // per spatial iter var, in order
  bool stores_at_iter_vars = false;         // output dim d <-> spatial iter var d
  // Per spatial iter var: inputs (read index, dimension) it indexes directly
  // in a dimension that is not their innermost one.
  std::vector<std::vector<std::pair<int, int>>> strided_inputs;
  // Per spatial iter var: constant inputs (weights, split_prepack.h) of two
  // or more dimensions it indexes directly in their innermost one.
  std::vector<std::vector<std::pair<int, int>>> constant_rows;
  std::vector<bool> read_constant;  // per read index: a constant input
  std::vector<int64_t> read_elements;  // per read index: the input's elements
  int64_t iterations = 1;              // of the block: outputs x reduced
  // Per spatial iter var: some input is read at elements that other values
  // of it read too (a matmul's B along i), so a tile of it can reuse loads.
  std::vector<bool> reused;
  // Per read index, per spatial iter var: some dimension of the input is
  // indexed by the variable itself (a depthwise convolution's image by n
  // and c, not by h and w, which reach it through a window).
  std::vector<std::vector<bool>> direct;
  // Per read index, per spatial iter var: some index of the input uses the
  // variable at all (directly or through a window such as w + s - P).
  std::vector<std::vector<bool>> uses;
  // Per read index, per spatial iter var: (dimension, S) when the input is
  // indexed S * v + (terms free of v) in that dimension with S >= 2 -- a
  // stride-S convolution's image along w -- else (-1, 0).
  std::vector<std::vector<std::pair<int, int64_t>>> strided_by;
  // Per spatial iter var: S >= 2 when the body reads some (.. v ..) % S and
  // S divides the axis (a decomposed transposed convolution's (h + 1) % 2
  // picks its taps), else 0.
  std::vector<int64_t> class_stride;
  // The reduction axis (index among the reduction iter vars) along which
  // the body is an int8 dot product, acc = acc + i32(a) * i32(b) with a and
  // b both i8 or both u8 and acc i32: the innermost one both operands run
  // along whose extent is a multiple of 4. -1: none (sketch_cpu_dot.cpp).
  int dot_reduce_axis = -1;
  // Per read index: the dimension that axis's variable indexes by itself,
  // whose extent is a multiple of 4; -1 when none (or no dot product).
  std::vector<int> dot_dims;
};

// ReductionShape::dot_reduce_axis of a reduction block (sketch_cpu_dot.cpp).
int DotProductReduceAxis(const ir::Block* block, const ir::Store* store);
// ReductionShape::dot_dims for that axis (sketch_cpu_dot.cpp).
std::vector<int> DotProductDims(const ir::Block* block, const ir::Store* store, int reduce_axis);

// The shape facts of a reduction block whose body is `store`.
ReductionShape DescribeReduction(const ir::Block* block, const ir::Store* store);

}  // namespace tunefarm::tuner::sketch_analysis
