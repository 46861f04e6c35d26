// The layer suite's manifest, configs/layers/layers.tsv: one entry per
// workload file with the models and layers it stands for and its op class
// (configs/layers/README.md). Read by the layer benchmark and by the tests
// of the suite; header-only, so that the compiler's and the tuner's tests
// read it without the benchmarks' libraries.
#pragma once

#include <algorithm>
#include <fstream>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::bench {

// The models of the suite, as the manifest's `models` column names them.
inline const std::vector<std::string>& LayerSuiteModels() {
  static const std::vector<std::string> kModels = {"resnet50", "mobilenet_v2", "bert"};
  return kModels;
}

// The op classes and dense activations the manifest may name.
inline const std::vector<std::string>& LayerOpClasses() {
  static const std::vector<std::string> kOps = {"conv2d", "depthwise_conv2d", "dense", "batch_matmul_nt",
                                                "batch_matmul_nn"};
  return kOps;
}
inline const std::vector<std::string>& LayerActivations() {
  static const std::vector<std::string> kActs = {"none", "relu", "gelu_erf"};
  return kActs;
}

struct LayerEntry {
  std::string name;                 // file stem and workload name
  std::vector<std::string> models;  // model keys, at least one
  std::string op;                   // one of LayerOpClasses()
  std::string act;                  // one of LayerActivations(); "none" unless op is dense
  int uses = 0;                     // layers of the models it stands for: layers.size()
  std::vector<std::string> layers;  // "model:module" of each use

  bool InModel(const std::string& model) const {
    return std::find(models.begin(), models.end(), model) != models.end();
  }
};

// How GoogleTest names an entry in a parameterized test's messages.
inline void PrintTo(const LayerEntry& e, std::ostream* os) { *os << e.name; }

namespace layer_manifest_internal {

inline std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

inline bool OneOf(const std::string& s, const std::vector<std::string>& values) {
  return std::find(values.begin(), values.end(), s) != values.end();
}

}  // namespace layer_manifest_internal

// Parses the manifest's text; `source` names it in errors ("<source>:<line>: ...").
// Checks the header, the op class and activation names, that every use names
// one of the row's models and that `uses` counts them, and that names are unique.
inline Result<std::vector<LayerEntry>> ParseLayerManifest(std::string_view text, const std::string& source) {
  using layer_manifest_internal::OneOf;
  using layer_manifest_internal::Split;
  const std::string kHeader = "name\tmodels\top\tact\tuses\tlayers";
  std::vector<LayerEntry> entries;
  std::set<std::string> names;
  bool header_seen = false;
  int line_number = 0;
  std::stringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    auto fail = [&](const std::string& what) {
      return Status::InvalidArgument(source + ":" + std::to_string(line_number) + ": " + what);
    };
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      if (line != kHeader) return fail("expected the header line '" + kHeader + "' (tab-separated)");
      header_seen = true;
      continue;
    }
    std::vector<std::string> cols = Split(line, '\t');
    if (cols.size() != 6) return fail("expected 6 tab-separated columns, got " + std::to_string(cols.size()));
    LayerEntry e;
    e.name = cols[0];
    e.models = Split(cols[1], ',');
    e.op = cols[2];
    e.act = cols[3];
    e.layers = Split(cols[5], ',');
    if (e.name.empty() || !names.insert(e.name).second) return fail("empty or repeated name '" + e.name + "'");
    if (e.models.empty()) return fail(e.name + ": no model");
    for (const auto& m : e.models) {
      if (!OneOf(m, LayerSuiteModels())) return fail(e.name + ": unknown model '" + m + "'");
    }
    if (!OneOf(e.op, LayerOpClasses())) return fail(e.name + ": unknown op class '" + e.op + "'");
    if (!OneOf(e.act, LayerActivations())) return fail(e.name + ": unknown activation '" + e.act + "'");
    if (e.op != "dense" && e.act != "none") return fail(e.name + ": only dense layers have an activation");
    try {
      size_t used = 0;
      e.uses = std::stoi(cols[4], &used);
      if (used != cols[4].size()) throw std::invalid_argument(cols[4]);
    } catch (const std::exception&) {
      return fail(e.name + ": uses '" + cols[4] + "' is not a number");
    }
    if (e.uses < 1 || e.uses != int(e.layers.size())) {
      return fail(e.name + ": uses is " + cols[4] + " but " + std::to_string(e.layers.size()) + " layers are listed");
    }
    for (const auto& l : e.layers) {
      size_t colon = l.find(':');
      if (colon == std::string::npos || colon + 1 == l.size() || !e.InModel(l.substr(0, colon))) {
        return fail(e.name + ": layer '" + l + "' is not model:module of one of its models");
      }
    }
    entries.push_back(std::move(e));
  }
  if (!header_seen) return Status::InvalidArgument(source + ": no header line");
  return entries;
}

inline Result<std::vector<LayerEntry>> ReadLayerManifest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read the layer manifest " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseLayerManifest(text.str(), path);
}

// The entries of `model` (all when empty) named in `only` (all when empty);
// an error naming an unknown model or a name of `only` no entry has.
inline Result<std::vector<LayerEntry>> SelectLayers(const std::vector<LayerEntry>& entries, const std::string& model,
                                                    const std::vector<std::string>& only) {
  using layer_manifest_internal::OneOf;
  if (!model.empty() && !OneOf(model, LayerSuiteModels())) {
    return Status::InvalidArgument("unknown model '" + model + "' (resnet50, mobilenet_v2, bert)");
  }
  for (const auto& name : only) {
    bool found = std::any_of(entries.begin(), entries.end(), [&](const LayerEntry& e) { return e.name == name; });
    if (!found) return Status::InvalidArgument("no layer named '" + name + "' in the manifest");
  }
  std::vector<LayerEntry> out;
  for (const LayerEntry& e : entries) {
    if (!model.empty() && !e.InModel(model)) continue;
    if (!only.empty() && !OneOf(e.name, only)) continue;
    out.push_back(e);
  }
  return out;
}

}  // namespace tunefarm::bench
