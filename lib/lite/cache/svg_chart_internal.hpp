#pragma once
// The SVG chart pieces both cache-sim plots draw with (svg_plot.cpp for object traces, prefix/prefix_plot.cpp for
// prefix traces): a panel of line series against cache size, a legend, and the document around them. Plain SVG 1.1
// with inline styles, so any browser renders it.
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

// A panel at (x0, y0) of w x h: y from 0 to ymax, x on `x` (its pixels set here), ticks labelled in `x_unit`
// ("objects", "tokens", or "bytes": bytes get powers of two and KiB/MiB labels).
struct Panel {
  double x0 = 0, y0 = 0, w = 560, h = 300;
  std::string title, ylabel, x_unit;
  Axis x;
  double ymax = 1;
};

// The x axis over [lo, hi] (hi at least 10 lo), logarithmic when it spans 20x or more.
Axis size_axis(double lo, double hi);
void panel(std::string& out, const Panel& p, const std::vector<Series>& series);
// One line per series, each group in turn, from (x, y) down.
void legend(std::string& out, double x, double y, const std::vector<const std::vector<Series>*>& groups);
// The document's opening (white background, title, subtitle) and its close.
std::string open(double width, double height, double left, const std::string& title, const std::string& subtitle);
std::string close();

}  // namespace lite::cache::svg
