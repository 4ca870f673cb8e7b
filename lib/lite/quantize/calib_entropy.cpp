// Entropy calibration (TensorRT's KL-divergence method): for each candidate clipping window of the
// histogram, P is the histogram inside the window with the clipped mass added to its edge bins, Q is
// the same window merged into 256 int8 levels and spread back evenly over the non-empty bins of each
// level. The window with the least KL(P || Q) wins: it trades the information lost by clipping against
// the resolution lost by a coarser step. Windows narrower than 256 bins are not considered (there the
// quantization would be finer than the histogram and Q would trivially equal P).
#include <cmath>
#include <limits>

#include "lite/quantize/calibration.hpp"

namespace lite::quantize {

namespace {
constexpr int kLevels = 256;

double kl_divergence(const Histogram& h, const Window& w) {
  const auto& c = h.counts;
  const int n = w.last - w.first;
  std::vector<double> p(static_cast<size_t>(n)), q(static_cast<size_t>(n), 0.0);
  double below = 0, above = 0;
  for (int i = 0; i < w.first; ++i) below += c[i];
  for (int i = w.last; i < static_cast<int>(c.size()); ++i) above += c[i];
  for (int i = 0; i < n; ++i) p[i] = c[w.first + i];
  p[0] += below;
  p[n - 1] += above;
  for (int level = 0; level < kLevels; ++level) {
    int begin = static_cast<int>(int64_t(level) * n / kLevels),
        end = static_cast<int>(int64_t(level + 1) * n / kLevels);
    double sum = 0;
    int nonzero = 0;
    for (int i = begin; i < end; ++i) {
      sum += c[w.first + i];
      nonzero += c[w.first + i] != 0;
    }
    if (nonzero == 0) continue;
    for (int i = begin; i < end; ++i)
      if (c[w.first + i] != 0) q[i] = sum / nonzero;
  }
  double p_total = 0, q_total = 0;
  for (int i = 0; i < n; ++i) {
    p_total += p[i];
    q_total += q[i];
  }
  if (!(p_total > 0) || !(q_total > 0)) return std::numeric_limits<double>::infinity();
  // Smoothing: an empty bin of Q where P has mass (clipped mass on an empty edge bin) costs as if Q
  // held a tiny share there instead of making the divergence infinite.
  const double eps = 1e-4 / n;
  double kl = 0;
  for (int i = 0; i < n; ++i) {
    if (p[i] <= 0) continue;
    double pi = p[i] / p_total, qi = (q[i] / q_total) * (1 - eps * n) + eps;
    kl += pi * std::log(pi / qi);
  }
  return kl;
}
}  // namespace

Range entropy_range(const ObservedStats& s) {
  const Histogram& h = s.histogram;
  if (h.counts.empty() || !(h.total() > 0) || !(s.max > s.min)) return minmax_range(s);
  auto windows = shrink_windows(h, kLevels, static_cast<int>(h.counts.size()));
  if (windows.empty()) return minmax_range(s);
  double best = std::numeric_limits<double>::infinity();
  Window chosen = windows.front();
  for (const auto& w : windows) {  // widest first: ties keep the wider window
    double kl = kl_divergence(h, w);
    if (kl < best) {
      best = kl;
      chosen = w;
    }
  }
  Range r = window_range(h, chosen);
  return {std::max(r.lo, s.min), std::min(r.hi, s.max)};
}

}  // namespace lite::quantize
