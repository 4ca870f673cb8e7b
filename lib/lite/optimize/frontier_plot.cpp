// The SVG of lite optimize's search (outputs.hpp): one point per fully measured variant at (served latency
// figure, accuracy drop), its area growing with the cache it needs, the frontier joined in order, the choice
// ringed, the target and the accuracy budget as dashed lines. Plain SVG 1.1, no script, no external fonts.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/core/text.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/outputs.hpp"

namespace lite::optimize {

namespace {

constexpr double kWidth = 720, kHeight = 440, kLeft = 70, kRight = 190, kTop = 40, kBottom = 60;

std::string axis_label(const Target& t) {
  if (t.key == "target_throughput") return "throughput (samples/s)";
  if (t.key == "target_speedup") return "speedup over the frozen original (x)";
  return fmt::format("{} request latency (ms), batch {}", t.key == "target_p50_ms" ? "p50" : "p99", t.batch);
}

}  // namespace

std::string frontier_svg(const OptimizeResult& r) {
  std::vector<const Variant*> points;
  for (const Variant& v : r.variants)
    if (v.status == "measured" && v.quality && v.latency) points.push_back(&v);
  double x_max = r.target.value, y_min = 0, y_max = r.accuracy_budget;
  uint64_t cache_max = 1;
  for (const Variant* v : points) {
    x_max = std::max(x_max, served_figure(*v, r.target));
    y_min = std::min(y_min, v->quality->drop);
    y_max = std::max(y_max, v->quality->drop);
    cache_max = std::max(cache_max, cache_size_needed(*v));
  }
  x_max *= 1.1;
  y_max = y_max + 0.1 * (y_max - y_min) + 0.1;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  auto x_of = [&](double x) { return kLeft + plot_w * x / x_max; };
  auto y_of = [&](double y) { return kTop + plot_h * (y - y_min) / (y_max - y_min); };  // drop grows downward
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\">lite optimize: {}</text>\n", kLeft,
                     xml_escape(r.target.describe()));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft,
                     kTop, plot_w, plot_h);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2,
                     kHeight - 20, xml_escape(axis_label(r.target)));
  svg += fmt::format("<text transform=\"translate(18 {}) rotate(-90)\" text-anchor=\"middle\">points of {} lost"
                     "</text>\n", kTop + plot_h / 2, xml_escape(r.metric));
  for (int i = 0; i <= 4; ++i) {
    const double x = x_max * i / 4, y = y_min + (y_max - y_min) * i / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>\n", x_of(x), kTop + plot_h + 16, x);
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.2g}</text>\n", kLeft - 6, y_of(y) + 4, y);
  }
  svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#c00\" stroke-dasharray=\"5 4\"/>\n",
                     x_of(r.target.value), kTop, kTop + plot_h);
  svg += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#c00\" stroke-dasharray=\"5 4\"/>\n",
                     y_of(r.accuracy_budget), kLeft, kLeft + plot_w);
  std::vector<const Variant*> frontier;
  for (const Variant* v : points)
    if (v->on_frontier) frontier.push_back(v);
  std::sort(frontier.begin(), frontier.end(), [&](const Variant* a, const Variant* b) {
    return served_figure(*a, r.target) < served_figure(*b, r.target);
  });
  std::string path;
  for (const Variant* v : frontier)
    path += fmt::format("{:.1f},{:.1f} ", x_of(served_figure(*v, r.target)), y_of(v->quality->drop));
  if (frontier.size() > 1) svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" points=\"" + path + "\"/>\n";
  for (const Variant* v : points) {
    const double radius = 4 + 10 * std::sqrt(double(cache_size_needed(*v)) / double(cache_max));
    const double x = x_of(served_figure(*v, r.target)), y = y_of(v->quality->drop);
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"{}\" fill-opacity=\"0.7\"><title>{}"
                       "</title></circle>\n", x, y, radius, v->on_frontier ? "#1f77b4" : "#aaa", xml_escape(v->spec.label()));
    if (v->chosen)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:.1f}\" fill=\"none\" stroke=\"#c00\" "
                         "stroke-width=\"2\"/>\n", x, y, radius + 4);
    if (v->on_frontier || v->chosen)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x + radius + 3, y + 4,
                         xml_escape(v->spec.label() + (v->chosen ? " (chosen)" : "")));
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\">blue: frontier; red ring: choice;</text>\n", kWidth - kRight + 10, kTop + 10);
  svg += fmt::format("<text x=\"{}\" y=\"{}\">area: cache {}</text>\n", kWidth - kRight + 10, kTop + 26, xml_escape(r.cache_unit));
  svg += fmt::format("<text x=\"{}\" y=\"{}\">dashed: target, budget</text>\n", kWidth - kRight + 10, kTop + 42);
  return svg + "</svg>\n";
}

}  // namespace lite::optimize
