// One object for a whole model (model_build.h): the graph checked against its
// kernels, every kernel described as BuildKernel describes one, the packed
// slots planned from the kernels' prepack splits, then one combined object
// with the prepack and run sequences, and the header.
#include "tunefarm/tuner/model_build.h"

#include <algorithm>
#include <map>
#include <optional>

#include "tunefarm/compiler/codegen/codegen.h"
#include "tunefarm/compiler/codegen/llvm/bind_entry.h"
#include "tunefarm/compiler/lower/split_prepack.h"
#include "tunefarm/tuner/model_header.h"
#include "tunefarm/tuner/workspace_plan.h"

namespace tunefarm::tuner {

namespace {

// Of every slot in the workspace: what the kernels' vector loads like best.
constexpr int64_t kWorkspaceAlignment = 64;

Result<BuiltModel> Fail(KernelBuildStage stage, Status status, KernelBuildStage* failed_stage) {
  if (failed_stage != nullptr) *failed_stage = stage;
  return status;
}

// Every call passes each param of its kernel a slot that exists and holds
// exactly that many bytes: the object trusts these bindings blindly.
Status CheckCalls(const ModelGraph& graph, const std::vector<ChosenSchedule>& schedules) {
  if (schedules.size() != graph.kernels.size()) {
    return Status::InvalidArgument("model " + graph.name + ": " + std::to_string(schedules.size()) +
                                   " schedules for " + std::to_string(graph.kernels.size()) + " kernels");
  }
  for (size_t i = 0; i < graph.slots.size(); ++i) {
    const ModelSlot& slot = graph.slots[i];
    if (slot.role == ModelSlot::Role::kPacked) {
      return Status::InvalidArgument("model " + graph.name + ": slot " + slot.name + " is a packed slot");
    }
    if (i > 0 && slot.role < graph.slots[i - 1].role) {
      return Status::InvalidArgument("model " + graph.name + ": slot " + slot.name + " (" +
                                     ModelSlotRoleName(slot.role) + ") comes after a slot of a later role");
    }
    if (slot.embedded && (slot.role != ModelSlot::Role::kWeight || int64_t(slot.embedded->size()) != slot.Bytes())) {
      return Status::InvalidArgument("model " + graph.name + ": slot " + slot.name + " (" +
                                     ModelSlotRoleName(slot.role) + ", " + std::to_string(slot.Bytes()) +
                                     " bytes) cannot embed " + std::to_string(slot.embedded->size()) + " bytes");
    }
    if (i > 0 && !slot.embedded && graph.slots[i - 1].embedded && slot.role == ModelSlot::Role::kWeight) {
      return Status::InvalidArgument("model " + graph.name + ": weight " + slot.name +
                                     " comes after an embedded weight");
    }
  }
  for (size_t c = 0; c < graph.calls.size(); ++c) {
    const ModelCall& call = graph.calls[c];
    const std::string where = "model " + graph.name + ", call " + std::to_string(c + 1) + " (" + call.what + ")";
    if (call.kernel >= graph.kernels.size()) return Status::InvalidArgument(where + ": no such kernel");
    const ir::PrimFunc& f = schedules[call.kernel].func;
    if (call.slots.size() != f.params.size()) {
      return Status::InvalidArgument(where + ": " + std::to_string(call.slots.size()) + " slots for the " +
                                     std::to_string(f.params.size()) + " params of " + f.name);
    }
    for (size_t p = 0; p < f.params.size(); ++p) {
      if (call.slots[p] >= graph.slots.size()) return Status::InvalidArgument(where + ": no such slot");
      const ModelSlot& slot = graph.slots[call.slots[p]];
      if (slot.Bytes() != f.params[p]->size_bytes()) {
        return Status::InvalidArgument(where + ": slot " + slot.name + " holds " + std::to_string(slot.Bytes()) +
                                       " bytes; " + f.name + "'s " + f.params[p]->name + " is " +
                                       std::to_string(f.params[p]->size_bytes()));
      }
    }
  }
  return Status::OK();
}

// The names of the kernels without a record, for --require-tuned's error.
std::string Untuned(const std::vector<BuiltKernel>& kernels, int* count) {
  std::string names;
  *count = 0;
  for (const BuiltKernel& k : kernels) {
    if (k.tuned()) continue;
    ++*count;
    names += (names.empty() ? "" : ", ") + k.workload_name;
  }
  return names;
}

// Places the intermediate and packed slots in one workspace: intermediates
// by their lifetimes over the run's calls, packed slots (written by the
// prepack, read by any call) for all of it.
BindEntry PlaceSlots(BuiltModel* model, const SequenceEntry& run) {
  BindEntry bind;
  bind.name = model->bind_symbol;
  std::vector<size_t> placed;
  std::vector<BufferLifetime> lifetimes;
  const size_t last_call = run.calls.empty() ? 0 : run.calls.size() - 1;
  for (size_t i = 0; i < model->slots.size(); ++i) {
    const ModelSlot& slot = model->slots[i];
    if (slot.embedded) {
      bind.constants.push_back({i, slot.embedded});
      model->embedded_bytes += slot.Bytes();
    }
    if (slot.role != ModelSlot::Role::kIntermediate && slot.role != ModelSlot::Role::kPacked) continue;
    BufferLifetime life{slot.Bytes(), 0, last_call};
    if (slot.role == ModelSlot::Role::kIntermediate) {
      model->intermediate_bytes += slot.Bytes();
      bool used = false;
      for (size_t c = 0; c < run.calls.size(); ++c) {
        if (std::find(run.calls[c].args.begin(), run.calls[c].args.end(), i) == run.calls[c].args.end()) continue;
        life.first = used ? life.first : c;
        life.last = c;
        used = true;
      }
      if (!used) life.first = life.last = 0;
    }
    placed.push_back(i);
    lifetimes.push_back(life);
  }
  const WorkspacePlan plan = PlanWorkspace(lifetimes, kWorkspaceAlignment);
  model->workspace_bytes = plan.bytes;
  for (size_t k = 0; k < placed.size(); ++k) {
    model->slots[placed[k]].workspace_offset = plan.offsets[k];
    bind.workspace.push_back({placed[k], plan.offsets[k]});
  }
  return bind;
}

}  // namespace

int64_t ModelSlot::Bytes() const {
  int64_t n = dtype.bytes();
  for (int64_t d : shape) n *= d;
  return n;
}

const char* ModelSlotRoleName(ModelSlot::Role role) {
  switch (role) {
    case ModelSlot::Role::kInput:
      return "input";
    case ModelSlot::Role::kWeight:
      return "weight";
    case ModelSlot::Role::kOutput:
      return "output";
    case ModelSlot::Role::kIntermediate:
      return "intermediate";
    case ModelSlot::Role::kPacked:
      return "packed";
  }
  return "?";
}

int BuiltModel::TunedCount() const {
  int n = 0;
  for (const BuiltKernel& k : kernels) n += k.tuned() ? 1 : 0;
  return n;
}

Result<BuiltModel> BuildModel(const ModelGraph& graph, const Target& target,
                              const std::vector<ChosenSchedule>& schedules, const KernelBuildOptions& options,
                              KernelBuildStage* failed_stage) {
  if (Status fits = CheckCalls(graph, schedules); !fits.ok()) {
    return Fail(KernelBuildStage::kLower, fits, failed_stage);
  }
  BuiltModel model;
  model.shared = options.shared;
  model.run_symbol = graph.name + "_run";
  model.prepack_symbol = graph.name + "_prepack";
  model.bind_symbol = graph.name + "_bind";
  // Every kernel is described (and reported) before --require-tuned fails,
  // so that one error names all the kernels still to tune.
  KernelBuildOptions each = options;
  each.require_tuned = false;
  for (size_t k = 0; k < graph.kernels.size(); ++k) {
    TF_ASSIGN_OR_RETURN(BuiltKernel kernel,
                        DescribeKernel(graph.kernels[k], target, schedules[k], each, failed_stage));
    model.kernels.push_back(std::move(kernel));
  }
  int untuned = 0;
  const std::string untuned_names = Untuned(model.kernels, &untuned);
  if (options.require_tuned && untuned > 0) {
    return Fail(KernelBuildStage::kRequireTuned,
                Status::NotFound("no tuning record on target " + target.ToString() + " in " + options.log_name +
                                 " for " + std::to_string(untuned) + " of the " +
                                 std::to_string(graph.kernels.size()) + " kernels of model " + graph.name + ": " +
                                 untuned_names),
                failed_stage);
  }
  if (options.shared && !target.is_host()) {
    return Fail(KernelBuildStage::kLink,
                Status::InvalidArgument("a shared library is linked with this machine's linker; build an object for " +
                                        target.ToString()),
                failed_stage);
  }

  // Packed slots: one set per kernel and weights it packs (the slots of its
  // constant params), in the order of the calls that first need them.
  model.slots = graph.slots;
  std::vector<ir::PrimFunc> funcs;
  std::vector<std::optional<PrepackSplit>> splits;
  for (const ChosenSchedule& s : schedules) {
    funcs.push_back(s.func);
    splits.push_back(SplitPrepack(s.func));
  }
  SequenceEntry prepack{model.prepack_symbol, {}}, run{model.run_symbol, {}};
  std::map<std::pair<size_t, std::vector<size_t>>, std::vector<size_t>> packed_by_weights;
  for (const ModelCall& call : graph.calls) {
    const std::optional<PrepackSplit>& split = splits[call.kernel];
    std::vector<size_t> packed;
    if (split) {
      std::vector<size_t> weights;
      for (size_t p : split->constant_params) weights.push_back(call.slots[p]);
      auto [it, fresh] = packed_by_weights.try_emplace({call.kernel, weights});
      if (fresh) {
        for (const ir::Buffer& b : split->packed) {
          it->second.push_back(model.slots.size());
          ModelSlot slot;
          slot.name = funcs[call.kernel].name + "." + b->name;
          slot.role = ModelSlot::Role::kPacked;
          slot.dtype = b->dtype;
          slot.shape = b->shape;
          model.slots.push_back(std::move(slot));
        }
        std::vector<size_t> args = weights;
        args.insert(args.end(), it->second.begin(), it->second.end());
        prepack.calls.push_back({split->prepack.name, std::move(args)});
      }
      packed = it->second;
    }
    std::vector<size_t> args = call.slots;
    args.insert(args.end(), packed.begin(), packed.end());
    run.calls.push_back({split ? split->prepacked.name : funcs[call.kernel].name, std::move(args)});
    model.packed_slots.push_back(std::move(packed));
  }

  const BindEntry bind = PlaceSlots(&model, run);
  auto generator = CodeGeneratorFor(target);
  if (!generator.ok()) return Fail(KernelBuildStage::kCodegen, generator.status(), failed_stage);
  // The bind entry and the constants are the llvm generator's; another kind
  // answers as it does for any combined object.
  auto object = target.kind == "llvm"
                    ? EmitCombinedObjectWithBind(funcs, {prepack, run}, bind, target, CodegenOptions())
                    : (*generator)->EmitCombinedObject(funcs, {prepack, run}, target, CodegenOptions());
  if (!object.ok()) return Fail(KernelBuildStage::kCodegen, object.status(), failed_stage);
  model.object_size = object->size();
  model.header = ModelHeaderText(graph, model, funcs, target);
  if (options.shared) {
    auto library = LinkSharedLibrary(*object, options.runtime_dir);
    if (!library.ok()) return Fail(KernelBuildStage::kLink, library.status(), failed_stage);
    model.binary = std::move(library).value();
  } else {
    model.binary = std::move(object).value();
  }
  return model;
}

}  // namespace tunefarm::tuner
