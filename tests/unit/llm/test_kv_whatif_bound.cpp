// The KV-cache what-if's bound (kv_whatif_bound.hpp), on plain counts and seconds: the limit under a budget, which
// blocks start and how far a block decodes.
#include <doctest/doctest.h>

#include <limits>

#include "lite/llm/kv_whatif_bound.hpp"

using namespace lite::llm;

TEST_CASE("KV what-if limit: the seconds asked, under a budget at most half of what it leaves, never below 0") {
  const double none = std::numeric_limits<double>::infinity();
  CHECK(kv_what_if_limit_s(kKvWhatIfSeconds, none) == kKvWhatIfSeconds);
  CHECK(kv_what_if_limit_s(kKvWhatIfSeconds, 100) == kKvWhatIfSeconds);  // half of 100 s is more than asked
  CHECK(kv_what_if_limit_s(kKvWhatIfSeconds, 20) == 10);
  CHECK(kv_what_if_limit_s(5, 20) == 5);
  CHECK(kv_what_if_limit_s(kKvWhatIfSeconds, -3) == 0);  // the budget already spent
  CHECK(kv_what_if_limit_s(0, none) == 0);
}

TEST_CASE("KV what-if blocks: the first always, a later one while the time spent plus one more block fits") {
  const KvWhatIfPace pace(30, 4, 10);
  CHECK(pace.start_block(0, 0));
  CHECK(pace.start_block(0, 1000));  // the first block runs whatever the clock says
  CHECK(pace.start_block(1, 10));    // 10 s + 10 s <= 30 s
  CHECK(pace.start_block(2, 20));    // 20 s + 10 s
  CHECK_FALSE(pace.start_block(2, 21));
  CHECK_FALSE(pace.start_block(1, 16));  // 16 s + 16 s > 30 s
  CHECK_FALSE(pace.start_block(4, 0));   // every block done
  const KvWhatIfPace none(0, 4, 10);     // a limit of 0: one block
  CHECK(none.start_block(0, 0));
  CHECK_FALSE(none.start_block(1, 0.001));
}

TEST_CASE("KV what-if steps: up to the cap, past the limit only up to the minimum") {
  const KvWhatIfPace pace(30, 2, 10);
  CHECK(pace.take_step(0, 0));
  CHECK(pace.take_step(9, 29.9));
  CHECK_FALSE(pace.take_step(10, 0));  // the rows' steps (after the cap) done
  CHECK(pace.take_step(kKvWhatIfMinDecodeSteps - 1, 100));  // the minimum, past the limit
  CHECK_FALSE(pace.take_step(kKvWhatIfMinDecodeSteps, 30));
  const KvWhatIfPace short_rows(0, 1, 2);  // rows shorter than the minimum: their steps
  CHECK(short_rows.take_step(1, 5));
  CHECK_FALSE(short_rows.take_step(2, 5));
  const KvWhatIfPace prefill_only(30, 1, 0);  // rows of 2 tokens: nothing to decode
  CHECK_FALSE(prefill_only.take_step(0, 0));
}
