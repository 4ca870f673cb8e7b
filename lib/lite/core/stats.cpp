#include "lite/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "lite/core/error.hpp"

namespace lite::stats {

double mean(const std::vector<double>& samples) {
  if (samples.empty()) return 0;
  // Kahan-free two-pass is plenty for latency samples; long double keeps 10^7 samples exact enough.
  long double sum = 0;
  for (double x : samples) sum += x;
  return static_cast<double>(sum / samples.size());
}

double stddev(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  double m = mean(samples);
  long double ss = 0;
  for (double x : samples) ss += (x - m) * (x - m);
  return std::sqrt(static_cast<double>(ss / (samples.size() - 1)));
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw InputError("percentile of an empty sample set");
  q = std::clamp(q, 0.0, 1.0);
  double h = (sorted.size() - 1) * q;
  size_t lo = static_cast<size_t>(std::floor(h));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

double percentile(std::vector<double> samples, double q) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, q);
}

double median(std::vector<double> samples) { return percentile(std::move(samples), 0.5); }

double median_absolute_deviation(const std::vector<double>& samples) {
  if (samples.empty()) return 0;
  double med = median(samples);
  std::vector<double> dev;
  dev.reserve(samples.size());
  for (double x : samples) dev.push_back(std::fabs(x - med));
  return median(std::move(dev));
}

std::vector<size_t> slow_outliers(const std::vector<double>& samples, double threshold) {
  std::vector<size_t> out;
  if (samples.size() < 3) return out;
  double med = median(samples);
  // 1.4826 makes MAD a consistent estimator of the standard deviation for normal data.
  double scale = 1.4826 * median_absolute_deviation(samples);
  if (scale <= 0) scale = 1e-9 * std::max(1.0, std::fabs(med));
  for (size_t i = 0; i < samples.size(); ++i)
    if ((samples[i] - med) / scale > threshold) out.push_back(i);
  return out;
}

Summary summarize(const std::vector<double>& samples) {
  if (samples.empty()) throw InputError("cannot summarize an empty set of samples");
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  Summary s;
  s.count = sorted.size();
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = mean(sorted);
  s.stddev = stddev(sorted);
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  s.p50 = percentile_sorted(sorted, 0.50);
  s.p90 = percentile_sorted(sorted, 0.90);
  s.p95 = percentile_sorted(sorted, 0.95);
  s.p99 = percentile_sorted(sorted, 0.99);
  s.p999 = percentile_sorted(sorted, 0.999);
  return s;
}

Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b, int resamples,
                                double confidence, uint64_t seed) {
  if (a.empty() || b.empty()) throw InputError("bootstrap of an empty sample set");
  Interval iv;
  iv.confidence = confidence;
  iv.estimate = median(a) / median(b);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick_a(0, a.size() - 1), pick_b(0, b.size() - 1);
  std::vector<double> ratios;
  ratios.reserve(resamples);
  std::vector<double> ra(a.size()), rb(b.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& x : ra) x = a[pick_a(rng)];
    for (auto& x : rb) x = b[pick_b(rng)];
    auto mid_a = ra.begin() + ra.size() / 2, mid_b = rb.begin() + rb.size() / 2;
    std::nth_element(ra.begin(), mid_a, ra.end());
    std::nth_element(rb.begin(), mid_b, rb.end());
    ratios.push_back(*mid_a / *mid_b);
  }
  std::sort(ratios.begin(), ratios.end());
  double alpha = (1 - confidence) / 2;
  iv.low = percentile_sorted(ratios, alpha);
  iv.high = percentile_sorted(ratios, 1 - alpha);
  return iv;
}

Interval wilson_interval(double percent, int64_t samples, double z) {
  Interval iv;
  iv.estimate = percent;
  iv.confidence = std::erf(z / std::sqrt(2.0));
  if (samples <= 0) {
    iv.high = 100;
    return iv;
  }
  const double n = double(samples), p = std::clamp(percent / 100.0, 0.0, 1.0);
  const double centre = (p + z * z / (2 * n)) / (1 + z * z / n);
  const double half = z / (1 + z * z / n) * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  iv.low = 100.0 * std::max(0.0, centre - half);
  iv.high = 100.0 * std::min(1.0, centre + half);
  return iv;
}

Interval quantile_interval(std::vector<double> samples, double q) {
  if (samples.empty()) throw InputError("quantile interval of an empty sample set");
  std::sort(samples.begin(), samples.end());
  const double n = double(samples.size()), spread = kZ95 * std::sqrt(n * q * (1 - q));
  const auto rank = [&](double r) { return size_t(std::clamp(r, 0.0, n - 1)); };
  Interval iv;
  iv.estimate = percentile_sorted(samples, q);
  iv.low = samples[rank(std::floor(n * q - spread) - 1)];
  iv.high = samples[rank(std::ceil(n * q + spread))];
  return iv;
}

}  // namespace lite::stats
