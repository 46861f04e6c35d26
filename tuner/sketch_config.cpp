// The CPU rule set: its knobs' file (TOML, sketch_knobs.h) and its entry
// in the table of rule sets per target kind (sketch_registry.h).
#include <algorithm>
#include <set>

#include "sketch_knobs.h"

#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/tuner/sketch.h"
#include "tunefarm/tuner/sketch_registry.h"

namespace tunefarm::tuner {

CpuSketchConfig CpuSketchDefaultsFor(const Target& target) {
  CpuSketchConfig c;
  c.vector_lanes = std::max(1, target.VectorBits() / 32);
  // The register tile's vectors along the vector axis: the most V for which
  // V x 4 accumulators, the V vectors loaded per reduction step and one
  // broadcast fit the register file -- 3 of 16 registers, so that AVX2 holds
  // 24 output channels (3 x 8 lanes) in one tile -- and at most 4: wider
  // tiles on 32-register targets (6) have not been measured.
  c.max_vector_register_tile = std::clamp((target.VectorRegisters() - 1) / 5, 1, 4);
  // sdot: 4 i32 lanes of 4 bytes each in a 128-bit register. With a fixed
  // SVE length the vector loop is wider than one sdot; no dot products then.
  // (HasFeature is asked only on AArch64: another triple warns of the name.)
  const bool aarch64 = target.kind == "llvm" && target.triple.rfind("aarch64", 0) == 0;
  if (aarch64 && target.VectorBits() == 128 && target.HasFeature("dotprod")) c.dot_product_lanes = 4;
  // smmla: a 2 x 2 tile of i32 from 2 x 8 and 8 x 2 bytes, in NEON registers.
  c.matrix_multiply_tiles = aarch64 && target.VectorBits() == 128 && target.HasFeature("i8mm");
  return c;
}

Result<CpuSketchConfig> LoadCpuSketchConfig(const std::string& path, const CpuSketchConfig& defaults) {
  static const std::set<std::string> kKeys = {"spatial_levels", "reduce_levels", "max_vector_lanes", "max_inner_tile",
                                              "max_reduce_inner_tile", "unroll_steps", "cache_write", "inline_elementwise",
                                              "vector_lanes", "max_vector_register_tile",
                                              "rfactor_max_spatial", "rfactor_min_reduction",
                                              "register_tile_needs_reuse", "pad_inputs", "pad_root_min_reuse",
                                              "guarded_unroll_min_step",
                                              "stride_classes_outer", "pad_vector_axis", "pad_axis_max_growth",
                                              "stride_phases", "register_tile_floor", "int8_dot_product",
                                              "int8_matrix_multiply"};
  TF_ASSIGN_OR_RETURN(KnobsFile file, KnobsFile::Read(path, kKeys));
  const toml::table& table = file.table();
  CpuSketchConfig c = defaults;
  auto get_int = [&](const char* key, int64_t lo, int64_t hi, int64_t* out) { return file.GetInt(key, lo, hi, out); };
  auto get_bool = [&](const char* key, bool* out) { return file.GetBool(key, out); };
  int64_t spatial = c.spatial_levels, reduce = c.reduce_levels;
  TF_RETURN_IF_ERROR(get_int("spatial_levels", 2, 6, &spatial));
  TF_RETURN_IF_ERROR(get_int("reduce_levels", 1, 4, &reduce));
  c.spatial_levels = int(spatial);
  c.reduce_levels = int(reduce);
  TF_RETURN_IF_ERROR(get_int("max_vector_lanes", 1, 1024, &c.max_vector_lanes));
  TF_RETURN_IF_ERROR(get_int("vector_lanes", 1, 256, &c.vector_lanes));
  TF_RETURN_IF_ERROR(get_int("max_vector_register_tile", 1, 64, &c.max_vector_register_tile));
  TF_RETURN_IF_ERROR(get_int("max_inner_tile", 1, 1024, &c.max_inner_tile));
  TF_RETURN_IF_ERROR(get_int("max_reduce_inner_tile", 1, 4096, &c.max_reduce_inner_tile));
  TF_RETURN_IF_ERROR(get_int("rfactor_max_spatial", 0, int64_t(1) << 40, &c.rfactor_max_spatial));
  TF_RETURN_IF_ERROR(get_int("rfactor_min_reduction", 1, int64_t(1) << 40, &c.rfactor_min_reduction));
  TF_RETURN_IF_ERROR(get_bool("cache_write", &c.cache_write));
  TF_RETURN_IF_ERROR(get_bool("inline_elementwise", &c.inline_elementwise));
  TF_RETURN_IF_ERROR(get_bool("register_tile_needs_reuse", &c.register_tile_needs_reuse));
  TF_RETURN_IF_ERROR(get_bool("pad_inputs", &c.pad_inputs));
  TF_RETURN_IF_ERROR(get_int("pad_root_min_reuse", 0, int64_t(1) << 40, &c.pad_root_min_reuse));
  TF_RETURN_IF_ERROR(get_int("guarded_unroll_min_step", 0, int64_t(1) << 40, &c.guarded_unroll_min_step));
  TF_RETURN_IF_ERROR(get_bool("stride_classes_outer", &c.stride_classes_outer));
  TF_RETURN_IF_ERROR(get_bool("pad_vector_axis", &c.pad_vector_axis));
  TF_RETURN_IF_ERROR(get_bool("stride_phases", &c.stride_phases));
  TF_RETURN_IF_ERROR(get_int("register_tile_floor", 1, 64, &c.register_tile_floor));
  TF_RETURN_IF_ERROR(get_bool("int8_dot_product", &c.int8_dot_product));
  TF_RETURN_IF_ERROR(get_bool("int8_matrix_multiply", &c.int8_matrix_multiply));
  if (const toml::node* n = table.get("pad_axis_max_growth")) {
    auto v = n->value<double>();
    if (!v || !(*v >= 1.0 && *v <= 16.0)) {
      return Status::InvalidArgument(path + ": 'pad_axis_max_growth' must be a number in [1, 16]");
    }
    c.pad_axis_max_growth = *v;
  }
  if (const toml::node* n = table.get("unroll_steps")) {
    const toml::array* arr = n->as_array();
    if (!arr || arr->empty()) return Status::InvalidArgument(path + ": 'unroll_steps' must be a non-empty array of integers");
    c.unroll_steps.clear();
    for (const toml::node& item : *arr) {
      auto v = item.value_exact<int64_t>();
      if (!v || *v < 0) return Status::InvalidArgument(path + ": 'unroll_steps' must hold non-negative integers");
      c.unroll_steps.push_back(*v);
    }
  }
  return c;
}

SketchRuleSet CpuSketchRules() {
  SketchRuleSet rules;
  rules.config_file = "cpu.toml";
  rules.make = [](const Target& target, const std::string& config_path,
                  const std::set<std::string>* replayable) -> Result<std::unique_ptr<SketchPolicy>> {
    // The vector unit's knobs come from the target; the file may still set them.
    CpuSketchConfig config = CpuSketchDefaultsFor(target);
    if (!config_path.empty()) {
      TF_ASSIGN_OR_RETURN(config, LoadCpuSketchConfig(config_path, config));
    }
    // Every other rule writes instructions that workers have replayed from the
    // first version on; the padding rules came later.
    if (replayable && !replayable->count(InstructionName(InstructionKind::kPadInput))) config.pad_inputs = false;
    if (replayable && !replayable->count(InstructionName(InstructionKind::kPadAxis))) config.pad_vector_axis = false;
    if (replayable && !replayable->count(InstructionName(InstructionKind::kSplitPhases))) config.stride_phases = false;
    // The set holds loop annotation keys too; the int8 dot products came with theirs.
    if (replayable && !replayable->count(ir::kDotProductAnnotation)) config.int8_dot_product = false;
    if (replayable && !replayable->count(ir::kMatrixMultiplyAnnotation)) config.int8_matrix_multiply = false;
    return MakeCpuSketchPolicy(std::move(config));
  };
  return rules;
}

}  // namespace tunefarm::tuner
