// The tuning curve's SVG: one step line per task, the default dashed, and the
// trials timed while the machine ran slow shaded.
#include "tunefarm/tuner/tuning_curve.h"

#include <gtest/gtest.h>

#include <string>

namespace tunefarm::tuner {
namespace {

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TuningCurveTest, OneLinePerTaskWithItsBaselineAndLegend) {
  std::string svg = TuningCurveSvg({{"gmm_512", {{1, 10.0}, {40, 300.0}}, 2.0}, {"t2d", {{3, 50.0}}, 0}}, "a & b");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_EQ(Count(svg, "<polyline"), 2);
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 1) << "only gmm_512 has a default schedule";
  EXPECT_NE(svg.find("a &amp; b"), std::string::npos) << "the title is escaped";
  EXPECT_NE(svg.find("best 300.0, default 2.0"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"slow\""), 0);
  EXPECT_EQ(svg.find("shaded"), std::string::npos) << "no shading, no legend for it";
}

TEST(TuningCurveTest, SlowStretchesAreShadedAndExplained) {
  CurveSeries s{"c2d", {{1, 10.0}, {200, 400.0}}, 2.0, {{16, 48}, {96, 112}}};
  std::string svg = TuningCurveSvg({s}, "tunefarm tune");
  EXPECT_EQ(Count(svg, "class=\"slow\""), 2);
  EXPECT_NE(svg.find("shaded: trials timed while the machine ran slow"), std::string::npos);
  // The x axis runs to 200 trials over the plot's 490 pixels from x = 70:
  // trials 16-48 start at 70 + 16 / 200 * 490.
  EXPECT_NE(svg.find("x=\"109.2\""), std::string::npos) << svg;
}

}  // namespace
}  // namespace tunefarm::tuner
