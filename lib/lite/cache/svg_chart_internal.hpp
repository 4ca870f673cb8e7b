#pragma once
// The SVG chart both cache-sim plots draw (svg_plot.cpp for object traces, prefix/prefix_plot.cpp for prefix
// traces): line series against cache size in a ratio panel and a latency panel, a legend, and the document around
// them. Plain SVG 1.1 with inline styles, so any browser renders it.
#include <string>
#include <utility>
#include <vector>

namespace lite::cache::svg {

// The i-th series colour (ten, then again).
const char* color(size_t i);

// Value -> pixel along one axis; logarithmic when `log`.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;
  double px0 = 0, px1 = 0;
  double map(double v) const;
};

struct Series {
  std::string label;
  std::string color;
  std::string dash;  // "" solid, else an SVG dash array ("5,4")
  std::vector<std::pair<double, double>> points;
  bool markers = true;
};

// The x axis over [lo, hi] (hi at least 10 lo), logarithmic when it spans 20x or more.
Axis size_axis(double lo, double hi);
// Both cache-sim plots: a ratio panel (miss or hit ratio, y up to the next tenth of its largest point) above an
// optional latency panel (y to 1.1x its largest point; none when `ms` is empty), the legend at their right.
struct Chart {
  std::string title, subtitle, x_unit;
  Axis x;
  double legend_width = 260;
  std::string ratio_title, ratio_label;
  std::vector<Series> ratio;
  std::string ms_title, ms_label;
  std::vector<Series> ms;
};
std::string render(const Chart& c);

}  // namespace lite::cache::svg
