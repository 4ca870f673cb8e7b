// Percentile calibration: the range runs from the 0.01% to the 99.99% quantile of the observed values
// (read from the histogram, interpolating within a bin), so the rarest 0.01% on each side saturate.
// A side that never goes below zero keeps its bound at zero.
#include <algorithm>

#include "lite/quantize/calibration.hpp"

namespace lite::quantize {

namespace {
// The value below which a fraction q of the histogram's mass lies.
double quantile(const Histogram& h, double q) {
  double total = h.total(), target = q * total, seen = 0;
  const double w = h.bin_width();
  for (size_t i = 0; i < h.counts.size(); ++i) {
    double c = h.counts[i];
    if (c > 0 && seen + c >= target) {
      double frac = std::clamp((target - seen) / c, 0.0, 1.0);
      return h.lo + (double(i) + frac) * w;
    }
    seen += c;
  }
  return h.hi;
}
}  // namespace

Range percentile_range(const ObservedStats& s) {
  const Histogram& h = s.histogram;
  if (h.counts.empty() || !(h.total() > 0) || !(s.max > s.min)) return minmax_range(s);
  double p = kPercentile / 100.0;
  Range r{s.min < 0 ? quantile(h, 1 - p) : s.min, s.max > 0 ? quantile(h, p) : s.max};
  r.lo = std::max(r.lo, s.min);
  r.hi = std::min(r.hi, s.max);
  if (!(r.hi > r.lo)) return minmax_range(s);
  return r;
}

}  // namespace lite::quantize
