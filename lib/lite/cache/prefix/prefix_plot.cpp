// The prefix mode's SVG plot (--plot), as Mooncake's Figure 9 draws it: token hit ratio against capacity on a log
// axis, one line per policy (and KV format, and route), the exact tail-first LRU curve with --mrc, and the trace's
// unbounded hit ratio as the ceiling; with a prefill cost model, TTFT p99 (solid) and mean (dotted) below.
// Capacity is in bytes when the study was sized through a KV format, else in tokens.
#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/svg_chart_internal.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

namespace {

using svg::Series;

bool sized_in_bytes(const PrefixResult& r) {
  return !r.rows.empty() && std::all_of(r.rows.begin(), r.rows.end(), [](const PrefixRow& row) {
    return row.capacity_bytes.has_value();
  });
}

double capacity(const PrefixRow& row, bool bytes) {
  return bytes ? *row.capacity_bytes : double(row.capacity_tokens);
}

std::string series_label(const PrefixRow& row) {
  std::string label = row.policy;
  if (!row.kv_dtype.empty()) label += " " + row.kv_dtype;
  if (!row.route.empty()) label += " / " + row.route;
  return label;
}

// The rows' series labels, in the rows' order (policy-major).
std::vector<std::string> labels(const PrefixResult& r) {
  std::vector<std::string> out;
  for (const auto& row : r.rows)
    if (std::find(out.begin(), out.end(), series_label(row)) == out.end()) out.push_back(series_label(row));
  return out;
}

// The one-pass curve, once per KV format in bytes (each format puts the same tokens in other bytes), drawn from the
// smallest simulated capacity right.
std::vector<Series> curve_series(const PrefixResult& r, bool bytes, double lo) {
  std::vector<Series> out;
  if (!r.curve || r.trace.prompt_tokens == 0) return out;
  std::vector<KvFormat> formats = bytes ? r.kv_formats : std::vector<KvFormat>{KvFormat{}};
  for (const auto& f : formats) {
    Series s{"tail-first LRU, one-pass exact" + (f.dtype.empty() ? std::string() : " " + f.dtype), "#000000", "5,4",
             {}, false};
    for (size_t i = 0; i < r.curve->capacity_blocks.size(); ++i) {
      const double tokens = double(r.curve->capacity_blocks[i]) * r.trace.block_tokens;
      const double x = bytes ? tokens * f.bytes_per_token : tokens;
      if (x >= lo) s.points.emplace_back(x, double(r.curve->hit_tokens[i]) / double(r.trace.prompt_tokens));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Series> hit_ratio_series(const PrefixResult& r, bool bytes, const svg::Axis& xa) {
  std::vector<Series> out;
  const auto names = labels(r);
  for (size_t i = 0; i < names.size(); ++i) {
    Series s{names[i], svg::color(i), "", {}, true};
    for (const auto& row : r.rows)
      if (series_label(row) == names[i]) s.points.emplace_back(capacity(row, bytes), row.token_hit_ratio());
    out.push_back(std::move(s));
  }
  for (auto& s : curve_series(r, bytes, xa.lo > 0 ? xa.lo : 1)) out.push_back(std::move(s));
  out.push_back(Series{"every block kept (unbounded)", "#7f7f7f", "2,3",
                       {{xa.lo > 0 ? xa.lo : 1, r.unbounded.token_hit_ratio}, {xa.hi, r.unbounded.token_hit_ratio}},
                       false});
  return out;
}

std::vector<Series> ttft_series(const PrefixResult& r, bool bytes) {
  std::vector<Series> out;
  const auto names = labels(r);
  for (size_t i = 0; i < names.size(); ++i) {
    Series p99{names[i] + " TTFT p99", svg::color(i), "", {}, true};
    Series mean{names[i] + " TTFT mean", svg::color(i), "3,3", {}, false};
    for (const auto& row : r.rows) {
      if (series_label(row) != names[i] || !row.ttft_p99_ms) continue;
      p99.points.emplace_back(capacity(row, bytes), *row.ttft_p99_ms);
      mean.points.emplace_back(capacity(row, bytes), row.ttft_mean_ms.value_or(0));
    }
    if (p99.points.empty()) continue;
    out.push_back(std::move(p99));
    out.push_back(std::move(mean));
  }
  return out;
}

std::string subtitle(const PrefixResult& r) {
  return fmt::format("{} requests, {} prompt tokens, {}-token blocks, {} engine{}", format_count(r.trace.requests),
                     format_count(r.trace.prompt_tokens), r.trace.block_tokens, r.engine,
                     r.instances ? fmt::format(", {} prefill instances", r.instances) : std::string());
}

}  // namespace

std::string render_prefix_svg(const PrefixResult& r) {
  const bool bytes = sized_in_bytes(r);
  double lo = 0, hi = 0;
  for (const auto& row : r.rows) {
    const double c = capacity(row, bytes);
    if (c > 0) lo = lo == 0 ? c : std::min(lo, c);
    hi = std::max(hi, c);
  }
  const svg::Axis xa = svg::size_axis(lo, hi);
  svg::Chart chart;
  chart.title = "lite cache-sim (prefix KV cache): " + r.trace.path;
  chart.subtitle = subtitle(r);
  chart.x_unit = bytes ? "bytes" : "tokens";
  chart.x = xa;
  chart.legend_width = 300;
  chart.ratio_title = "Token hit ratio";
  chart.ratio_label = "token hit ratio";
  chart.ratio = hit_ratio_series(r, bytes, xa);  // the ceiling series puts the unbounded ratio in the y range
  chart.ms_title = "Time to first token (p99 solid, mean dotted)";
  chart.ms_label = "TTFT (ms)";
  chart.ms = ttft_series(r, bytes);
  return svg::render(chart);
}

}  // namespace lite::cache::prefix
