#pragma once
// Descriptive statistics for latency samples, written once and used by every subcommand.
//
// Percentiles use linear interpolation between closest ranks (Hyndman & Fan type 7, the default of
// numpy.percentile and of R): for sorted x[0..n-1] and q in [0,1], h = (n-1)q and
// P(q) = x[floor h] + (h - floor h)(x[floor h + 1] - x[floor h]).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lite::stats {

struct Summary {
  size_t count = 0;
  double min = 0, max = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n-1); 0 for fewer than two samples
  double cv = 0;      // coefficient of variation, stddev / mean
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

// Throws lite::InputError on an empty sample set.
Summary summarize(const std::vector<double>& samples);

double mean(const std::vector<double>& samples);
double stddev(const std::vector<double>& samples);  // sample (n-1)
// q in [0, 1]; `sorted` must be ascending and non-empty.
double percentile_sorted(const std::vector<double>& sorted, double q);
double percentile(std::vector<double> samples, double q);
double median(std::vector<double> samples);
// Median absolute deviation from the median (unscaled).
double median_absolute_deviation(const std::vector<double>& samples);
// Indices of samples whose robust z-score |x - median| / (1.4826 MAD) exceeds `threshold`,
// above the median only (latency spikes are slow outliers).
std::vector<size_t> slow_outliers(const std::vector<double>& samples, double threshold);

struct Interval {
  double estimate = 0, low = 0, high = 0;
  double confidence = 0.95;
};

// Ratio of medians median(a) / median(b) with a percentile bootstrap confidence interval.
// Deterministic: the resampling uses `seed`.
Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b,
                                int resamples = 2000, double confidence = 0.95, uint64_t seed = 0x5eed);

// The Wilson score interval of a proportion in percent: `percent` observed on `samples` samples; `z` is the
// normal quantile of the confidence (1.96: 95%, 2.576: 99%). [0, 100] for no samples.
inline constexpr double kZ95 = 1.959964, kZ99 = 2.575829;
Interval wilson_interval(double percent, int64_t samples, double z = kZ95);

// The distribution-free 95% interval of the q-quantile of `samples` (at least one): the order statistics around
// rank n*q, by the normal approximation to the binomial count of samples below the quantile. With few samples
// the slowest (or fastest) one bounds it.
Interval quantile_interval(std::vector<double> samples, double q);

}  // namespace lite::stats
