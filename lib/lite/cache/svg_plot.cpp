// The object mode's SVG plot: miss-ratio curves per policy (and the exact one-pass LRU curve when --mrc is on),
// and, with a cost model, p99 (solid) and mean (dashed) request latency against cache size (svg_chart.cpp draws).
#include <fmt/format.h>

#include <algorithm>
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

// p99 (and, with one model variant, mean) request latency per policy and model variant.
std::vector<Series> latency_series(const CacheSimResult& r, const std::vector<std::string>& policies) {
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
  const bool has_latency = !r.records.empty() && (r.records.front().latency || !r.records.front().variants.empty());
  svg::Chart chart;
  chart.title = "lite cache-sim: " + r.trace.path;
  chart.subtitle = fmt::format("{} requests, {} mode{}", format_count(r.trace.n_req_total), bytes ? "byte" : "object",
                               r.trace.sampling.empty() ? "" : fmt::format(", SHARDS rate {:.4g}", r.trace.sample_rate));
  chart.x_unit = bytes ? "bytes" : "objects";
  chart.x = xa;
  chart.ratio_title = "Miss ratio";
  chart.ratio_label = "miss ratio";
  chart.ratio = miss_ratio_series(r, policies, smallest_size(r));
  chart.ms_title = "Request latency (p99 solid, mean dotted)";
  chart.ms_label = "latency (ms)";
  if (has_latency) chart.ms = latency_series(r, policies);
  return svg::render(chart);
}

}  // namespace lite::cache
