// `tunefarm report --html`: one page a person opens in a browser, with
// nothing to fetch and no script: the model's latency before and after
// tuning, a bar chart of where its time goes, and the task table. The chart
// is drawn as inline SVG in the manner of tuner/tuning_curve.cpp.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/core.h>

#include "model_report.h"

namespace tunefarm::cli {
namespace {

constexpr double kLabelWidth = 340, kPlotWidth = 400, kTextWidth = 170, kRowHeight = 40, kTop = 54, kBottom = 16;
constexpr char kDefaultColor[] = "#b8b8b8";
constexpr char kTunedColor[] = "#1f77b4";
constexpr size_t kMaxLabel = 46;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Percent(double part, double whole) { return whole > 0 ? fmt::format("{:.1f}%", 100 * part / whole) : "-"; }

// Biggest first: by the tuned model's time, then by the default's, so that
// the rows a person should look at are on top and untimed tasks last.
std::vector<const TaskReport*> ChartOrder(const ModelReport& r) {
  std::vector<const TaskReport*> rows;
  for (const TaskReport& t : r.tasks) rows.push_back(&t);
  std::stable_sort(rows.begin(), rows.end(), [](const TaskReport* a, const TaskReport* b) {
    if (a->BestTotal() != b->BestTotal()) return a->BestTotal() > b->BestTotal();
    return a->DefaultTotal() > b->DefaultTotal();
  });
  return rows;
}

// One bar of a row: its length is the share over the chart's largest share.
void Bar(std::ostringstream& os, double y, double share, double max_share, const char* color, const std::string& text) {
  const double w = max_share > 0 ? std::max(share > 0 ? 1.0 : 0.0, share / max_share * kPlotWidth) : 0;
  os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\"/>", kLabelWidth, y, w,
                    color)
     << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#444\">{}</text>\n", kLabelWidth + w + 6, y + 11,
                    Escape(text));
}

// "every task", "1 task", "3 tasks": the tasks a legend's sum covers.
std::string Tasks(int count, int of) {
  if (count == of) return "every task";
  return fmt::format("{} task{}", count, count == 1 ? "" : "s");
}

std::string ShareChartSvg(const ModelReport& r) {
  const LatencyTotals& s = r.totals;
  const std::vector<const TaskReport*> rows = ChartOrder(r);
  double max_share = 0;
  for (const TaskReport* t : rows) {
    if (s.default_seconds > 0) max_share = std::max(max_share, t->DefaultTotal() / s.default_seconds);
    if (s.tuned_seconds > 0) max_share = std::max(max_share, t->BestTotal() / s.tuned_seconds);
  }
  const double width = kLabelWidth + kPlotWidth + kTextWidth;
  const double height = kTop + kRowHeight * double(rows.size()) + kBottom;
  std::ostringstream os;
  os << fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                    "font-family=\"sans-serif\" font-size=\"12\">\n",
                    width, height);
  os << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << fmt::format("<rect x=\"{:.1f}\" y=\"10\" width=\"14\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"20\">"
                    "share of the untuned model's time ({} with a default time)</text>\n",
                    kLabelWidth, kDefaultColor, kLabelWidth + 20,
                    Tasks(s.default_tasks, int(r.tasks.size())));
  os << fmt::format("<rect x=\"{:.1f}\" y=\"28\" width=\"14\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"38\">"
                    "share of the tuned model's time ({} tuned)</text>\n",
                    kLabelWidth, kTunedColor, kLabelWidth + 20,
                    Tasks(s.tuned_tasks, int(r.tasks.size())));
  for (size_t i = 0; i < rows.size(); ++i) {
    const TaskReport& t = *rows[i];
    const double y = kTop + kRowHeight * double(i);
    std::string label = t.name.size() > kMaxLabel ? t.name.substr(0, kMaxLabel - 3) + "..." : t.name;
    os << fmt::format("<g><title>{} ({}, {} call{}): {}</title>", Escape(t.name), Escape(t.op_class), t.calls,
                      t.calls == 1 ? "" : "s", Escape(t.summary));
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLabelWidth - 8, y + 21,
                      Escape(label));
    if (t.has_default()) {
      Bar(os, y + 2, t.DefaultTotal() / s.default_seconds, max_share, kDefaultColor,
          Percent(t.DefaultTotal(), s.default_seconds) + "  " + FormatDuration(t.DefaultTotal()));
    } else {
      os << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"#999\">{}</text>\n", kLabelWidth + 6, y + 13,
                        t.tuned() ? "default n/a" : "not tuned");
    }
    if (t.tuned()) {
      Bar(os, y + 18, t.BestTotal() / s.tuned_seconds, max_share, kTunedColor,
          Percent(t.BestTotal(), s.tuned_seconds) + "  " + FormatDuration(t.BestTotal()));
    }
    os << "</g>\n";
  }
  os << fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>\n", kLabelWidth,
                    kTop - 4, kLabelWidth, height - kBottom);
  os << "</svg>\n";
  return os.str();
}

