#include "lite/optimize/settle.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "lite/core/stats.hpp"

namespace lite::optimize {

namespace {

// Resamples per settle check: enough for an interval's ends to a percent, few enough to ask often.
constexpr int kSettleResamples = 300;

// Fewer calls than this leave a 1-in-40 chance that the q-quantile lies above the slowest of them (q^n > 0.025):
// below it the order-statistic interval's top is no 95% bound and a quantile target cannot be decided.
size_t calls_to_bound(double q) { return size_t(std::ceil(std::log(0.025) / std::log(q))); }

}  // namespace

SettleRule screen_settle_rule() {
  SettleRule r;
  r.ratio_width = 0.10;
  r.min_calls = 20;
  return r;
}

SettleRule measure_settle_rule(const Target& target, double beaten_below, double baseline_p50_ms) {
  SettleRule r;
  r.baseline_p50_ms = baseline_p50_ms;
  r.beaten_below = beaten_below;
  r.ratio_width = 0.04;
  r.target = target;
  r.min_calls = 100;  // a p99 of fewer calls is little more than the slowest one
  return r;
}

bool settled(const SettleRule& rule, const std::vector<double>& variant_ms, const std::vector<double>& original_ms) {
  if (variant_ms.empty() || original_ms.empty() || int64_t(variant_ms.size()) < rule.min_calls) return false;
  const stats::Interval speedup = stats::bootstrap_median_ratio(original_ms, variant_ms, kSettleResamples);
  if (speedup.high < rule.beaten_below) return true;
  if (rule.ratio_width > 0 && speedup.high - speedup.low > rule.ratio_width * speedup.estimate) return false;
  if (!rule.target) return true;
  const Target& t = *rule.target;
  if (t.key == "target_speedup") return speedup.low >= t.value;
  if (!t.is_latency()) return true;  // throughput: the mean, as precise as the speedup
  const double q = t.key == "target_p50_ms" ? 0.5 : 0.99;
  if (variant_ms.size() < calls_to_bound(q)) return false;
  const double scale = rule.baseline_p50_ms > 0 ? rule.baseline_p50_ms / stats::median(original_ms) : 1.0;
  return stats::quantile_interval(variant_ms, q).high * scale <= t.value;
}

std::function<bool(const std::vector<double>&, const std::vector<double>&)> paced(const SettleRule& rule) {
  auto next_ask = std::make_shared<size_t>(0);
  return [rule, next_ask](const std::vector<double>& variant_ms, const std::vector<double>& original_ms) {
    const size_t n = variant_ms.size();
    if (n < *next_ask) return false;
    *next_ask = n + std::max<size_t>(8, n / 5);
    return settled(rule, variant_ms, original_ms);
  };
}

}  // namespace lite::optimize
