// MSE calibration: for each candidate clipping range [lo, hi] (the observed range shrunk towards zero,
// 512 steps), the expected squared error of quantizing the observed values is estimated from the
// histogram at bin centres: a value inside the range costs the rounding error of a uniform step,
// step^2 / 12 with step = (hi - lo) / 255; a value outside costs its squared distance to the range. The
// range with the least error wins. This is the criterion of PyTorch's HistogramObserver (L2 norm), and
// the default here.
#include <limits>

#include "lite/quantize/calibration.hpp"

namespace lite::quantize {

namespace {
constexpr int kSteps = 512;

double expected_squared_error(const Histogram& h, const Range& r) {
  const double step = (r.hi - r.lo) / 255.0, rounding = step * step / 12.0, w = h.bin_width();
  double err = 0, total = 0;
  for (size_t i = 0; i < h.counts.size(); ++i) {
    double c = h.counts[i];
    if (c == 0) continue;
    double x = h.lo + (double(i) + 0.5) * w;
    double e = x < r.lo ? (r.lo - x) * (r.lo - x) : x > r.hi ? (x - r.hi) * (x - r.hi) : rounding;
    err += c * e;
    total += c;
  }
  return total > 0 ? err / total : 0;
}
}  // namespace

Range mse_range(const ObservedStats& s) {
  const Histogram& h = s.histogram;
  if (h.counts.empty() || !(h.total() > 0) || !(s.max > s.min)) return minmax_range(s);
  auto windows = shrink_windows(h, 1, kSteps);
  double best = std::numeric_limits<double>::infinity();
  Range chosen = minmax_range(s);
  for (const auto& w : windows) {  // widest first: ties keep the wider range
    Range r = window_range(h, w);
    double e = expected_squared_error(h, r);
    if (e < best) {
      best = e;
      chosen = r;
    }
  }
  return {std::max(chosen.lo, s.min), std::min(chosen.hi, s.max)};
}

}  // namespace lite::quantize
