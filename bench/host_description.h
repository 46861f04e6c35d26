// One line naming the machine a benchmark ran on, printed first by every
// side-by-side benchmark: ratios against a peer library move with the host
// (oneDNN's GMM ran 2.2x as fast on one 2-core host of ours as on another),
// so a table must say where it was taken. LLVM 16 names both Zen 4 and Zen 5
// `znver4`; /proc/cpuinfo's family and model tell them apart (Zen 4: family
// 25, Zen 5: family 26).
#pragma once

#include <fstream>
#include <istream>
#include <string>
#include <thread>

namespace tunefarm::bench {

// "AMD EPYC, family 26 model 2 stepping 1, 2 logical CPUs" from the first
// processor's block of a /proc/cpuinfo text; fields it lacks (an Arm board
// has no "model name" or "cpu family") are left out.
inline std::string HostDescriptionFrom(std::istream& in, unsigned logical_cpus) {
  std::string line, model_name, family, model, stepping;
  auto value_of = [](const std::string& l) {
    size_t colon = l.find(':');
    if (colon == std::string::npos) return std::string();
    size_t start = l.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : l.substr(start);
  };
  auto key_is = [](const std::string& l, const std::string& key) {
    return l.compare(0, key.size(), key) == 0 && l.find_first_not_of(" \t", key.size()) == l.find(':');
  };
  while (std::getline(in, line) && !line.empty()) {  // the first processor's block
    if (key_is(line, "model name")) model_name = value_of(line);
    else if (key_is(line, "cpu family")) family = value_of(line);
    else if (key_is(line, "model")) model = value_of(line);
    else if (key_is(line, "stepping")) stepping = value_of(line);
  }
  std::string out = model_name.empty() ? "unknown CPU" : model_name;
  if (!family.empty()) out += ", family " + family + " model " + model + " stepping " + stepping;
  out += ", " + std::to_string(logical_cpus) + " logical CPUs";
  return out;
}

// This machine's line (an empty /proc/cpuinfo where there is none).
inline std::string HostDescription() {
  std::ifstream in("/proc/cpuinfo");
  return HostDescriptionFrom(in, std::thread::hardware_concurrency());
}

}  // namespace tunefarm::bench
