// The SVG plot: miss-ratio curves per policy (and the exact one-pass LRU curve when --mrc is on),
// and, with a cost model, p99 (solid) and mean (dashed) request latency against cache size. Plain
// SVG 1.1 with inline styles, so any browser renders it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lite/cache/cache_sim.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

namespace {

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                         "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string esc(const std::string& s) { return xml_escape(s); }

struct Axis {
  double lo, hi;
  bool log;
  double px0, px1;
  double map(double v) const {
    double t = log ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                   : (v - lo) / (hi - lo);
    if (!std::isfinite(t)) t = 0;
    return px0 + t * (px1 - px0);
  }
};

std::string size_tick(double v, bool bytes) {
  return bytes ? format_bytes(v) : (v >= 1e6 ? fmt::format("{:g}M", v / 1e6) : v >= 1e3 ? fmt::format("{:g}K", v / 1e3)
                                                                                      : fmt::format("{:g}", v));
}

struct Series {
  std::string label;
  std::string color;
  std::string dash;
  std::vector<std::pair<double, double>> points;
  bool markers = true;
};

void panel(std::string& out, double x0, double y0, double w, double h, const std::string& title, const std::string& ylabel,
           const Axis& xa_in, double ymax, bool bytes, const std::vector<Series>& series) {
  Axis xa = xa_in;
  xa.px0 = x0;
  xa.px1 = x0 + w;
  Axis ya{0, ymax > 0 ? ymax : 1, false, y0 + h, y0};
  out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='14' font-weight='bold'>{}</text>\n", x0, y0 - 10, esc(title));
  out += fmt::format("<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{:.1f}' fill='none' stroke='#999'/>\n", x0, y0, w, h);
  // y ticks
  for (int i = 0; i <= 5; ++i) {
    double v = ya.hi * i / 5.0;
    double y = ya.map(v);
    out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#eee'/>\n", x0, y, x0 + w, y);
    out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='end'>{}</text>\n", x0 - 6, y + 4,
                       v == 0 ? std::string("0") : ya.hi <= 1.0001 ? fmt::format("{:.2f}", v) : format_ms(v));
  }
  // x ticks
  std::vector<double> ticks;
  if (xa.log && bytes) {
    // powers of two, at most ~8 ticks: 1 KiB, 4 KiB, 16 KiB ... or 1 KiB, 32 KiB, 1 MiB ...
    const double octaves = std::log2(xa.hi / xa.lo);
    const int step = std::max(1, static_cast<int>(std::ceil(octaves / 7)));
    for (int e = static_cast<int>(std::ceil(std::log2(xa.lo))); std::pow(2.0, e) <= xa.hi * 1.0001; ++e)
      if (e % step == 0) ticks.push_back(std::pow(2.0, e));
    if (ticks.size() < 2) ticks = {xa.lo, xa.hi};
  } else if (xa.log) {
    for (double d = std::pow(10, std::floor(std::log10(xa.lo))); d <= xa.hi * 1.0001; d *= 10)
      if (d >= xa.lo * 0.9999) ticks.push_back(d);
    if (ticks.size() < 2) ticks = {xa.lo, xa.hi};
  } else {
    for (int i = 0; i <= 5; ++i) ticks.push_back(xa.lo + (xa.hi - xa.lo) * i / 5.0);
  }
  for (double v : ticks) {
    double x = xa.map(v);
    out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#eee'/>\n", x, y0, x, y0 + h);
    out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11' text-anchor='middle'>{}</text>\n", x, y0 + h + 16,
                       esc(size_tick(v, bytes)));
  }
  out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='12' text-anchor='middle'>cache size ({}{})</text>\n",
                     x0 + w / 2, y0 + h + 34, bytes ? "bytes" : "objects", xa.log ? ", log scale" : "");
  out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='12' text-anchor='middle' transform='rotate(-90 {:.1f} {:.1f})'>{}</text>\n",
                     x0 - 48, y0 + h / 2, x0 - 48, y0 + h / 2, esc(ylabel));
  for (const auto& s : series) {
    if (s.points.empty()) continue;
    std::string pts;
    for (const auto& [x, y] : s.points) pts += fmt::format("{:.1f},{:.1f} ", xa.map(x), ya.map(std::min(y, ya.hi)));
    out += fmt::format("<polyline fill='none' stroke='{}' stroke-width='2' {} points='{}'/>\n", s.color,
                       s.dash.empty() ? "" : "stroke-dasharray='" + s.dash + "'", pts);
    if (s.markers)
      for (const auto& [x, y] : s.points)
        out += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'/>\n", xa.map(x), ya.map(std::min(y, ya.hi)), s.color);
  }
}

// The smallest simulated size (at least 1): the one-pass curve is not drawn left of it, where it would squash the
// policies' curves.
double smallest_size(const CacheSimResult& r) {
  double lo = 0;
  for (const auto& rec : r.records) lo = lo == 0 ? double(rec.size) : std::min(lo, double(rec.size));
  return lo <= 0 ? 1 : lo;
}

// The x axis: the simulated sizes, extended to the right by the one-pass curve (up to the working set).
// Logarithmic when the sizes span 20x or more.
Axis size_axis(const CacheSimResult& r) {
  const double lo = smallest_size(r);
  double hi = 0;
  for (const auto& rec : r.records) hi = std::max(hi, double(rec.size));
  if (r.mrc)
    for (const auto& p : r.mrc->points) hi = std::max(hi, double(p.size));
  if (hi <= lo) hi = lo * 10;
  const bool log = hi / lo >= 20;
  return Axis{log ? lo : 0.0, hi, log, 0, 0};
}

