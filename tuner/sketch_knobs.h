// A rule set's knobs file (TOML under configs/sketch/), read the same way for
// every rule set: a parse error names the file, line and column; a key the
// rule set does not know, or a value of the wrong type or out of range, names
// the file and the key. Internal to the rule sets' loaders
// (sketch_config.cpp, sketch_cuda_config.cpp).
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::tuner {

class KnobsFile {
 public:
  // Parses `path`; InvalidArgument for a syntax error or a key not in `keys`.
  static Result<KnobsFile> Read(const std::string& path, const std::set<std::string>& keys);

  // Each leaves *out as it is when the key is absent.
  Status GetInt(const char* key, int64_t lo, int64_t hi, int64_t* out) const;  // exact: 4.0 is not 4
  Status GetBool(const char* key, bool* out) const;                           // exact: 1 is not true
  Status GetIntList(const char* key, int64_t lo, int64_t hi, std::vector<int64_t>* out) const;  // non-empty

  const toml::table& table() const { return table_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  toml::table table_;
};

}  // namespace tunefarm::tuner
