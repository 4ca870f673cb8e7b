#pragma once
// The learning-rate schedule: linear warm-up from 0 to the base rate over the first `warmup_steps`, then
// a half cosine from the base rate down to 0 at `total_steps`. Torch-free and stateless (a function of
// the step), so a resumed run gets exactly the rates of an uninterrupted one.
#include <cstdint>

namespace lite::distill {

struct CosineSchedule {
  double base_lr = 1e-3;
  int64_t total_steps = 1;
  int64_t warmup_steps = 0;

  // The rate for optimizer step `step` (0-based).
  double lr_at(int64_t step) const;
};

// warmup_steps = round(fraction * total), kept below total so that the cosine part has at least a step.
CosineSchedule make_schedule(double base_lr, int64_t total_steps, double warmup_fraction);

}  // namespace lite::distill
