// Feature extraction: lowered loop IR -> fixed-length vectors for the cost model.
//
// Input is the output of LowerForCodegen (no Blocks; the loops and stores the
// code generator sees). One walk of the IR builds one raw row per Store
// (Ansor's per-store feature set, adapted to this IR: 165 values, laid out
// by StoreFeature below), then pools the rows of a program into one vector of
// kNumFeatures floats:
//
//   [0, kStoreFeatures)                    log2(1 + sum over stores of raw row)
//   [kStoreFeatures, 2 * kStoreFeatures)   log2(1 + max over stores of raw row)
//   [2 * kStoreFeatures, 3 * kStoreFeatures) log2(1 + raw row of the main store),
//                                          the one with the most float ops
//   [3 * kStoreFeatures, kNestOffset)      program-level features (ProgramFeature)
//   [kNestOffset, kGpuOffset)              the main store's loop-nest block (NestFeature)
//   [kGpuOffset, kNumFeatures)             GPU shared-memory block (GpuFeature; zero on CPU)
//
// Why three poolings: Ansor predicts a score per store and sums them
// (pack-sum); with one vector per program, the sum keeps the extensive
// quantities (ops, bytes, lines) additive, the max and the main store's own
// row keep the dominant computation's intensive ones (vector length,
// stride, positions) from being diluted by cheap stores such as reduction
// inits and write-backs (the main-store block raised held-out pairwise
// accuracy by about 0.03 in bench/costmodel). Every index is documented in
// docs/costmodel.md.
//
// Extraction does no string work on the hot path (thread tags are classified
// by their first characters once per loop) and allocates only a few reused
// vectors; it is thread-compatible (no shared state).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"

