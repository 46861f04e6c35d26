// The GPU rule set: its knobs' file (TOML, sketch_knobs.h) and its entry in
// the table of rule sets per target kind (sketch_registry.h).
#include <set>

#include "sketch_knobs.h"
#include "tunefarm/compiler/ir/loop_annotations.h"
#include "tunefarm/compiler/schedule/trace_instructions.h"
#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {

Result<CudaSketchConfig> LoadCudaSketchConfig(const std::string& path) {
  static const std::set<std::string> kKeys = {
      "max_threads_per_block", "min_threads_per_block", "max_vthreads",       "max_shared_bytes",
      "max_thread_tile",       "max_thread_work",       "max_reduce_tile",    "max_innermost_tile",
      "shared_inputs",         "fetch_vector_lanes",    "unroll_steps",       "elementwise_threads",
      "inline_elementwise",    "fuse_epilogue",         "cross_thread_reduction", "cross_thread_min_reduce",
      "cross_thread_max_outputs_per_reduce", "double_buffer", "storage_align", "storage_align_factor",
      "storage_align_offsets"};
  TF_ASSIGN_OR_RETURN(KnobsFile file, KnobsFile::Read(path, kKeys));
  CudaSketchConfig c;
  TF_RETURN_IF_ERROR(file.GetInt("max_threads_per_block", 1, 1024, &c.max_threads_per_block));
  TF_RETURN_IF_ERROR(file.GetInt("min_threads_per_block", 1, 1024, &c.min_threads_per_block));
  TF_RETURN_IF_ERROR(file.GetInt("max_vthreads", 1, 64, &c.max_vthreads));
  TF_RETURN_IF_ERROR(file.GetInt("max_shared_bytes", 1, 227 * 1024, &c.max_shared_bytes));
  TF_RETURN_IF_ERROR(file.GetInt("max_thread_tile", 1, 1024, &c.max_thread_tile));
  TF_RETURN_IF_ERROR(file.GetInt("max_thread_work", 1, 1024, &c.max_thread_work));
  TF_RETURN_IF_ERROR(file.GetInt("max_reduce_tile", 1, 4096, &c.max_reduce_tile));
  TF_RETURN_IF_ERROR(file.GetInt("max_innermost_tile", 1, 1024, &c.max_innermost_tile));
  TF_RETURN_IF_ERROR(file.GetBool("shared_inputs", &c.shared_inputs));
  TF_RETURN_IF_ERROR(file.GetBool("double_buffer", &c.double_buffer));
  TF_RETURN_IF_ERROR(file.GetBool("storage_align", &c.storage_align));
  TF_RETURN_IF_ERROR(file.GetInt("storage_align_factor", 1, 1024, &c.storage_align_factor));
  TF_RETURN_IF_ERROR(file.GetIntList("storage_align_offsets", 1, 1023, &c.storage_align_offsets));
  TF_RETURN_IF_ERROR(file.GetBool("inline_elementwise", &c.inline_elementwise));
  TF_RETURN_IF_ERROR(file.GetBool("fuse_epilogue", &c.fuse_epilogue));
  TF_RETURN_IF_ERROR(file.GetBool("cross_thread_reduction", &c.cross_thread_reduction));
  TF_RETURN_IF_ERROR(file.GetInt("cross_thread_min_reduce", 1, int64_t(1) << 40, &c.cross_thread_min_reduce));
  TF_RETURN_IF_ERROR(file.GetInt("cross_thread_max_outputs_per_reduce", 0, int64_t(1) << 40,
                                 &c.cross_thread_max_outputs_per_reduce));
  TF_RETURN_IF_ERROR(file.GetIntList("fetch_vector_lanes", 1, 4, &c.fetch_vector_lanes));
  TF_RETURN_IF_ERROR(file.GetIntList("unroll_steps", 0, 4096, &c.unroll_steps));
  TF_RETURN_IF_ERROR(file.GetIntList("elementwise_threads", 1, 1024, &c.elementwise_threads));
  if (c.min_threads_per_block > c.max_threads_per_block) {
    return Status::InvalidArgument(path + ": 'min_threads_per_block' is larger than 'max_threads_per_block'");
  }
  for (int64_t offset : c.storage_align_offsets) {
    if (offset >= c.storage_align_factor) {
      return Status::InvalidArgument(path + ": 'storage_align_offsets' holds " + std::to_string(offset) +
                                     ", not below 'storage_align_factor'");
    }
  }
  return c;
}

SketchRuleSet CudaSketchRules() {
  SketchRuleSet rules;
  rules.config_file = "cuda.toml";
  rules.make = [](const Target&, const std::string& config_path,
                  const std::set<std::string>* replayable) -> Result<std::unique_ptr<SketchPolicy>> {
    CudaSketchConfig config;
    if (!config_path.empty()) {
      TF_ASSIGN_OR_RETURN(config, LoadCudaSketchConfig(config_path));
    }
    // Workers from before the double-buffered stage answer its annotation
    // "unknown", and workers without storage_align the instruction: the
    // rules draw no such program for them.
    if (replayable && !replayable->count(ir::kDoubleBufferAnnotation)) config.double_buffer = false;
    if (replayable && !replayable->count(InstructionName(InstructionKind::kStorageAlign))) config.storage_align = false;
    return MakeCudaSketchPolicy(std::move(config));
  };
  return rules;
}

}  // namespace tunefarm::tuner