// One miss-ratio series per policy, and the LRU curve (dashed) when one was computed.
std::vector<Series> miss_ratio_series(const CacheSimResult& r, const std::vector<std::string>& policies, double lo) {
  std::vector<Series> mr;
  for (size_t i = 0; i < policies.size(); ++i) {
    Series s{policies[i], kColors[i % 10], "", {}, true};
    for (const auto& rec : r.records)
      if (rec.policy == policies[i]) s.points.emplace_back(double(rec.size), rec.counters.miss_ratio());
    mr.push_back(std::move(s));
  }
  if (r.mrc) {
    Series s{r.mrc->partitions ? fmt::format("LRU, from {} key partitions", r.mrc->partitions->n)
                               : std::string("LRU, one-pass exact curve"),
             "#000000", "5,4", {}, false};
    for (const auto& p : r.mrc->points)
      if (double(p.size) >= lo) s.points.emplace_back(double(p.size), p.miss_ratio);
    mr.push_back(std::move(s));
  }
  return mr;
}

// p99 (and, with one model variant, mean) request latency per policy and model variant; `max_ms` the largest value.
std::vector<Series> latency_series(const CacheSimResult& r, const std::vector<std::string>& policies, double& max_ms) {
  std::vector<Series> lat;
  std::vector<std::string> variants = {""};
  if (!r.records.front().variants.empty()) {
    variants.clear();
    for (const auto& [label, f] : r.records.front().variants) variants.push_back(label);
  }
  const char* dashes[] = {"", "8,3", "2,3", "10,3,2,3"};
  for (size_t v = 0; v < variants.size(); ++v)
    for (size_t i = 0; i < policies.size(); ++i) {
      std::string label = variants[v].empty() ? policies[i] : variants[v] + " + " + policies[i];
      Series p99{label + " p99", kColors[i % 10], dashes[v % 4], {}, true};
      Series mean{label + " mean", kColors[i % 10], "3,3", {}, false};
      for (const auto& rec : r.records) {
        if (rec.policy != policies[i]) continue;
        LatencyFigures f = rec.latency ? *rec.latency : LatencyFigures{};
        for (const auto& [l, fig] : rec.variants)
          if (l == variants[v]) f = fig;
        p99.points.emplace_back(double(rec.size), f.p99_ms);
        if (variants.size() == 1) mean.points.emplace_back(double(rec.size), f.mean_ms);
        max_ms = std::max({max_ms, f.p99_ms, f.mean_ms});
      }
      lat.push_back(std::move(p99));
      if (!mean.points.empty()) lat.push_back(std::move(mean));
    }
  return lat;
}

// The legend: one line per series, miss ratio first.
void legend(std::string& out, double x, double y, const std::vector<Series>& mr, const std::vector<Series>& lat) {
  for (const auto* group : {&mr, &lat})
    for (const auto& s : *group) {
      out += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='{}' stroke-width='2' {}/>\n",
                         x, y, x + 24, y, s.color, s.dash.empty() ? "" : "stroke-dasharray='" + s.dash + "'");
      out += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='12'>{}</text>\n", x + 30, y + 4, esc(s.label));
      y += 18;
    }
}

}  // namespace

std::string render_svg(const CacheSimResult& r) {
  const bool bytes = r.bytes;
  std::vector<std::string> policies;
  for (const auto& rec : r.records)
    if (std::find(policies.begin(), policies.end(), rec.policy) == policies.end()) policies.push_back(rec.policy);
  const Axis xa = size_axis(r);
  const std::vector<Series> mr = miss_ratio_series(r, policies, smallest_size(r));
  double lat_max = 0;
  const bool has_latency = !r.records.empty() && (r.records.front().latency || !r.records.front().variants.empty());
  const std::vector<Series> lat = has_latency ? latency_series(r, policies, lat_max) : std::vector<Series>{};

  const double pw = 560, ph = 300, left = 80, top = 70, legend_x = left + pw + 30;
  const size_t legend_lines = mr.size() + lat.size();
  const double height = std::max(top + (has_latency ? 2 * ph + 90 : ph) + 60, top + 18.0 * double(legend_lines) + 40);
  const double width = legend_x + 260;
  std::string out = fmt::format(
      "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' width='{:.0f}' height='{:.0f}' "
      "viewBox='0 0 {:.0f} {:.0f}' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n",
      width, height, width, height);
  out += fmt::format("<text x='{:.1f}' y='28' font-size='16' font-weight='bold'>lite cache-sim: {}</text>\n", left,
                     esc(r.trace.path));
  out += fmt::format("<text x='{:.1f}' y='46' font-size='12' fill='#555'>{} requests, {} mode{}</text>\n", left,
                     format_count(r.trace.n_req_total), bytes ? "byte" : "object",
                     r.trace.sampling.empty() ? "" : fmt::format(", SHARDS rate {:.4g}", r.trace.sample_rate));
  double max_mr = 0;
  for (const auto& s : mr)
    for (const auto& p : s.points) max_mr = std::max(max_mr, p.second);
  panel(out, left, top, pw, ph, "Miss ratio", "miss ratio", xa, max_mr > 0 ? std::min(1.0, std::ceil(max_mr * 10) / 10) : 1.0,
        bytes, mr);
  if (has_latency)
    panel(out, left, top + ph + 90, pw, ph, "Request latency (p99 solid, mean dotted)", "latency (ms)", xa,
          lat_max > 0 ? lat_max * 1.1 : 1.0, bytes, lat);
  legend(out, legend_x, top + 4, mr, lat);
  out += "</svg>\n";
  return out;
}

}  // namespace lite::cache
