// The tuning curve: best GFLOP/s found against trials, per task, as an SVG
// file a person can open in a browser.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tunefarm::tuner {

struct CurveSeries {
  std::string name;
  std::vector<std::pair<int, double>> points;  // (trials of this task, best GFLOP/s so far)
  double baseline_gflops = 0;                   // the default schedule, drawn dashed; 0: none
};

std::string TuningCurveSvg(const std::vector<CurveSeries>& series, const std::string& title);

}  // namespace tunefarm::tuner
