// Design spaces: sketch rules that turn a PrimFunc into a random schedule.
//
// A SketchPolicy applies a target's rules to a fresh Schedule of a workload's
// default PrimFunc; every random choice goes through the schedule's sampling
// instructions, so the resulting trace is one point of the design space and
// its decisions are what the evolutionary search mutates. Which rules a
// target kind gets is a table (sketch_registry.h); each rule set reads its
// knobs from its own file under configs/sketch/, so other targets (GPU, ARM)
// add their own.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/schedule/schedule.h"
#include "tunefarm/compiler/target.h"

namespace tunefarm::tuner {

// Knobs of the CPU rule set (configs/sketch/cpu.toml).
struct CpuSketchConfig {
  int spatial_levels = 4;              // SSRSRS: spatial tiles per spatial loop
  int reduce_levels = 2;               // reduction tiles per reduction loop
  int64_t vector_lanes = 16;           // native vector width in elements (AVX-512 f32)
  int64_t max_vector_register_tile = 4;  // tiles of whole vectors along the vector axis, per register tile
  int64_t max_vector_lanes = 64;       // innermost spatial tile when it is not a multiple of vector_lanes
  int64_t max_inner_tile = 16;         // other innermost tiles
  int64_t max_reduce_inner_tile = 64;  // innermost reduction tile
  std::vector<int64_t> unroll_steps = {0, 16, 64, 512};  // auto-unroll candidates
  bool cache_write = true;             // local accumulators for reductions
  bool inline_elementwise = true;      // compute_inline element-wise producers
  // Spatial axes along which no input is reused (every input has a
  // dimension indexed by the axis variable itself: a depthwise convolution's
  // channels) get tile 1 at the levels inside the first reduction level, so
  // the register tile holds only accumulators that share loaded values.
  bool register_tile_needs_reuse = true;
  // An input a tiled reduction reads under padding guards (a convolution's
  // select(0 <= h + r - P < H, X[..], 0)) may be read from a zero-padded
  // copy instead, a sampled choice: the guards leave the inner loops.
  bool pad_inputs = true;
  // The padded copy is made once for the whole call (before the kernel, or
  // per parallel task: sampled) only where each element of the input is
  // read by at least this many iterations of the block (C2D 3x3 with 64
  // output channels: 576); else per parallel task, while the task's rows
  // are hot in its cache (a depthwise 3x3 reads each element 9 times, and
  // a pass of its own over the input costs DEP's kernel a third).
  int64_t pad_root_min_reuse = 32;
  // A kernel that keeps padding guards (an input not padded) samples its
  // unroll depth only among unroll_steps of at least this many steps
  // (0: among all). The guards fold to constants only in unrolled copies;
  // rolled, every tap tests its row. On DEP the fastest guarded kernel ran
  // 20.3 / 18.1 / 11.2 / 9.0 us at unroll 0 / 16 / 64 / 512 (padded ones:
  // 9.8-10.0 at every depth; docs/tuning-benchmarks.md).
  int64_t guarded_unroll_min_step = 64;
  // A spatial axis the block reads modulo a constant S (a stride-S transposed
  // convolution's output row h picks its taps by (h + P) % S once decomposed,
  // decompose_strided_gather.h) may be split into S classes (h = S * h' + q),
  // the class loops put first inside each parallel task, a sampled choice:
  // every output of a register tile then reads the same weights.
  bool stride_classes_outer = true;
  // A spatial axis whose extent is not a multiple of vector_lanes may be
  // vectorized padded (pad_axis): the reduction computes whole vectors into
  // a padded accumulator from zero-padded copies of its inputs, and only
  // the valid part is stored. For the innermost axis this is a sampled
  // choice beside its divisor tiles; another axis is offered only padded,
  // only where no axis but the innermost is a multiple of the vector, and
  // only where the padded extent is at most pad_axis_max_growth times the
  // extent (a 7-wide axis would compute 16: more padding than work).
  bool pad_vector_axis = true;
  double pad_axis_max_growth = 2.0;
  // An input read with a stride S >= 2 along the vector axis (a stride-2
  // convolution's image along w) may be read through a copy split into its
  // S phases (split_phases), a sampled choice: whole-vector loads instead of
  // gathers, for one pass over the input.
  bool stride_phases = true;
  // The register tile (the innermost spatial tiles: accumulators held in
  // registers across the inner reduction loop) holds at least this many
  // vectors where the axes allow: two along the vector axis, the rest along
  // the innermost other axis that reuses loads. 1: no floor. The built-in
  // rules have none; the shipped configs/sketch/cpu.toml sets 4.
  int64_t register_tile_floor = 1;
  // rfactor for reductions with little spatial parallelism: at most this many
  // output elements, over at least rfactor_min_reduction reduced elements.
  int64_t rfactor_max_spatial = 64;
  int64_t rfactor_min_reduction = 1024;
  // A reduction of i8 x i8 -> i32 products (or u8 x u8) may be tiled for the
  // target's dot product instructions, a sampled choice: its reduction split
  // by 4 innermost under the vector loop, annotated pragma_dot_product
  // (sketch_cpu_dot.cpp). Offered only where dot_product_lanes is set.
  bool int8_dot_product = true;
  // The i32 lanes of the target's dot product instruction, which must equal
  // vector_lanes: 4 on AArch64 with dotprod and 128-bit vectors (sdot), 0
  // where there is none. From the target (CpuSketchDefaultsFor), not a knob.
  int64_t dot_product_lanes = 0;
  // Such a reduction may instead be tiled for the target's int8 matrix
  // multiply instructions, a third value of the same sampled choice: 2 rows x
  // 2 columns x 8 reduction steps innermost, annotated
  // pragma_matrix_multiply_accumulate (sketch_cpu_dot.cpp). Offered only
  // where matrix_multiply_tiles is set.
  bool int8_matrix_multiply = true;
  // Whether the target has them: AArch64 with i8mm (`smmla`, `ummla`). From
  // the target (CpuSketchDefaultsFor), not a knob.
  bool matrix_multiply_tiles = false;
};

// The rules' defaults for a target's vector unit: vector_lanes is the f32
// lanes of its widest vector (16 with AVX-512, 8 with AVX2, 4 with NEON) and
// max_vector_register_tile the most vectors V for which a V x 4 accumulator
// tile, V loaded vectors and a broadcast fit its vector registers, at most 4
// (4 of 32, 3 of 16), so the register tile's vectors fit the register file; the rest are
// the struct's defaults; dot_product_lanes is 4 on AArch64 with dotprod
// and NEON-width vectors, else 0; matrix_multiply_tiles is set on AArch64
// with i8mm and NEON-width vectors.
CpuSketchConfig CpuSketchDefaultsFor(const Target& target);

// Reads a rule-set file over `defaults`; a missing key keeps its default, an
// unknown key or a bad value is an error naming the file, key and problem.
Result<CpuSketchConfig> LoadCpuSketchConfig(const std::string& path, const CpuSketchConfig& defaults = {});

class SketchPolicy {
 public:
  virtual ~SketchPolicy() = default;
  // Applies the rules to `sch` (a fresh schedule of the default PrimFunc).
  // Fails when a sampled combination is illegal; the caller retries with
  // another seed.
  virtual Status Apply(Schedule& sch) const = 0;
};

std::unique_ptr<SketchPolicy> MakeCpuSketchPolicy(CpuSketchConfig config = {});
// The policy of the rules registered for the target's kind
// (SketchRegistry::BuiltIn, sketch_registry.h: "llvm" gets the CPU rules),
// with their knobs' file from `config_dir`/sketch/ when it is there, else
// the built-in defaults. InvalidArgument naming the kind and the registered
// ones for a kind without rules. With `replayable` (the instructions and
// loop annotation keys the measuring workers replay) lacking pad_input, the
// padding rule is off, and lacking pragma_dot_product, the int8 dot
// products; every other rule writes instructions and keys that workers have
// replayed from the first version on.
Result<std::unique_ptr<SketchPolicy>> MakeSketchPolicy(const Target& target, const std::string& config_dir,
                                                       const std::set<std::string>* replayable = nullptr);

}  // namespace tunefarm::tuner
