#pragma once
// Cost model pieces shared by the simulators and the result builder.
//
// A request's latency is the hit latency on a hit and its miss latency on a miss. The miss latency is
// a constant (--miss-latency), the request's own cost column, or a model variant's latency
// distribution (--miss-latency-from a `lite profile` report). Percentiles are inverse-CDF values of
// the per-request latency distribution: the smallest x with P(latency <= x) >= q.
#include <cmath>
#include <cstdint>
#include <vector>

#include "lite/cache/cache_sim.hpp"

namespace lite::cache::detail {

// Per-request miss costs as a log-bucketed histogram: buckets 1% wide from 1 ns to ~10^7 ms, so a
// percentile is within 0.5% of the exact value and memory does not grow with the trace.
class MissCostStats {
 public:
  static constexpr double kMin = 1e-6;  // ms
  static constexpr double kGrowth = 1.01;
  static constexpr int kBuckets = 3200;

  void add(double ms) {
    sum_ += ms;
    if (!(ms > kMin)) {
      ++at_or_below_min_;
      return;
    }
    if (buckets_.empty()) buckets_.assign(kBuckets, 0);
    int b = static_cast<int>(std::log(ms / kMin) * kInvLogGrowth);
    if (b >= kBuckets) b = kBuckets - 1;
    ++buckets_[b];
  }
  double sum() const { return sum_; }
  // Adds another distribution (a cluster's nodes into the cluster's).
  void merge(const MissCostStats& o) {
    sum_ += o.sum_;
    at_or_below_min_ += o.at_or_below_min_;
    if (o.buckets_.empty()) return;
    if (buckets_.empty()) buckets_.assign(kBuckets, 0);
    for (int b = 0; b < kBuckets; ++b) buckets_[b] += o.buckets_[b];
  }
  // Walks the distribution in ascending order: f(value, count) for each non-empty bucket.
  template <class F>
  void for_each(F&& f) const {
    if (at_or_below_min_) f(0.0, at_or_below_min_);
    for (int b = 0; b < static_cast<int>(buckets_.size()); ++b)
      if (buckets_[b]) f(kMin * std::pow(kGrowth, b + 0.5), buckets_[b]);
  }

 private:
  inline static const double kInvLogGrowth = 1.0 / std::log(kGrowth);
  std::vector<uint64_t> buckets_;
  uint64_t at_or_below_min_ = 0;
  double sum_ = 0;
};

LatencyFigures latency_constant(const Counters& c, double hit_ms, double miss_ms);
// `scale` multiplies the recorded misses (1/rate for a sampled simulation whose counters are estimates).
LatencyFigures latency_from_costs(const Counters& c, double hit_ms, const MissCostStats& misses, double scale = 1.0);
LatencyFigures latency_from_variant(const Counters& c, double hit_ms, const ModelVariant& v);

}  // namespace lite::cache::detail
