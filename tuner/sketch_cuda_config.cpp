// The GPU rule set: its knobs' file (TOML, read with toml++) and its entry in
// the table of rule sets per target kind (sketch_registry.h).
#include <toml++/toml.h>

#include <set>

#include "tunefarm/tuner/sketch_cuda.h"

namespace tunefarm::tuner {

namespace {

// A non-empty array of integers in [lo, hi] under `key`, when present.
Status GetIntList(const toml::table& table, const std::string& path, const char* key, int64_t lo, int64_t hi,
                  std::vector<int64_t>* out) {
  const toml::node* n = table.get(key);
  if (!n) return Status::OK();
  const toml::array* arr = n->as_array();
  const std::string want = path + ": '" + key + "' must be a non-empty array of integers in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]";
  if (!arr || arr->empty()) return Status::InvalidArgument(want);
  out->clear();
  for (const toml::node& item : *arr) {
    auto v = item.value_exact<int64_t>();
    if (!v || *v < lo || *v > hi) return Status::InvalidArgument(want);
    out->push_back(*v);
  }
  return Status::OK();
}

}  // namespace

Result<CudaSketchConfig> LoadCudaSketchConfig(const std::string& path) {
  toml::table table;
  try {
    table = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return Status::InvalidArgument(path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " +
                                   std::string(e.description()));
  }
  static const std::set<std::string> kKeys = {
      "max_threads_per_block", "min_threads_per_block", "max_vthreads", "max_shared_bytes", "max_thread_tile", "max_thread_work", "max_reduce_tile", "max_innermost_tile", "shared_inputs",
      "fetch_vector_lanes", "unroll_steps", "elementwise_threads", "inline_elementwise", "fuse_epilogue"};
  for (const auto& [key, value] : table) {
    if (!kKeys.count(std::string(key.str()))) {
      return Status::InvalidArgument(path + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
  CudaSketchConfig c;
  auto get_int = [&](const char* key, int64_t lo, int64_t hi, int64_t* out) -> Status {
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    auto v = n->value_exact<int64_t>();
    if (!v || *v < lo || *v > hi) {
      return Status::InvalidArgument(path + ": '" + key + "' must be an integer in [" + std::to_string(lo) + ", " +
                                     std::to_string(hi) + "]");
    }
    *out = *v;
    return Status::OK();
  };
  auto get_bool = [&](const char* key, bool* out) -> Status {
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    auto v = n->value_exact<bool>();
    if (!v) return Status::InvalidArgument(path + ": '" + key + "' must be true or false");
    *out = *v;
    return Status::OK();
  };
  TF_RETURN_IF_ERROR(get_int("max_threads_per_block", 1, 1024, &c.max_threads_per_block));
  TF_RETURN_IF_ERROR(get_int("min_threads_per_block", 1, 1024, &c.min_threads_per_block));
  TF_RETURN_IF_ERROR(get_int("max_vthreads", 1, 64, &c.max_vthreads));
  TF_RETURN_IF_ERROR(get_int("max_shared_bytes", 1, 227 * 1024, &c.max_shared_bytes));
  TF_RETURN_IF_ERROR(get_int("max_thread_tile", 1, 1024, &c.max_thread_tile));
  TF_RETURN_IF_ERROR(get_int("max_thread_work", 1, 1024, &c.max_thread_work));
  TF_RETURN_IF_ERROR(get_int("max_reduce_tile", 1, 4096, &c.max_reduce_tile));
  TF_RETURN_IF_ERROR(get_int("max_innermost_tile", 1, 1024, &c.max_innermost_tile));
  TF_RETURN_IF_ERROR(get_bool("shared_inputs", &c.shared_inputs));
  TF_RETURN_IF_ERROR(get_bool("inline_elementwise", &c.inline_elementwise));
  TF_RETURN_IF_ERROR(get_bool("fuse_epilogue", &c.fuse_epilogue));
  TF_RETURN_IF_ERROR(GetIntList(table, path, "fetch_vector_lanes", 1, 4, &c.fetch_vector_lanes));
  TF_RETURN_IF_ERROR(GetIntList(table, path, "unroll_steps", 0, 4096, &c.unroll_steps));
  TF_RETURN_IF_ERROR(GetIntList(table, path, "elementwise_threads", 1, 1024, &c.elementwise_threads));
  if (c.min_threads_per_block > c.max_threads_per_block) {
    return Status::InvalidArgument(path + ": 'min_threads_per_block' is larger than 'max_threads_per_block'");
  }
  return c;
}

SketchRuleSet CudaSketchRules() {
  SketchRuleSet rules;
  rules.config_file = "cuda.toml";
  rules.make = [](const std::string& config_path,
                  const std::set<std::string>*) -> Result<std::unique_ptr<SketchPolicy>> {
    CudaSketchConfig config;
    if (!config_path.empty()) {
      TF_ASSIGN_OR_RETURN(config, LoadCudaSketchConfig(config_path));
    }
    return MakeCudaSketchPolicy(std::move(config));
  };
  return rules;
}

}  // namespace tunefarm::tuner