std::string LatencyTable(const ModelReport& r) {
  const LatencyTotals& s = r.totals;
  const int n = int(r.tasks.size());
  std::ostringstream os;
  os << "<table class=\"totals\">\n";
  os << fmt::format("<tr><th class=\"l\">untuned defaults</th><td>{}</td><td class=\"l\">{}</td></tr>\n",
                    s.default_tasks > 0 ? FormatDuration(s.default_seconds) : "n/a",
                    s.default_tasks > 0 ? "over " + Coverage(s.default_tasks, n, s.default_calls, r.total_calls)
                                        : std::string("the log holds no default time"));
  os << fmt::format("<tr><th class=\"l\">tuned (best)</th><td>{}</td><td class=\"l\">{}</td></tr>\n",
                    s.tuned_tasks > 0 ? FormatDuration(s.tuned_seconds) : "n/a",
                    s.tuned_tasks > 0 ? "over " + Coverage(s.tuned_tasks, n, s.tuned_calls, r.total_calls)
                                      : std::string("no task is tuned"));
  os << fmt::format("<tr><th class=\"l\">speed-up</th><td><b>{}</b></td><td class=\"l\">{}</td></tr>\n",
                    s.both_tasks > 0 ? fmt::format("{:.2f}x", s.Speedup()) : "n/a",
                    s.both_tasks == n  ? std::string("over the whole model")
                    : s.both_tasks > 0 ? fmt::format("over the {} task{} with both times", s.both_tasks,
                                                     s.both_tasks == 1 ? "" : "s")
                                       : std::string("no task has both times"));
  os << "</table>\n";
  return os.str();
}

std::string TaskTable(const ModelReport& r) {
  std::ostringstream os;
  os << "<table>\n<tr><th>#</th><th class=\"l\">task</th><th class=\"l\">op</th><th>calls</th><th>best/call</th>"
        "<th>default/call</th><th>speed-up</th><th>share</th><th class=\"l\">record</th></tr>\n";
  for (size_t i = 0; i < r.tasks.size(); ++i) {
    const TaskReport& t = r.tasks[i];
    std::string record = t.tuned() ? fmt::format("#{}{}", t.record_id, t.best_is_default ? " (the default)" : "") : "";
    if (!t.note.empty()) record += (record.empty() ? "" : ", ") + t.note;
    os << fmt::format(
        "<tr{}><td>{}</td><td class=\"l\" title=\"{}\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
        t.tuned() ? "" : " class=\"untuned\"", i + 1, Escape(t.summary), Escape(t.name), Escape(t.op_class), t.calls,
        t.tuned() ? FormatDuration(t.best_seconds) : "not tuned",
        t.has_default() ? FormatDuration(t.default_seconds) : (t.tuned() ? "default n/a" : "-"),
        t.tuned() && t.has_default() ? fmt::format("{:.2f}x", t.default_seconds / t.best_seconds) : "-",
        t.tuned() ? Percent(t.BestTotal(), r.totals.tuned_seconds) : "-", Escape(record));
  }
  os << "</table>\n";
  return os.str();
}

}  // namespace

std::string Coverage(int tasks, int of_tasks, int calls, int of_calls) {
  if (tasks == of_tasks) return fmt::format("all {} task{}", of_tasks, of_tasks == 1 ? "" : "s");
  return fmt::format("{} of {} tasks ({} of {} calls)", tasks, of_tasks, calls, of_calls);
}

std::string FormatDuration(double seconds) {
  if (seconds < 1e-6) return fmt::format("{:.0f} ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string ModelReportHtml(const ModelReport& r) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>tunefarm report: " << Escape(r.model_name) << "</title>\n"
     << "<style>\n"
        "body { font-family: sans-serif; margin: 2em; color: #222; max-width: 1100px; }\n"
        "table { border-collapse: collapse; margin: 0.5em 0 1.5em; }\n"
        "th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; }\n"
        ".l { text-align: left; }\n"
        "tr.untuned td { color: #999; }\n"
        "table.totals { font-size: 1.15em; }\n"
        ".meta, .foot { color: #666; }\n"
        "</style>\n</head>\n<body>\n";
  os << "<h1>" << Escape(r.model_name) << ": what tuning bought</h1>\n";
  os << fmt::format("<p class=\"meta\">model {} ({} tasks, {} calls)<br>log {}<br>target {}</p>\n",
                    Escape(r.model_path), r.tasks.size(), r.total_calls, Escape(r.log_path), Escape(r.target));
  os << "<h2>Estimated latency</h2>\n" << LatencyTable(r);
  os << "<h2>Where the time goes</h2>\n" << ShareChartSvg(r);
  os << "<h2>Tasks</h2>\n" << TaskTable(r);
  os << "<p class=\"foot\">Times are per call: a task's best is the record <code>tunefarm compile</code> builds "
        "for it, its default the untuned program's measurement <code>tunefarm tune</code> keeps in the log. "
        "The estimated latency sums calls &times; time per call over the tasks it covers; a share is of that "
        "sum. Written by <code>tunefarm report</code>; nothing was measured for it.</p>\n";
  os << "</body>\n</html>\n";
  return os.str();
}

}  // namespace tunefarm::cli
