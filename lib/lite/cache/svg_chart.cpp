// The SVG chart pieces of cache-sim's plots (svg_chart_internal.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/svg_chart_internal.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::svg {

namespace {

std::string esc(const std::string& s) { return xml_escape(s); }

std::string size_tick(double v, bool bytes) {
  return bytes ? format_bytes(v) : (v >= 1e6 ? fmt::format("{:g}M", v / 1e6) : v >= 1e3 ? fmt::format("{:g}K", v / 1e3)
                                                                                      : fmt::format("{:g}", v));
}

std::vector<double> x_ticks(const Axis& xa, bool bytes) {
  std::vector<double> ticks;
  if (xa.log && bytes) {
    // powers of two, at most ~8 ticks: 1 KiB, 4 KiB, 16 KiB ... or 1 KiB, 32 KiB, 1 MiB ...
    const double octaves = std::log2(xa.hi / xa.lo);
    const int step = std::max(1, static_cast<int>(std::ceil(octaves / 7)));
    for (int e = static_cast<int>(std::ceil(std::log2(xa.lo))); std::pow(2.0, e) <= xa.hi * 1.0001; ++e)
      if (e % step == 0) ticks.push_back(std::pow(2.0, e));
  } else if (xa.log) {
    for (double d = std::pow(10, std::floor(std::log10(xa.lo))); d <= xa.hi * 1.0001; d *= 10)
      if (d >= xa.lo * 0.9999) ticks.push_back(d);
  } else {
    for (int i = 0; i <= 5; ++i) ticks.push_back(xa.lo + (xa.hi - xa.lo) * i / 5.0);
  }
  if (ticks.size() < 2) ticks = {xa.lo, xa.hi};
  return ticks;
}

void lines(std::string& out, const Axis& xa, const Axis& ya, const std::vector<Series>& series) {
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    std::string pts;
    for (const auto& [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", xa.map(x), ya.map(std::min(y, ya.hi)));
    out += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' {} points='{}'/>\n", s.color,
                       s.dash.empty() ? "" : "stroke-dasharray='" + s.dash + "'", pts);
    if (s.markers)
      for (const auto& [x, y] : s.points)
        out += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>\n", xa.map(x), ya.map(std::min(y, ya.hi)),
                           s.color);
  }
}

}  // namespace

const char* color(size_t i) {
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                  "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
  return kColors[i % 10];
}

double Axis::map(double v) const {
  double t = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                 : (v - lo) / (hi - lo);
  if (!std::isfinite(t)) t = 0;
  return px0 + t * (px1 - px0);
}

Axis size_axis(double lo, double hi) {
  if (lo <= 0) lo = 1;
  if (hi <= lo) hi = lo * 10;
  const bool log = hi / lo >= 20;
  return Axis{log ? lo : 0.0, hi, log, 0, 0};
}

namespace {

// A panel at (x0, y0) of w x h: y from 0 to ymax, x on `x` (its pixels set here), ticks labelled in `x_unit`
// ("objects", "tokens", or "bytes": bytes get powers of two and KiB/MiB labels).
struct Panel {
  double x0 = 0, y0 = 0, w = 560, h = 300;
  std::string title, ylabel, x_unit;
  Axis x;
  double ymax = 1;
};

void panel(std::string& out, const Panel& p, const std::vector<Series>& series) {
  Axis xa = p.x;
  xa.px0 = p.x0;
  xa.px1 = p.x0 + p.w;
  const Axis ya{0, p.ymax > 0 ? p.ymax : 1, false, p.y0 + p.h, p.y0};
  const bool bytes = p.x_unit == "bytes";
  out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='14' font-weight='bold'>{}</text>\n", p.x0, p.y0 - 10,
                     esc(p.title));
  out += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='none' stroke='#999'/>\n", p.x0,
                     p.y0, p.w, p.h);
  for (int i = 0; i <= 5; ++i) {
    const double v = ya.hi * i / 5.0, y = ya.map(v);
    out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#eee'/>\n", p.x0, y, p.x0 + p.w, y);
    out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='end'>{}</text>\n", p.x0 - 6, y + 4,
                       v == 0 ? std::string("0") : ya.hi <= 1.0001 ? fmt::format("{:.2f}", v) : format_ms(v));
  }
  for (double v : x_ticks(xa, bytes)) {
    const double x = xa.map(v);
    out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#eee'/>\n", x, p.y0, x, p.y0 + p.h);
    out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='middle'>{}</text>\n", x, p.y0 + p.h + 16,
                       esc(size_tick(v, bytes)));
  }
  out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='12' text-anchor='middle'>cache size ({}{})</text>\n",
                     p.x0 + p.w / 2, p.y0 + p.h + 34, esc(p.x_unit), xa.log ? ", log scale" : "");
  const double lx = p.x0 - 48, ly = p.y0 + p.h / 2;
  out += fmt::format(
      "<text x='{:.1f}' y='{:.1f}' font-size='12' text-anchor='middle' transform='rotate(-90 {:.1f} {:.1f})'>{}</text>\n",
      lx, ly, lx, ly, esc(p.ylabel));
  lines(out, xa, ya, series);
}

// One line per series, each group in turn, from (x, y) down.
void legend(std::string& out, double x, double y, const std::vector<const std::vector<Series>*>& groups) {
  for (const auto* group : groups)
    for (const auto& s : *group) {
      out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='{}' stroke-width='2' {}/>\n",
                         x, y, x + 24, y, s.color, s.dash.empty() ? "" : "stroke-dasharray='" + s.dash + "'");
      out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='12'>{}</text>\n", x + 30, y + 4, esc(s.label));
      y += 18;
    }
}

double largest_y(const std::vector<Series>& series) {
  double max = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) max = std::max(max, p.second);
  return max;
}

std::string open(double width, double height, double left, const std::string& title, const std::string& subtitle) {
  std::string out = fmt::format(
      "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
      "viewBox='0 0 {:.0f} {:.0f}' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n",
      width, height, width, height);
  out += fmt::format("<text x='{:.1f}' y='28' font-size='16' font-weight='bold'>{}</text>\n", left, esc(title));
  out += fmt::format("<text x='{:.1f}' y='46' font-size='12' fill='#555'>{}</text>\n", left, esc(subtitle));
  return out;
}

}  // namespace

std::string render(const Chart& c) {
  const double pw = 560, ph = 300, left = 80, top = 70, legend_x = left + pw + 30;
  const bool has_ms = !c.ms.empty();
  const double height = std::max(top + (has_ms ? 2 * ph + 90 : ph) + 60,
                                 top + 18.0 * double(c.ratio.size() + c.ms.size()) + 40);
  std::string out = open(legend_x + c.legend_width, height, left, c.title, c.subtitle);
  const double max_ratio = largest_y(c.ratio), max_ms = largest_y(c.ms);
  panel(out, {left, top, pw, ph, c.ratio_title, c.ratio_label, c.x_unit, c.x,
              max_ratio > 0 ? std::min(1.0, std::ceil(max_ratio * 10) / 10) : 1.0},
        c.ratio);
  if (has_ms)
    panel(out, {left, top + ph + 90, pw, ph, c.ms_title, c.ms_label, c.x_unit, c.x, max_ms > 0 ? max_ms * 1.1 : 1.0},
          c.ms);
  legend(out, legend_x, top + 4, {&c.ratio, &c.ms});
  out += "</svg>\n";
  return out;
}

}  // namespace lite::cache::svg