namespace tunefarm::costmodel {

// Buffers described per store (sorted by bytes accessed, largest first).
inline constexpr int kMaxBuffers = 5;
// Arithmetic-intensity curve samples per store.
inline constexpr int kIntensitySamples = 10;

// Where annotated loops (vectorized, unrolled, parallel) sit relative to the
// store's spatial loops (their variable indexes the stored element) and
// reduction loops (they do not). One-hot, 8 values, as in Ansor.
enum class LoopPosition : int {
  kNone = 0,
  kInnerSpatial,
  kMiddleSpatial,
  kOuterSpatial,
  kInnerReduce,
  kMiddleReduce,
  kOuterReduce,
  kMixed,
};
inline constexpr int kNumLoopPositions = 8;

// Per-buffer access block (kBufferFeatures values), repeated kMaxBuffers times.
enum BufferFeature : int {
  kAccessRead = 0,      // one-hot access kind: only read by the store
  kAccessWrite,         //   only written
  kAccessReadWrite,     //   read and written (reduction update)
  kBytes,               // bytes accessed, counting repetition (trip count x accesses x elem bytes)
  kUniqueBytes,         // bytes of the region touched over the whole loop nest
  kLines,               // cache lines (64 B) touched, counting repetition
  kUniqueLines,         // distinct cache lines of the region
  kReuseLoopRead,       // one-hot reuse kind: an enclosing loop does not index the buffer
  kReuseSerial,         //   the buffer was accessed by an earlier store (producer/consumer)
  kReuseNone,           //   no reuse
  kReuseDistIter,       // iterations between reuses (product of loops inside the reuse loop)
  kReuseDistBytes,      // bytes all buffers of the store touch between reuses
  kReuseCount,          // times the data is reused (extent of the reuse loop)
  kBytesPerReuse,       // kBytes / kReuseCount
  kUniqueBytesPerReuse,
  kLinesPerReuse,
  kUniqueLinesPerReuse,
  kStride,              // elements between consecutive iterations of the innermost loop that moves the access
  kBufferFeatures,
};

// Layout of one raw per-store row.
enum StoreFeature : int {
  // Arithmetic, each weighted by the trip count of the loops around the store
  // (and by vector lanes). Float then int: mad (add/sub of a mul, an FMA
  // candidate; its add and mul are also counted below), add/sub, mul,
  // div/mod, cmp (comparisons, min, max), math calls (exp, log, sqrt, rsqrt,
  // tanh, sigmoid, pow, erf), other calls (abs, floor, ceil). Int counts
  // include index arithmetic.
  kFloatMad = 0, kFloatAddSub, kFloatMul, kFloatDivMod, kFloatCmp, kFloatMath, kFloatOtherCall,
  kIntMad, kIntAddSub, kIntMul, kIntDivMod, kIntCmp, kIntMath, kIntOtherCall,
  kBoolOp,     // and/or/not
  kSelectOp,   // select
  kCastOp,     // casts
  // Loop kinds among the loops around the store: number of such loops,
  // product of their extents, extent of the innermost one, position one-hot.
  kVecNum, kVecProd, kVecLen, kVecPos,
  kUnrollNum = kVecPos + kNumLoopPositions, kUnrollProd, kUnrollLen, kUnrollPos,
  kParallelNum = kUnrollPos + kNumLoopPositions, kParallelProd, kParallelLen, kParallelPos,
  // GPU bindings (zero on CPU): any bound loop, then extents of the bindings.
  kIsGpu = kParallelPos + kNumLoopPositions,
  kBlockIdxX, kBlockIdxY, kBlockIdxZ, kThreadIdxX, kThreadIdxY, kThreadIdxZ, kVThread,
  // kMaxBuffers blocks of BufferFeature.
  kBufferBase,
  // Allocation of the stored buffer when the program allocates it (cache or
  // intermediate): its bytes, bytes x product of the loops around the
  // Allocate, that product, and 1 if its scope is not global.
  kAllocSize = kBufferBase + kMaxBuffers * kBufferFeatures,
  kAllocProd, kAllocOuterProd, kAllocLocal,
  // Outer-loop context: trip count of the store, loop depth, largest
  // pragma_auto_unroll_max_step around it.
  kOuterProd, kNumLoops, kAutoUnrollMaxStep,
  // Arithmetic intensity (float ops / bytes touched) with the loops from
  // the innermost up to a level varying, sampled at kIntensitySamples points
  // from the innermost level (sample 0) to the whole nest (last sample).
  kIntensity,
  kStoreFeatures = kIntensity + kIntensitySamples,
};
static_assert(kStoreFeatures == 165, "docs/costmodel.md documents 165 per-store features");

// Loop-nest features of one store (computed for every store; the main
// store's block is appended to the pooled vector). Where Ansor's row counts
// and pools, these keep the structure that decides the code LLVM emits for
// the innermost loops: the extents, kinds and per-buffer strides of the
// innermost kNestLevels loops, the register tile under the innermost
// reduction loop, how the vectorized loop accesses memory and whether its
// length suits the native vector width, the cache level each loop level's
// footprint fits in, and loop-control overhead. Raw values (no log).
inline constexpr int kNestLevels = 6;
enum LoopLevelFeature : int {
  kLevelExtent = 0,   // extent (0: no loop at this level)
  kLevelKind,         // 1 serial, 2 unrolled, 3 vectorized, 4 parallel, 5 GPU-bound
  kLevelReduce,       // 1 when the loop does not index the stored element
  kLevelStrideOut,    // elements the stored buffer moves per iteration (0: invariant)
  kLevelStrideIn0,    // the same for the read buffer with the most bytes
  kLevelStrideIn1,    //   and the second one
  kLevelContiguous,   // buffers the loop moves by one element (vectorizable access)
  kLevelBroadcast,    // buffers the loop does not move
  kLevelStrided,      // buffers moved by more than one element (gather or strided access)
  kLevelFootprint,    // bytes all buffers touch with this loop and the ones inside it varying
  kLevelIntensity,    // float ops / kLevelFootprint over the same loops
  kLevelBytesOut,     // bytes of the stored buffer's region with this loop and the ones inside it varying
  kLevelBytesIn0,     //   the same for the read buffer with the most bytes
  kLevelBytesIn1,     //   and the second one
  kLevelFeatures,
};
enum NestFeature : int {
  kLevels = 0,  // kNestLevels blocks of LoopLevelFeature, innermost loop first
  // Register tile: the loops inside the innermost reduction loop.
  kRegTileProd = kLevels + kNestLevels * kLevelFeatures,  // product of their extents (0: no reduction loop)
  kRegTileFast,          // 1 when all of them are unrolled or vectorized (straight-line code)
  kRegTileAccum,         // distinct stored elements inside the innermost reduction loop
  kRegTileReduceExtent,  // extent of the innermost reduction loop
  kStoreInvariantInner,  // 1 when the innermost loop does not move the stored element
  // The innermost vectorized loop.
  kVecLanes,             // its extent (0: none)
  kVecNativeMultiple,    // 1 when the extent is a multiple of the native width (16 f32 lanes)
  kVecLanesMod,          // extent mod the native width
  kVecRegisters,         // ceil(extent / native width)
  kVecContiguous,        // accesses with stride 1 along it
  kVecBroadcast,         // accesses it does not move
  kVecGather,            // other strides (gathers and scatters)
  kVecBlocked,           // 1 when codegen cannot widen it (a reduction loop, or loops inside it)
  kStraightLineProd,     // product of the innermost run of unrolled/vectorized loops
  // Cache fit of the store's footprint (all buffers, per loop level).
  kFitL1Levels,          // innermost loops whose footprint fits in L1 (48 KiB)
  kFitL1Iters,           // iterations of those loops
  kFitL2Levels,          // the same for L2 (1 MiB)
  kFitL2Iters,
  // Parallelism and loop overhead.
  kParallelTasks,        // product of parallel loop extents
  kParallelBalance,      // tasks / (cores x ceil(tasks / cores)): 1 when evenly divisible
  kLoopLatches,          // back-edges executed by serial loops (unrolled and vectorized excluded)
  kBodyExecutions,       // executions of the loop body: trip count / vector lanes
  // A rough instruction count, because trees cannot multiply features:
  // accumulators held in registers, then memory and float instructions of
  // the whole nest with native-width vectors (a contiguous access of L lanes
  // costs ceil(L / 16) instructions, a broadcast 1, a gather L; stored
  // accumulators that stay in registers across the innermost reduction
  // loop are not counted per iteration).
  kAccumRegisters,       // native vector registers the register tile's accumulators need
  kInnerAutoVectorizable,// 1 when the innermost loop is serial, moves the store by 1 and reads contiguously or not at all
  kEstMemInstrs,
  kEstFloatInstrs,
  kEstInstrs,            // kEstMemInstrs + kEstFloatInstrs + kLoopLatches
  // Cache traffic: the loops whose footprint fits in a cache keep their data
  // there; every iteration of the loops outside them refills that footprint.
  kL1FillBytes,          // bytes brought into L1: footprint of the L1-fitting loops x iterations outside them
  kL2FillBytes,          // the same for L2
  kEstCycles,            // max(float, memory instructions / 2, L1 fill / 64, L2 fill / 32) + loop latches
  // The width LLVM gives the innermost loop: a vectorized loop's extent, an
  // unrolled one's (SLP) or up to the native width for a serial one (loop
  // vectorizer) when the store moves by 1 and every buffer by 0 or 1; 1 otherwise.
  kEffLanes,
  kEffInstrs,            // kEstInstrs with kEffLanes as the vector width
  kEffCycles,            // kEstCycles with kEffLanes as the vector width
  kNestFeatures,
};

// Program-level features appended after the pooled rows.
enum ProgramFeature : int {
  kNumStores = 0,      // stores in the program
  kNumAllocs,          // Allocate statements
  kTotalFloatOps,      // float add/sub/mul/div/cmp/calls summed over stores (log2(1+x))
  kTotalUniqueBytes,   // unique bytes of every buffer over every store (log2(1+x))
  kProgramFeatures,
};

// GPU shared-memory decisions that LowerForCodegen's output shows only
// indirectly (zero on CPU targets). Double buffering is a loop annotation
// here (LowerForCuda realises it); the load widths and bank conflicts are
// static estimates for the main store's loads of shared buffers
// (shared_bank_conflicts.h: the first warp's addresses, 32 banks of 4 bytes).
// Raw values (no log).
enum GpuFeature : int {
  kDoubleBuffered = 0,   // 1 when a loop carries software_pipeline_double_buffer and stages a shared buffer
  kDoubleBufferBytes,    // bytes of the shared buffers such loops stage (LowerForCuda allocates each twice)
  kSharedLoads,          // loads of shared buffers in the main store (per execution)
  kSharedLoadBytes,      // bytes those loads read per execution
  kSharedVectorFraction, // fraction of those bytes read as 2- or 4-wide vectors (ld.shared.v2/v4)
  kSharedMinLanes,       // narrowest estimated width among them, in elements (0: no shared load)
  kSharedMaxLanes,       // widest
  kBankConflictMax,      // worst bank-conflict ways among them (1: conflict-free; 0: none analysed)
  kBankConflictMean,     // their ways averaged, weighted by bytes
  kBankConflictScalarMax,// worst ways were every one of them read one element at a time
  kGpuFeatures,
};

// Pooled rows, program features, the main store's NestFeature block, then
// the GpuFeature block (appended last so that the indices before it keep
// their meaning).
inline constexpr int kNestOffset = 3 * kStoreFeatures + kProgramFeatures;
inline constexpr int kGpuOffset = kNestOffset + kNestFeatures;
inline constexpr int kNumFeatures = kGpuOffset + kGpuFeatures;
static_assert(kNumFeatures == 626, "docs/costmodel.md documents 626 features");

// Offset of feature `f` of the `slot`-th buffer in a store row.
constexpr int BufferFeatureIndex(int slot, BufferFeature f) { return kBufferBase + slot * kBufferFeatures + f; }

// One raw (not log-scaled) per-store row.
struct StoreRow {
  const ir::BufferNode* buffer = nullptr;  // the stored buffer
  std::array<float, kStoreFeatures> values{};
  std::array<float, kNestFeatures> nest{};  // NestFeature layout
  // GpuFeature layout: the shared-load entries of this store (kSharedLoads
  // onwards); the double-buffer entries are the program's and stay 0 here.
  std::array<float, kGpuFeatures> gpu{};
};

using FeatureVector = std::vector<float>;  // kNumFeatures values
// Row-major so that a row is one candidate's contiguous vector (what
// XGBoost's dense matrix constructors take).
using FeatureMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Raw per-store rows in program order (for tests and inspection).
std::vector<StoreRow> ExtractStoreFeatures(const ir::PrimFunc& lowered);

// The pooled vector of a lowered program (kNumFeatures values).
FeatureVector ExtractFeatures(const ir::PrimFunc& lowered);
// Same, written to out[0, kNumFeatures).
void ExtractFeatures(const ir::PrimFunc& lowered, float* out);
// One row per program.
FeatureMatrix ExtractFeatureMatrix(const std::vector<const ir::PrimFunc*>& lowered);

// Float operations of a raw row the way Workload::Flops counts them
// (add/sub, mul, div/mod, cmp, calls; mad is not added again).
double RowFloatOps(const StoreRow& row);

// Short name of a pooled-vector index ("sum.float_mul", "max.buf0.stride",
// "prog.num_stores"); for docs, dumps and debugging, not the hot path.
std::string FeatureName(int index);

}  // namespace tunefarm::costmodel
