// The tuning curve: best GFLOP/s found against trials, per task, as an SVG
// file a person can open in a browser; the stretches timed while the machine
// ran slow are shaded.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tunefarm::tuner {

struct CurveSeries {
  std::string name;
  std::vector<std::pair<int, double>> points;  // (trials of this task, best GFLOP/s so far)
  double baseline_gflops = 0;                   // the default schedule, drawn dashed; 0: none
  // Trials [first, end) of this task timed while the machine ran slow
  // (MachineSpeed::SlowTrials), shaded in the series' colour.
  std::vector<std::pair<int, int>> slow_trials = {};
};

std::string TuningCurveSvg(const std::vector<CurveSeries>& series, const std::string& title);

}  // namespace tunefarm::tuner
