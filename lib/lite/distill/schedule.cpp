// Cosine learning-rate schedule with linear warm-up (see schedule.hpp).
#include "lite/distill/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace lite::distill {

double CosineSchedule::lr_at(int64_t step) const {
  if (step < warmup_steps) return base_lr * double(step + 1) / double(warmup_steps);
  const int64_t span = std::max<int64_t>(1, total_steps - warmup_steps);
  const double progress = std::min(1.0, double(step - warmup_steps) / double(span));
  return 0.5 * base_lr * (1.0 + std::cos(M_PI * progress));
}

CosineSchedule make_schedule(double base_lr, int64_t total_steps, double warmup_fraction) {
  CosineSchedule s;
  s.base_lr = base_lr;
  s.total_steps = std::max<int64_t>(1, total_steps);
  s.warmup_steps = std::clamp<int64_t>(std::llround(warmup_fraction * double(s.total_steps)), 0, s.total_steps - 1);
  return s;
}

}  // namespace lite::distill
