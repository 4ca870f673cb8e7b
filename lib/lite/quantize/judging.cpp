// How lite quantize judges candidates' quality (see judging.hpp).
#include "lite/quantize/judging.hpp"

#include <algorithm>
#include <cmath>

#include "lite/quantize/choice.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::quantize {

int64_t judged_samples(int64_t available, double float_seconds_per_sample, double allowance_s,
                       std::optional<int64_t> requested) {
  if (requested && *requested > 0) return std::min(available, *requested);
  if (!(float_seconds_per_sample > 0)) return available;
  const double fits = std::floor(allowance_s / float_seconds_per_sample);
  const int64_t scaled = fits >= double(available) ? available : std::max<int64_t>(int64_t(fits), kMinJudgedSamples);
  return std::min(available, scaled);
}

int64_t next_chunk_end(int64_t done, int64_t total, int64_t max_chunk) {
  max_chunk = std::max<int64_t>(max_chunk, 1);
  const int64_t chunk = done == 0 ? std::min(kFirstChunk, max_chunk) : std::min(done, max_chunk);
  return std::min(total, done + chunk);
}

stats::Interval drop_interval(const JudgedCounts& counts, double z) {
  const auto percent = [&](int64_t n) { return counts.samples ? 100.0 * double(n) / double(counts.samples) : 0.0; };
  const stats::Interval lost = stats::wilson_interval(percent(counts.lost), counts.samples, z);
  stats::Interval drop;
  drop.confidence = lost.confidence;
  drop.estimate = percent(counts.lost) - percent(counts.gained);
  if (!counts.labels) {  // nothing can be gained against the float model's own top-1
    drop.low = lost.low;
    drop.high = lost.high;
    return drop;
  }
  const stats::Interval gained = stats::wilson_interval(percent(counts.gained), counts.samples, z);
  drop.low = drop.estimate - std::hypot(lost.estimate - lost.low, gained.high - gained.estimate);
  drop.high = drop.estimate + std::hypot(lost.high - lost.estimate, gained.estimate - gained.low);
  return drop;
}

bool cannot_meet(const JudgedCounts& counts, double tolerance) {
  return counts.samples > 0 && drop_interval(counts, stats::kZ99).low > tolerance;
}

std::vector<size_t> evaluation_order(const std::vector<Candidate>& candidates) {
  std::vector<size_t> order;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].built) order.push_back(i);
  const size_t batches = common_batches(candidates);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Speed& x = candidates[a].speed;
    const Speed& y = candidates[b].speed;
    if (x.slower != y.slower) return !x.slower;
    return speed_score(x, batches) < speed_score(y, batches);
  });
  return order;
}

}  // namespace lite::quantize
