// Cost model: request latency figures per policy and size (see latency_internal.hpp), and the
// reader of `lite profile --json` reports used by --miss-latency-from.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "lite/cache/latency_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"

namespace lite::cache {

namespace detail {

namespace {

// Inverse CDF of a distribution given as (value, count) steps in ascending order.
template <class Steps>
double quantile_of_steps(const Steps& steps, double total, double q) {
  if (total <= 0) return 0;
  const double rank = std::max(1.0, std::ceil(q * total - 1e-9));
  double seen = 0;
  double last = 0;
  for (const auto& [value, count] : steps) {
    seen += count;
    last = value;
    if (double(seen) >= rank) return value;
  }
  return last;
}

}  // namespace

LatencyFigures latency_constant(const Counters& c, double hit_ms, double miss_ms) {
  LatencyFigures f;
  if (c.n_req == 0) return f;
  const uint64_t hits = c.n_req - c.n_miss;
  f.mean_ms = (double(hits) * hit_ms + double(c.n_miss) * miss_ms) / double(c.n_req);
  std::vector<std::pair<double, double>> steps = {{hit_ms, double(hits)}, {miss_ms, double(c.n_miss)}};
  if (miss_ms < hit_ms) std::swap(steps[0], steps[1]);
  f.p50_ms = quantile_of_steps(steps, double(c.n_req), 0.50);
  f.p99_ms = quantile_of_steps(steps, double(c.n_req), 0.99);
  return f;
}

LatencyFigures latency_from_costs(const Counters& c, double hit_ms, const MissCostStats& misses, double scale) {
  LatencyFigures f;
  if (c.n_req == 0) return f;
  const double hits = double(c.n_req - c.n_miss);
  f.mean_ms = (hits * hit_ms + misses.sum() * scale) / double(c.n_req);
  std::vector<std::pair<double, double>> steps;
  bool hit_placed = hits == 0;
  misses.for_each([&](double value, uint64_t count) {
    if (!hit_placed && hit_ms <= value) {
      steps.emplace_back(hit_ms, hits);
      hit_placed = true;
    }
    steps.emplace_back(value, double(count) * scale);
  });
  if (!hit_placed) steps.emplace_back(hit_ms, hits);
  f.p50_ms = quantile_of_steps(steps, double(c.n_req), 0.50);
  f.p99_ms = quantile_of_steps(steps, double(c.n_req), 0.99);
  return f;
}

// A variant's latency distribution is modelled as log-normal through its p50 and p99 (the report
// gives no more), so that with no cache at all the request p50 and p99 are exactly the model's.
LatencyFigures latency_from_variant(const Counters& c, double hit_ms, const ModelVariant& v) {
  LatencyFigures f;
  if (c.n_req == 0) return f;
  const double m = double(c.n_miss) / double(c.n_req);
  const double h = 1.0 - m;
  f.mean_ms = h * hit_ms + m * v.mean_ms;
  const double mu = std::log(std::max(v.p50_ms, 1e-12));
  const double sigma = v.p99_ms > v.p50_ms ? (std::log(v.p99_ms) - mu) / 2.3263478740408408 : 0.0;
  auto model_cdf = [&](double x) {
    if (x <= 0) return 0.0;
    if (sigma == 0) return x >= v.p50_ms ? 1.0 : 0.0;
    return 0.5 * std::erfc(-(std::log(x) - mu) / (sigma * std::sqrt(2.0)));
  };
  auto cdf = [&](double x) { return (x >= hit_ms ? h : 0.0) + m * model_cdf(x); };
  auto quantile = [&](double q) {
    if (cdf(hit_ms) >= q && (hit_ms <= 0 || cdf(hit_ms * (1 - 1e-12)) < q)) return hit_ms;
    double lo = 1e-9, hi = std::max({v.p99_ms, hit_ms, 1.0}) * 1e6;
    for (int i = 0; i < 200; ++i) {
      double mid = std::sqrt(lo * hi);
      if (cdf(mid) >= q) hi = mid;
      else lo = mid;
    }
    return hi;
  };
  f.p50_ms = quantile(0.50);
  f.p99_ms = quantile(0.99);
  return f;
}

}  // namespace detail

ModelVariant load_profile_variant(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw InputError(path, "cannot read the profile report (no such file)", "pass the JSON written by 'lite profile --json'");
  // Read through parse_json_input (depth and repeated keys checked) but not read_json_input_file: a long profile
  // run's raw samples may pass that reader's 16 MiB cap, and the regular-file check above keeps out devices.
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const nlohmann::json j = parse_json_input(text, path, "pass the JSON written by 'lite profile --json'");
  const std::string fix = "pass the JSON written by 'lite profile MODEL --json'";
  if (!j.is_object() || j.value("tool", std::string()) != "lite" || j.value("command", std::string()) != "profile")
    throw InputError(path,
                     fmt::format("is not a lite profile report (tool '{}', command '{}')",
                                 j.is_object() ? j.value("tool", std::string("?")) : "?",
                                 j.is_object() ? j.value("command", std::string("?")) : "?"),
                     fix);
  ModelVariant v;
  v.source = path;
  try {
    const auto& r = j.at("result");
    const auto& lat = r.at("latency_ms");
    v.mean_ms = lat.at("mean").get<double>();
    v.p50_ms = lat.at("p50").get<double>();
    v.p99_ms = lat.at("p99").get<double>();
    std::string model = r.at("model").at("path").get<std::string>();
    v.label = fs::path(model).filename().string();
  } catch (const nlohmann::json::exception&) {
    throw InputError(path, "has no result.latency_ms.{mean,p50,p99} or result.model.path", fix);
  }
  if (!(v.mean_ms >= 0) || !(v.p50_ms >= 0) || !(v.p99_ms >= 0))
    throw InputError(path, "has a negative or missing latency", fix);
  if (v.label.empty()) v.label = fs::path(path).stem().string();
  return v;
}

}  // namespace lite::cache
