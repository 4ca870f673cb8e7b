// The object mode's SVG plot: miss-ratio curves per policy (and the exact one-pass LRU curve when --mrc is on),
// and, with a cost model, p99 (solid) and mean (dashed) request latency against cache size (svg_chart.cpp draws).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "lite/cache/cache_sim.hpp"
#include "lite/cache/svg_chart_internal.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

namespace {

using svg::Axis;
using svg::Series;

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
  double hi = 0;
  for (const auto& rec : r.records) hi = std::max(hi, double(rec.size));
  if (r.mrc)
    for (const auto& p : r.mrc->points) hi = std::max(hi, double(p.size));
  return svg::size_axis(smallest_size(r), hi);
}

// One miss-ratio series per policy, and the LRU curve (dashed) when one was computed.
std::vector<Series> miss_ratio_series(const CacheSimResult& r, const std::vector<std::string>& policies, double lo) {
  std::vector<Series> mr;
  for (size_t i = 0; i < policies.size(); ++i) {
    Series s{policies[i], svg::color(i), "", {}, true};
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
      Series p99{label + " p99", svg::color(i), dashes[v % 4], {}, true};
      Series mean{label + " mean", svg::color(i), "3,3", {}, false};
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
  std::string out = svg::open(legend_x + 260, height, left, "lite cache-sim: " + r.trace.path,
                              fmt::format("{} requests, {} mode{}", format_count(r.trace.n_req_total),
                                          bytes ? "byte" : "object",
                                          r.trace.sampling.empty() ? ""
                                                                   : fmt::format(", SHARDS rate {:.4g}", r.trace.sample_rate)));
  double max_mr = 0;
  for (const auto& s : mr)
    for (const auto& p : s.points) max_mr = std::max(max_mr, p.second);
  const std::string unit = bytes ? "bytes" : "objects";
  svg::panel(out, {left, top, pw, ph, "Miss ratio", "miss ratio", unit, xa,
                   max_mr > 0 ? std::min(1.0, std::ceil(max_mr * 10) / 10) : 1.0},
             mr);
  if (has_latency)
    svg::panel(out, {left, top + ph + 90, pw, ph, "Request latency (p99 solid, mean dotted)", "latency (ms)", unit, xa,
                     lat_max > 0 ? lat_max * 1.1 : 1.0},
               lat);
  svg::legend(out, legend_x, top + 4, {&mr, &lat});
  out += svg::close();
  return out;
}

}  // namespace lite::cache
