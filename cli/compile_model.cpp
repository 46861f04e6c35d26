// `tunefarm compile MODEL.onnx`: every task of an imported model
// (frontend/model.h) with the tuning log's best record for it (else its
// default schedule, said on stderr per task, as for one workload) in one
// relocatable object, with the model's run and prepack entries, and one C
// header (tuner/model_build.h, tuner/model_header.h).
//
// This file turns the imported model into the build's ModelGraph: one slot
// per tensor memory (a view is its storage tensor's slot), ordered by role,
// and the calls in graph order. Weights that are not initializers of the
// file (Constant nodes, constants folded at import) are embedded in the
// object, since a caller could not fill them; with --embed-weights every
// weight is. A cuda target is refused: its kernels are cubins, one per task,
// with launchers of their own (compile the tasks that `tunefarm import -o`
// writes).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <type_traits>

#include <fmt/core.h>

#include "commands.h"
#include "compile_command.h"
#include "kernel_runner.h"
#include "tunefarm/compiler/lower/lower.h"
#include "tunefarm/compiler/workload/workload_parser.h"
#include "tunefarm/frontend/model.h"
#include "tunefarm/tuner/model_build.h"

namespace tunefarm::cli {
namespace {

using tuner::ModelSlot;

ModelSlot::Role RoleOf(const frontend::Model& m, const frontend::ModelTensor& storage) {
  switch (storage.kind) {
    case frontend::ModelTensor::Kind::kInput:
      return ModelSlot::Role::kInput;
    case frontend::ModelTensor::Kind::kWeight:
      return ModelSlot::Role::kWeight;
    case frontend::ModelTensor::Kind::kIntermediate:
      break;
  }
  for (const std::string& out : m.outputs) {
    const frontend::ModelTensor* t = m.Tensor(out);
    if (t != nullptr && t->storage == storage.name) return ModelSlot::Role::kOutput;
  }
  return ModelSlot::Role::kIntermediate;
}

bool Embedded(const frontend::ModelTensor& storage, bool embed_weights) {
  return storage.kind == frontend::ModelTensor::Kind::kWeight && (embed_weights || !storage.initializer);
}

// The bytes of a weight as its slot holds them, from the import's f32
// values. Integers are exact up to 2^24 in an f32: a larger one is refused
// rather than embedded wrong.
template <typename T>
Result<std::string> Encode(const frontend::ModelTensor& t, const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(T), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::is_floating_point_v<T> && std::fabs(values[i]) > float(1 << 24)) {
      return Status::Unimplemented("constant '" + t.name + "' holds " + fmt::format("{}", values[i]) +
                                   ", an integer tunefarm cannot embed exactly (its import reads values as f32)");
    }
    const T v = static_cast<T>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
  return bytes;
}

Result<std::string> WeightBytes(const frontend::ModelTensor& t, const std::vector<float>& values) {
  const ir::DataType d = t.dtype;
  if (d.lanes == 1 && d.is_float() && d.bits == 32) return Encode<float>(t, values);
  if (d.lanes == 1 && d.is_int() && d.bits == 64) return Encode<int64_t>(t, values);
  if (d.lanes == 1 && d.is_int() && d.bits == 32) return Encode<int32_t>(t, values);
  if (d.lanes == 1 && d.is_int() && d.bits == 8) return Encode<int8_t>(t, values);
  if (d.lanes == 1 && d.is_uint() && d.bits == 8) return Encode<uint8_t>(t, values);
  if (d.lanes == 1 && d.is_bool()) return Encode<uint8_t>(t, values);
  return Status::Unimplemented("constant '" + t.name + "' is " + d.ToString() +
                               ", a type tunefarm compile does not embed yet");
}

// The model as the build takes it. Slots in the order their tensors first
// appear (inputs, the calls' bindings in graph order, outputs), then
// stably by role, embedded weights after the caller's. The weights embedded
// are moved out of `m`'s values, one at a time: the bytes are never held
// twice.
Result<tuner::ModelGraph> GraphOf(frontend::Model& m, bool embed_weights) {
  tuner::ModelGraph g;
  g.name = m.name;
  g.source = m.path;
  for (const frontend::ModelTask& t : m.tasks) g.kernels.push_back(t.workload);
  std::vector<const frontend::ModelTensor*> storages;
  std::set<std::string> seen;
  auto storage_of = [&](const std::string& name) -> Result<const frontend::ModelTensor*> {
    const frontend::ModelTensor* t = m.Tensor(name);
    const frontend::ModelTensor* s = t == nullptr ? nullptr : m.Tensor(t->storage);
    if (s == nullptr) return Status::Internal("model " + m.path + ": tensor '" + name + "' has no storage tensor");
    if (seen.insert(s->name).second) storages.push_back(s);
    return s;
  };
  for (const std::string& in : m.inputs) TF_RETURN_IF_ERROR(storage_of(in).status());
  for (const auto& [task, call] : m.order) {
    const frontend::TaskCall& c = m.tasks[task].calls[call];
    for (const std::string& in : c.inputs) TF_RETURN_IF_ERROR(storage_of(in).status());
    TF_RETURN_IF_ERROR(storage_of(c.output).status());
  }
  for (const std::string& out : m.outputs) TF_RETURN_IF_ERROR(storage_of(out).status());
  std::stable_sort(storages.begin(), storages.end(), [&](const auto* a, const auto* b) {
    return std::pair(RoleOf(m, *a), Embedded(*a, embed_weights)) <
           std::pair(RoleOf(m, *b), Embedded(*b, embed_weights));
  });

  std::map<std::string, size_t> slot_of;
  for (const frontend::ModelTensor* s : storages) {
    slot_of[s->name] = g.slots.size();
    ModelSlot slot;
    slot.name = s->name;
    slot.role = RoleOf(m, *s);
    slot.dtype = s->dtype;
    slot.shape = s->shape;
    if (Embedded(*s, embed_weights)) {
      auto values = m.weights.find(s->name);
      if (values == m.weights.end()) return Status::Internal("model " + m.path + ": no values for " + s->name);
      TF_ASSIGN_OR_RETURN(std::string bytes, WeightBytes(*s, values->second));
      m.weights.erase(values);
      slot.embedded = std::make_shared<const std::string>(std::move(bytes));
    }
    g.slots.push_back(std::move(slot));
  }
  // The graph's own names for what it takes and gives, where they are views.
  for (const std::vector<std::string>* names : {&m.inputs, &m.outputs}) {
    for (const std::string& name : *names) {
      const frontend::ModelTensor* t = m.Tensor(name);
      std::vector<std::string>& views = g.slots[slot_of.at(t->storage)].views;
      if (t->storage != name && std::find(views.begin(), views.end(), name) == views.end()) views.push_back(name);
    }
  }
  for (const auto& [task, call] : m.order) {
    const frontend::TaskCall& c = m.tasks[task].calls[call];
    tuner::ModelCall mc;
    mc.kernel = task;
    for (const std::string& in : c.inputs) mc.slots.push_back(slot_of.at(m.Tensor(in)->storage));
    mc.slots.push_back(slot_of.at(m.Tensor(c.output)->storage));
    for (const std::string& node : c.nodes) mc.what += (mc.what.empty() ? "" : " + ") + node;
    g.calls.push_back(std::move(mc));
  }
  return g;
}

// Prints a failed build's error; its exit code. `untuned` names the kernels
// without a record, for --require-tuned.
int BuildFailed(const CompileOptions& o, const Status& s, tuner::KernelBuildStage stage, const Target& target,
                const std::vector<std::string>& untuned, size_t kernels) {
  switch (stage) {
    case tuner::KernelBuildStage::kLower:
      fmt::print(stderr, "error: {}\n", s.message());
      return kExitInternalError;
    case tuner::KernelBuildStage::kSchedule:
      fmt::print(stderr, "error: {}\n", s.message());
      return kExitUserError;
    case tuner::KernelBuildStage::kRequireTuned: {
      std::string names;
      for (const std::string& n : untuned) names += (names.empty() ? "" : ", ") + n;
      fmt::print(stderr,
                 "error: --require-tuned and {} of the {} kernels have no tuning record matching {}{}: {} (tune the "
                 "model first: tunefarm tune {}{})\n",
                 untuned.size(), kernels, target.ToString(), o.db.empty() ? " (no --db given)" : " in " + o.db, names,
                 o.workload_path, o.db.empty() ? "" : " --db " + o.db);
      return kExitNotTuned;
    }
    case tuner::KernelBuildStage::kCodegen:
      fmt::print(stderr, "error: {}\n", s.message());
      return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kUnimplemented ? kExitUserError
                                                                                                  : kExitInternalError;
    case tuner::KernelBuildStage::kLink:
      if (!target.is_host()) {
        fmt::print(stderr, "error: --shared links with this machine's linker; build an object (-o x.o) for {}\n",
                   target.ToString());
      } else {
        fmt::print(stderr, "error: {}\n", s.message());
      }
      return kExitUserError;
  }
  fmt::print(stderr, "error: {}\n", s.message());
  return kExitInternalError;
}

}  // namespace

