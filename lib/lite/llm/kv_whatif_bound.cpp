#include "lite/llm/kv_whatif_bound.hpp"

#include <algorithm>

namespace lite::llm {

double kv_what_if_limit_s(double asked_s, double budget_left_s) {
  return std::max(0.0, std::min(asked_s, budget_left_s / 2));
}

bool KvWhatIfPace::start_block(int64_t done, double elapsed_s) const {
  if (done >= blocks_) return false;
  if (done == 0) return true;
  return elapsed_s + elapsed_s / double(done) <= limit_s_;
}

bool KvWhatIfPace::take_step(int64_t done, double elapsed_s) const {
  if (done >= steps_) return false;
  return done < kKvWhatIfMinDecodeSteps || elapsed_s < limit_s_;
}

}  // namespace lite::llm
