// The C header `tunefarm compile MODEL.onnx` writes beside the model's object
// (model_build.h). It holds, for C and C++ callers:
//
//  * an enum naming every slot, <MODEL>_<TENSOR> (upper case, letters, digits
//    and '_', made unique), with its role, element type, shape and bytes in
//    a comment; the graph's inputs and outputs that are views of a slot are
//    names of that slot too; <MODEL>_NUM_SLOTS;
//  * where each role's slots begin (<MODEL>_WEIGHTS_BEGIN, ...), where the
//    embedded weights begin (<MODEL>_EMBEDDED_BEGIN: the caller fills the
//    slots below it), <MODEL>_WORKSPACE_BYTES, and two initializers indexed
//    by slot: <MODEL>_SLOT_BYTES and <MODEL>_SLOT_NAMES (the graph tensor's
//    name: where a weight's values come from);
//  * <model>_bind, <model>_prepack and <model>_run, and how to call them;
//  * every kernel's own entries as the single-workload header declares them
//    (kernel_header.h), with its schedule, and the calls of the run in order.
//
// A plain function of its inputs; no state.
#pragma once

#include <string>
#include <vector>

#include "tunefarm/compiler/ir/ir.h"
#include "tunefarm/compiler/target.h"
#include "tunefarm/tuner/model_build.h"

namespace tunefarm::tuner {

// `funcs[k]` is the scheduled PrimFunc of graph.kernels[k] that `model`'s
// object was built from (its prepack split decides the entries declared).
std::string ModelHeaderText(const ModelGraph& graph, const BuiltModel& model, const std::vector<ir::PrimFunc>& funcs,
                            const Target& target);

// The enum constant of each slot ("SMALL_CNN_INPUT"), in slot order, and of
// each of their views after them; unique, none "<MODEL>_NUM_SLOTS", a
// role's "<MODEL>_<ROLE>S_BEGIN" or another macro of the header.
struct ModelSlotConstants {
  std::vector<std::string> slots;
  std::vector<std::vector<std::string>> views;  // per slot, per ModelSlot::views
};
ModelSlotConstants NameModelSlots(const std::string& model_name, const std::vector<ModelSlot>& slots);

}  // namespace tunefarm::tuner
