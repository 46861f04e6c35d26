// Reading knobs files (sketch_knobs.h).
#include "sketch_knobs.h"

namespace tunefarm::tuner {

Result<KnobsFile> KnobsFile::Read(const std::string& path, const std::set<std::string>& keys) {
  KnobsFile file;
  file.path_ = path;
  try {
    file.table_ = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return Status::InvalidArgument(path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) + ": " +
                                   std::string(e.description()));
  }
  for (const auto& [key, value] : file.table_) {
    if (!keys.count(std::string(key.str()))) {
      return Status::InvalidArgument(path + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
  return file;
}

Status KnobsFile::GetInt(const char* key, int64_t lo, int64_t hi, int64_t* out) const {
  const toml::node* n = table_.get(key);
  if (!n) return Status::OK();
  auto v = n->value_exact<int64_t>();
  if (!v || *v < lo || *v > hi) {
    return Status::InvalidArgument(path_ + ": '" + key + "' must be an integer in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]");
  }
  *out = *v;
  return Status::OK();
}

Status KnobsFile::GetBool(const char* key, bool* out) const {
  const toml::node* n = table_.get(key);
  if (!n) return Status::OK();
  auto v = n->value_exact<bool>();
  if (!v) return Status::InvalidArgument(path_ + ": '" + key + "' must be true or false");
  *out = *v;
  return Status::OK();
}

Status KnobsFile::GetIntList(const char* key, int64_t lo, int64_t hi, std::vector<int64_t>* out) const {
  const toml::node* n = table_.get(key);
  if (!n) return Status::OK();
  const toml::array* arr = n->as_array();
  const std::string want = path_ + ": '" + key + "' must be a non-empty array of integers in [" + std::to_string(lo) +
                           ", " + std::to_string(hi) + "]";
  if (!arr || arr->empty()) return Status::InvalidArgument(want);
  std::vector<int64_t> values;
  for (const toml::node& item : *arr) {
    auto v = item.value_exact<int64_t>();
    if (!v || *v < lo || *v > hi) return Status::InvalidArgument(want);
    values.push_back(*v);
  }
  *out = std::move(values);
  return Status::OK();
}

}  // namespace tunefarm::tuner
