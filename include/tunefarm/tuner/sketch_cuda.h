// The GPU sketch rules (targets of kind "cuda"), as TVM MetaSchedule's CUDA
// rules shape a kernel:
//   1. inline element-wise producers of intermediates (a convolution's padding);
//   2. multi-level tiling SSSRRSRS of reductions with spatial loops: per
//      spatial loop five tiles (block, virtual thread, thread, two inner),
//      per reduction loop three; the block tiles fused and bound to
//      blockIdx.x, the virtual-thread tiles to vthread, the thread tiles to
//      threadIdx.x; the accumulator in registers (cache_write local) written
//      back per thread, with a fusible element-wise consumer (bias, relu)
//      inlined into the write-back; every input staged in shared memory per
//      outer reduction tile, fetched by all threads of the block together,
//      in vectors of a sampled width; where the outer reduction tiles make
//      two stages or more, whether the stage is double-buffered (sampled;
//      the outer reduction loops fused into one, annotated
//      kDoubleBufferAnnotation, its tiles counted twice against the shared
//      memory limit); per shared copy whose rows can be padded, whether to
//      pad them and by which row stride (storage_align against bank
//      conflicts; sketch_cuda_shared_padding.h); an auto-unroll depth sampled;
//   2b. where a reduction is long and its spatial work little (softmax and
//      norm rows, batch-1 dense; OffersCrossThread), a sampled choice beside
//      rule 2: cross-thread reduction, the reduction split over the threads
//      of a block (threadIdx.x, T a sampled power of two), its spatial loops
//      over blocks and thread rows; the lowering combines the threads'
//      partial results in shared memory (sketch_cuda_cross_thread.h);
//   3. every other block: spatial loops fused, split over blocks of a
//      sampled number of threads.
// Sampled tiles whose threads per block, virtual threads or shared memory
// fall outside the knobs' limits make Apply fail (the search draws again);
// registers are checked when the program is built (ptxas' report against the
// device's limits).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/tuner/sketch.h"
#include "tunefarm/tuner/sketch_registry.h"

namespace tunefarm::tuner {

// Knobs of the GPU rule set (configs/sketch/cuda.toml).
struct CudaSketchConfig {
  int64_t max_threads_per_block = 1024;  // threadIdx tiles' product, at most
  int64_t min_threads_per_block = 32;    // at least (a warp), where the work allows
  int64_t max_vthreads = 8;              // vthread tiles' product, at most
  int64_t max_shared_bytes = 48 * 1024;  // a tiled reduction's shared-memory stage, at most
  int64_t max_thread_tile = 256;         // a spatial loop's thread tile, at most
  int64_t max_thread_work = 16;          // a spatial loop's vthread x register tile, at most
  int64_t max_reduce_tile = 32;          // a reduction loop's part per shared-memory stage, at most
  int64_t max_innermost_tile = 64;       // innermost spatial and reduction tiles, at most
  bool shared_inputs = true;             // stage the reduction's inputs in shared memory
  bool double_buffer = true;             // sample double-buffering the shared stage (two stages or more)
  std::vector<int64_t> fetch_vector_lanes = {1, 2, 4};  // cooperative fetch vector widths
  bool storage_align = true;             // sample padding the rows of shared copies (storage_align)
  int64_t storage_align_factor = 32;     // a padded row's stride is taken modulo this many 4-byte banks
  std::vector<int64_t> storage_align_offsets = {1, 2, 3, 4};  // candidate strides modulo the factor
  std::vector<int64_t> unroll_steps = {0, 16, 64, 512, 1024};  // pragma_auto_unroll_max_step
  std::vector<int64_t> elementwise_threads = {64, 128, 256, 512, 1024};  // rule 3's block sizes
  bool inline_elementwise = true;        // rule 1
  bool fuse_epilogue = true;             // inline an element-wise consumer into the write-back
  bool cross_thread_reduction = true;    // rule 2b offered at all
  int64_t cross_thread_min_reduce = 64;  // rule 2b: reduction length, at least
  int64_t cross_thread_max_outputs_per_reduce = 64;  // rule 2b: outputs per reduction element, at most
};

// Reads a rule-set file; a missing key keeps its default, an unknown key or a
// bad value is an error naming the file, key and problem.
Result<CudaSketchConfig> LoadCudaSketchConfig(const std::string& path);

std::unique_ptr<SketchPolicy> MakeCudaSketchPolicy(CudaSketchConfig config = {});

// The GPU rules as a rule set: configs/sketch/cuda.toml.
SketchRuleSet CudaSketchRules();

}  // namespace tunefarm::tuner