int CompileModel(const CompileOptions& o) {
  auto dims = ParseOverrides(o.overrides);
  if (!dims.ok()) {
    fmt::print(stderr, "error: {}\n", dims.status().message());
    return kExitUserError;
  }
  // The values of every weight: those embedded come from the import.
  auto model = frontend::ImportOnnx(o.workload_path, {*dims, /*read_weights=*/true});
  if (!model.ok()) {
    fmt::print(stderr, "error: {}\n", model.status().message());
    return model.status().code() == StatusCode::kInternal ? kExitInternalError : kExitUserError;
  }
  auto target = ParseTargetField("--target", o.target);
  if (!target.ok()) {
    fmt::print(stderr, "error: {}\n", target.status().message());
    return kExitUserError;
  }
  if (target->kind == "cuda") {
    fmt::print(stderr,
               "error: a model compiles into one object for a CPU (llvm targets); for {} compile its tasks one by "
               "one: `tunefarm import {} -o tasks/` writes them, `tunefarm compile tasks/<task>.tf --target '{}'` "
               "builds each cubin and its launcher\n",
               target->ToString(), o.workload_path, o.target);
    return kExitUserError;
  }
  for (const auto& [flag, path] : {std::pair<std::string, std::string>{"-o", o.output}, {"--header", o.header}}) {
    if (path.empty()) continue;
    if (Status writable = CheckOutputPath(flag, path); !writable.ok()) {
      fmt::print(stderr, "error: {}\n", writable.message());
      return kExitUserError;
    }
  }
  auto graph = GraphOf(*model, o.embed_weights);
  if (!graph.ok()) {
    fmt::print(stderr, "error: {}\n", graph.status().message());
    return graph.status().code() == StatusCode::kUnimplemented ? kExitUserError : kExitInternalError;
  }
  model->weights.clear();  // what is not embedded the caller fills
  std::vector<ir::PrimFunc> default_funcs;
  for (const Workload& w : graph->kernels) {
    auto f = LowerToPrimFunc(w);
    if (!f.ok()) {
      fmt::print(stderr, "error: {}: {}\n", w.name, f.status().message());
      return kExitInternalError;
    }
    default_funcs.push_back(std::move(f).value());
  }
  auto db = OpenCompileLog(o);
  if (!db.ok()) {
    fmt::print(stderr, "error: {}\n", db.status().message());
    return kExitUserError;
  }
  const database::Target record_target = tuner::KernelRecordTarget(*target, std::nullopt);
  std::vector<tuner::ChosenSchedule> schedules;
  for (size_t k = 0; k < graph->kernels.size(); ++k) {
    const Workload& w = graph->kernels[k];
    auto chosen = tuner::ChooseSchedule(db->get(), o.db, StructuralHashHex(w), w.name, record_target, default_funcs[k]);
    if (!chosen.ok()) {
      fmt::print(stderr, "error: {}\n", chosen.status().message());
      return kExitUserError;
    }
    schedules.push_back(std::move(chosen).value());
  }
  tuner::KernelBuildOptions build;
  build.shared = o.shared;
  build.require_tuned = o.require_tuned;
  build.log_name = o.db.empty() ? "no log (no --db given)" : o.db;
  std::vector<std::string> untuned;
  build.on_schedule_chosen = [&](const tuner::BuiltKernel& k) {
    ReportSchedule(o, *target, k);
    if (!k.tuned()) untuned.push_back(k.workload_name);
  };
  tuner::KernelBuildStage stage = tuner::KernelBuildStage::kLower;
  auto built = tuner::BuildModel(*graph, *target, schedules, build, &stage);
  if (!built.ok()) return BuildFailed(o, built.status(), stage, *target, untuned, graph->kernels.size());
  if (Status written = WriteOutputFile("-o", o.output, built->binary); !written.ok()) {
    fmt::print(stderr, "error: {}\n", written.message());
    return kExitUserError;
  }
  if (o.shared) {
    std::error_code ignored;
    std::filesystem::permissions(o.output,
                                 std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec |
                                     std::filesystem::perms::others_exec,
                                 std::filesystem::perm_options::add, ignored);
  }
  if (!o.header.empty()) {
    if (Status written = WriteOutputFile("--header", o.header, built->header); !written.ok()) {
      fmt::print(stderr, "error: {}\n", written.message());
      return kExitUserError;
    }
  }
  fmt::print(stderr,
             "tunefarm compile: wrote {} ({} bytes) for {}: model {}, {} kernels ({} tuned) in {} calls, {} slots; "
             "{} bytes of weights embedded; a workspace of {} bytes for {} bytes of intermediates; entries {}, {} "
             "and {}\n",
             o.output, built->object_size, target->ToString(), graph->name, graph->kernels.size(),
             built->TunedCount(), graph->calls.size(), built->slots.size(), built->embedded_bytes,
             built->workspace_bytes, built->intermediate_bytes, built->bind_symbol, built->prepack_symbol,
             built->run_symbol);
  return kExitOk;
}

}  // namespace tunefarm::cli
