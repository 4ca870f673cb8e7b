#pragma once
// How long the KV-cache what-if (kv_whatif.hpp) may run, as plain arithmetic on counts and seconds. Its rows go in
// blocks, and every pass (the cache as returned and each simulated format) decodes a block's positions in lockstep,
// so every format is judged on the same rows and positions whenever it stops: no block starts when the seconds spent
// plus one more block would pass the limit, and a block stops decoding once the limit is spent (after its first few
// steps, so at least one block always reads a rewritten cache). Rows longer than a cap are decoded up to the cap.
// Torch-free.
#include <cstdint>

namespace lite::llm {

inline constexpr double kKvWhatIfSeconds = 30;          // the default limit (quantize's {kv_what_if_seconds})
inline constexpr int64_t kKvWhatIfMaxDecodeSteps = 64;  // decode steps per row, however long the rows are
inline constexpr int64_t kKvWhatIfMinDecodeSteps = 4;   // a block's steps even past the limit (fewer when rows are)

// The what-if's limit: `asked_s`, and with a budget, at most half of the seconds it leaves (never below 0).
// `budget_left_s`: infinity without a budget.
double kv_what_if_limit_s(double asked_s, double budget_left_s);

// The what-if's decisions, from the seconds spent since it began.
class KvWhatIfPace {
 public:
  // `blocks`: the blocks the rows make; `steps`: decode steps per row after the cap.
  KvWhatIfPace(double limit_s, int64_t blocks, int64_t steps) : limit_s_(limit_s), blocks_(blocks), steps_(steps) {}
  // Another block after `done` blocks: the first always; a later one while the seconds spent plus one more block
  // (the mean of those done) fit the limit.
  bool start_block(int64_t done, double elapsed_s) const;
  // Another decode step in a block after `done` steps: up to `steps`; past the limit, only up to the minimum.
  bool take_step(int64_t done, double elapsed_s) const;

 private:
  double limit_s_;
  int64_t blocks_, steps_;
};

}  // namespace lite::llm
