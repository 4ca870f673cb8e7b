// lite quantize's candidate choice on plain records: fastest among those meeting the tolerance, else the
// smallest drop with the tolerance gate failed, never a candidate that was not built.
#include <doctest/doctest.h>

#include <cmath>

#include "lite/quantize/choice.hpp"

using namespace lite::quantize;

namespace {
Candidate candidate(const char* mode, bool built, bool meets, std::vector<double> ratios, double drop) {
  Candidate c;
  c.mode = mode;
  c.built = built;
  c.meets_tolerance = meets;
  c.speed.ratio = std::move(ratios);
  c.quality.drop = drop;
  return c;
}
}  // namespace

TEST_CASE("choose_candidate takes the fastest candidate that meets the tolerance") {
  std::vector<Candidate> cands = {candidate("static", true, true, {0.4, 0.3}, 0.2),
                                  candidate("dynamic", true, true, {1.3, 3.0}, 0.0),
                                  candidate("fp16", true, false, {0.1, 0.1}, 5.0),
                                  candidate("bf16", false, true, {}, 0.0)};
  auto choice = choose_candidate(cands);
  CHECK(choice.index == 0);
  CHECK(choice.tolerance_met);
}

TEST_CASE("choose_candidate falls back to the smallest drop and fails the tolerance gate") {
  std::vector<Candidate> cands = {candidate("static", true, false, {0.4}, 3.0),
                                  candidate("dynamic", true, false, {1.3}, 1.5),
                                  candidate("fp16", false, false, {}, 0.0)};
  auto choice = choose_candidate(cands);
  CHECK(choice.index == 1);
  CHECK_FALSE(choice.tolerance_met);
}

TEST_CASE("choose_candidate never falls back to a candidate that was not evaluated") {
  auto over = candidate("static", true, false, {0.4}, 3.0);
  auto unevaluated = candidate("dynamic", true, false, {1.3}, 0.0);  // quality not measured: drop 0 means nothing
  unevaluated.evaluated = false;
  std::vector<Candidate> cands = {over, unevaluated};
  auto choice = choose_candidate(cands);
  CHECK(choice.index == 0);
  CHECK_FALSE(choice.tolerance_met);
}

TEST_CASE("choose_candidate reports no choice when nothing was built") {
  std::vector<Candidate> cands = {candidate("static", false, true, {}, 0.0)};
  CHECK(choose_candidate(cands).index == -1);
  CHECK(choose_candidate({}).index == -1);
  CHECK(geometric_mean({2.0, 8.0}) == doctest::Approx(4.0));
}

TEST_CASE("choose_candidate prefers a candidate that is not slower than frozen float") {
  // bf16 was found slower at batch 1 and not timed at batch 64: its lone ratio has the smaller geometric
  // mean (1.001 < 1.005), but the speed guard flagged it, and static is not flagged.
  auto fast = candidate("static", true, true, {1.02, 0.99}, 0.2);
  auto slow = candidate("bf16", true, true, {1.001}, 0.0);
  slow.speed.slower = true;
  std::vector<Candidate> cands = {fast, slow};
  CHECK(choose_candidate(cands).index == 0);
  std::vector<Candidate> reversed = {slow, fast};
  CHECK(choose_candidate(reversed).index == 1);
  // Both slower: the faster by geometric mean, as before.
  fast.speed.slower = true;
  std::vector<Candidate> both = {fast, slow};
  CHECK(choose_candidate(both).index == 1);
}

TEST_CASE("candidates timed at different batch sizes are compared on the sizes all were timed at") {
  // dynamic was found slower at batch 1 and not timed at 64; static is faster at batch 1 but slow at 64. On batch 1
  // alone (the sizes both have), static is the faster.
  std::vector<Candidate> cands = {candidate("static", true, true, {1.09, 2.0}, 0.0),
                                  candidate("dynamic", true, true, {1.43}, 0.0)};
  CHECK(common_batches(cands) == 1);
  CHECK(speed_score(cands[0].speed, 1) == doctest::Approx(1.09));
  CHECK(speed_score(cands[0].speed, 0) == doctest::Approx(std::sqrt(1.09 * 2.0)));
  CHECK(choose_candidate(cands).index == 0);
  cands.push_back(candidate("fp16", false, true, {}, 0.0));  // not built: does not count
  CHECK(common_batches(cands) == 1);
}

TEST_CASE("static int8 is timed uncalibrated only when the chosen mode is not clearly faster, and said when it pays") {
  // The chosen mode at 1.01x or 0.95x of frozen float's latency: worth timing static; at 0.5x: not.
  CHECK(worth_probing(1.01));
  CHECK(worth_probing(0.95));
  CHECK_FALSE(worth_probing(0.9));
  CHECK_FALSE(worth_probing(0.5));
  // It pays when at most 0.9 of frozen float's latency and of the chosen mode's.
  CHECK(uncalibrated_pays(0.4, 1.01));
  CHECK(uncalibrated_pays(0.9, 1.0));
  CHECK_FALSE(uncalibrated_pays(0.95, 1.2));  // faster than the chosen mode, but within the noise of frozen float
  CHECK_FALSE(uncalibrated_pays(0.88, 0.95));  // faster than frozen float, but within the noise of the chosen mode
  CHECK_FALSE(uncalibrated_pays(1.3, 1.01));
  CHECK_FALSE(uncalibrated_pays(0.0, 1.01));  // not timed
}
