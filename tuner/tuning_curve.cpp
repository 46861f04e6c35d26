// A dependency-free SVG line chart: one polyline per task, dashed baselines.
#include "tunefarm/tuner/tuning_curve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace tunefarm::tuner {

namespace {
constexpr double kWidth = 760, kHeight = 440, kLeft = 70, kRight = 200, kTop = 40, kBottom = 50;
const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

// A "nice" axis maximum: 1, 2 or 5 times a power of ten.
double NiceMax(double v) {
  if (v <= 0) return 1;
  double p = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}
}  // namespace

std::string TuningCurveSvg(const std::vector<CurveSeries>& series, const std::string& title) {
  int max_trials = 1;
  double max_gflops = 0;
  for (const CurveSeries& s : series) {
    for (const auto& [t, g] : s.points) {
      max_trials = std::max(max_trials, t);
      max_gflops = std::max(max_gflops, g);
    }
    max_gflops = std::max(max_gflops, s.baseline_gflops);
  }
  double x_max = NiceMax(max_trials), y_max = NiceMax(max_gflops * 1.05);
  double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x = [&](double t) { return kLeft + t / x_max * plot_w; };
  auto y = [&](double g) { return kTop + plot_h - g / y_max * plot_h; };
  std::ostringstream os;
  char buf[256];
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\">" << Escape(title) << "</text>\n";
  for (int i = 0; i <= 5; ++i) {
    double gv = y_max * i / 5, tv = x_max * i / 5;
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                  kLeft, y(gv), kLeft + plot_w, y(gv), kLeft - 6, y(gv) + 4, gv);
    os << buf;
    std::snprintf(buf, sizeof(buf), "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x(tv),
                  kTop + plot_h + 18, tv);
    os << buf;
  }
  std::snprintf(buf, sizeof(buf),
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">trials</text>\n"
                "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">best GFLOP/s</text>\n",
                kLeft, kTop, plot_w, plot_h, kLeft + plot_w / 2, kHeight - 12, kTop + plot_h / 2);
  os << buf;
  bool any_slow = false;
  for (size_t i = 0; i < series.size(); ++i) {
    const CurveSeries& s = series[i];
    const char* color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    // Under the curve: a best found there was timed slow, and kernels of
    // those trials may be faster than they look.
    for (const auto& [first, end] : s.slow_trials) {
      any_slow = true;
      std::snprintf(buf, sizeof(buf),
                    "<rect class=\"slow\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                    "fill-opacity=\"0.12\"/>\n",
                    x(first), kTop, std::max(1.0, x(end) - x(first)), plot_h, color);
      os << buf;
    }
    if (!s.points.empty()) {
      os << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << color << "\" points=\"";
      double last = 0;
      for (const auto& [t, g] : s.points) {
        // A step curve: the best so far holds until the next improvement.
        std::snprintf(buf, sizeof(buf), "%.1f,%.1f %.1f,%.1f ", x(t), y(last), x(t), y(g));
        os << buf;
        last = g;
      }
      std::snprintf(buf, sizeof(buf), "%.1f,%.1f", x(s.points.back().first), y(last));
      os << buf << "\"/>\n";
    }
    if (s.baseline_gflops > 0) {
      std::snprintf(buf, sizeof(buf),
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-dasharray=\"4 4\"/>\n",
                    kLeft, y(s.baseline_gflops), kLeft + plot_w, y(s.baseline_gflops), color);
      os << buf;
    }
    double ly = kTop + 16 + 34 * double(i);
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">%s</text>"
                  "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">best %.1f, default %.1f</text>\n",
                  kLeft + plot_w + 12, ly, kLeft + plot_w + 34, ly, color, kLeft + plot_w + 40, ly + 4,
                  Escape(s.name).c_str(), kLeft + plot_w + 40, ly + 18,
                  s.points.empty() ? 0.0 : s.points.back().second, s.baseline_gflops);
    os << buf;
  }
  os << "<text x=\"" << kLeft << "\" y=\"" << kHeight - 12 << "\" fill=\"#666\" font-size=\"10\">dashed: default schedule"
     << (any_slow ? "; shaded: trials timed while the machine ran slow" : "") << "</text>\n";
  os << "</svg>\n";
  return os.str();
}

}  // namespace tunefarm::tuner
