// Building one object for a whole model: every kernel the model runs, each
// with the schedule the tuning log chose for it as for a single workload
// (ChooseSchedule, DescribeKernel of kernel_build.h), in one relocatable
// object (CodeGenerator::EmitCombinedObject) with two more entries,
//
//   int32_t <model>_prepack(void* const* slots)  fills the packed slots from
//                                                the weights, once per set
//   int32_t <model>_run(void* const* slots)      every call, in graph order
//
// and one C header declaring them, the slots and every kernel's own entries
// (model_header.h).
//
// The kernels take their buffers from one array of addresses indexed by
// slot. A slot is a graph tensor's memory (views share the slot of the
// tensor they view) or a packed copy of a constant input that a kernel's
// schedule lays out ahead of its calls (split_prepack.h); calls of one kernel
// on the same weights share their packed slots. Slots are numbered by role:
// inputs, weights (those the caller fills, then the embedded ones), outputs,
// intermediates, packed.
//
// The caller allocates and fills the inputs and its weights and allocates
// the outputs. A third entry places the rest:
//
//   int32_t <model>_bind(void** slots, void* workspace)
//
// points every embedded weight's slot at its bytes in the object's read-only
// data, and every intermediate and packed slot into the caller's workspace of
// BuiltModel::workspace_bytes: intermediates whose lifetimes (first write ..
// last read, in the run's call order) do not overlap share bytes
// (workspace_plan.h); packed slots live for the whole run. Graph outputs are
// never in the workspace.
//
// This file knows nothing of ONNX: `tunefarm compile` turns an imported model
// (frontend/model.h) into a ModelGraph. Thread safety as kernel_build.h's.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"
#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/compiler/workload/workload.h"
#include "tunefarm/tuner/kernel_build.h"

namespace tunefarm::tuner {

struct ModelSlot {
  // In slot order. Inputs and weights the caller fills, outputs it reads;
  // intermediates and packed slots it only allocates.
  enum class Role : uint8_t { kInput, kWeight, kOutput, kIntermediate, kPacked };
  std::string name;                // the graph tensor; packed: "<kernel>.<buffer>" it packs
  std::vector<std::string> views;  // the graph's inputs and outputs that are views of it
  Role role = Role::kIntermediate;
  ir::DataType dtype = ir::DataType::Float(32);
  std::vector<int64_t> shape;
  // A weight whose bytes (Bytes() of them, dense, row-major) the object
  // holds; the caller neither allocates nor fills it. Null for the others.
  std::shared_ptr<const std::string> embedded;
  // Intermediates and packed slots after BuildModel: the slot's offset in the
  // workspace, a multiple of 64. -1 for the others.
  int64_t workspace_offset = -1;

  int64_t Bytes() const;
};

// "input", "weight", "output", "intermediate", "packed".
const char* ModelSlotRoleName(ModelSlot::Role role);

// One call of a kernel.
struct ModelCall {
  size_t kernel = 0;
  std::vector<size_t> slots;  // one per param of the kernel's PrimFunc: its inputs, then its output
  std::string what;           // the graph nodes it computes, for a person reading the header
};

// A model as the build takes it.
struct ModelGraph {
  std::string name;    // a C identifier; the entries are <name>_run and <name>_prepack
  std::string source;  // the model file, named in the header
  std::vector<Workload> kernels;
  // Ordered by role, none kPacked (BuildModel adds those); among the
  // weights, the embedded ones last.
  std::vector<ModelSlot> slots;
  std::vector<ModelCall> calls;  // graph order: every call after those writing its inputs
};

struct BuiltModel {
  std::string binary;       // the relocatable object, or the shared library when built shared
  bool shared = false;
  size_t object_size = 0;   // bytes of the relocatable object
  std::string header;       // model_header.h's text
  // Per ModelGraph::kernels: where its schedule came from (DescribeKernel's
  // fields; binary and header empty: the kernel is in `binary`).
  std::vector<BuiltKernel> kernels;
  std::vector<ModelSlot> slots;                   // the graph's, then the packed ones
  std::vector<std::vector<size_t>> packed_slots;  // per call: its packed slots, empty for none
  std::string run_symbol;                         // <name>_run
  std::string prepack_symbol;                     // <name>_prepack
  std::string bind_symbol;                        // <name>_bind
  int64_t workspace_bytes = 0;                    // the workspace <name>_bind places slots in
  int64_t intermediate_bytes = 0;                 // the intermediates' bytes, each in memory of its own
  int64_t embedded_bytes = 0;                     // the embedded weights' bytes

  int TunedCount() const;
};

// Builds `graph` for `target`, kernel k with schedules[k] (ChooseSchedule's
// answer for it). The options apply as to BuildKernel: on_schedule_chosen is
// called once per kernel, in order; with require_tuned every kernel without a
// record is named in one NotFound (stage kRequireTuned), after all were
// described. A graph whose calls do not fit its kernels (a slot that does not
// exist, of another size than the param it is passed as, a missing param) is
// InvalidArgument at stage kLower, as is an embedded slot that is not a
// weight or has not Bytes() bytes. A target kind whose code generator builds
// one kernel per object (cuda) is Unimplemented at stage kCodegen.
Result<BuiltModel> BuildModel(const ModelGraph& graph, const Target& target,
                              const std::vector<ChosenSchedule>& schedules, const KernelBuildOptions& options,
                              KernelBuildStage* failed_stage = nullptr);

}  // namespace tunefarm::tuner
