// When lite optimize stops timing a variant: the screen once its speedup is known within a tenth, a full
// measurement once the speedup is within 4% and the target clearly met (never on fewer calls than a p99 bound
// needs), or once it is clearly slower than a variant measured before it.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "lite/core/stats.hpp"
#include "lite/optimize/settle.hpp"

using namespace lite::optimize;

namespace {

// `n` calls around `ms` with a relative jitter `spread` (seeded, so every run sees the same samples).
std::vector<double> calls(size_t n, double ms, double spread, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, spread);
  std::vector<double> out(n);
  for (double& x : out) x = ms * std::exp(jitter(rng));
  return out;
}

Target p99_target(double ms) { return {"target_p99_ms", ms, 1}; }

}  // namespace

TEST_CASE("a screen settles once its speedup is known within a tenth, and not before its minimum calls") {
  const SettleRule rule = screen_settle_rule();
  CHECK_FALSE(settled(rule, calls(10, 1.0, 0.01), calls(10, 2.0, 0.01, 8)));  // too few calls
  CHECK(settled(rule, calls(40, 1.0, 0.01), calls(40, 2.0, 0.01, 8)));        // quiet: 2x, decided
  CHECK_FALSE(settled(rule, calls(40, 1.0, 0.5), calls(40, 2.0, 0.5, 8)));    // noisy: the interval is wide
}

TEST_CASE("a full measurement settles on a met p99 target only with enough calls to bound the p99") {
  const SettleRule rule = measure_settle_rule(p99_target(2.0));
  // Quiet and far under the target: 200 calls cannot bound a p99 (0.99^200 > 0.025), 400 can.
  CHECK_FALSE(settled(rule, calls(200, 1.0, 0.01), calls(200, 2.0, 0.01, 8)));
  CHECK(settled(rule, calls(400, 1.0, 0.01), calls(400, 2.0, 0.01, 8)));
  // The p99 straddles the target: not met at the whole interval, however many calls.
  const std::vector<double> mine = calls(2000, 1.0, 0.01);
  const SettleRule close = measure_settle_rule(p99_target(lite::stats::percentile(mine, 0.99)));
  CHECK_FALSE(settled(close, mine, calls(2000, 2.0, 0.01, 8)));
}

TEST_CASE("a variant that seems to miss its latency target is timed for the whole duration") {
  // Far over the target, however quiet: a brief burst would look the same, and a cache would be sized on it.
  const SettleRule rule = measure_settle_rule(p99_target(0.5));
  CHECK_FALSE(settled(rule, calls(2000, 1.0, 0.01), calls(2000, 2.0, 0.01, 8)));
}

TEST_CASE("a speedup target settles when the speedup's whole interval meets it") {
  SettleRule rule = measure_settle_rule({"target_speedup", 1.5, 1});
  CHECK(settled(rule, calls(200, 1.0, 0.01), calls(200, 2.0, 0.01, 8)));        // 2x >= 1.5x
  rule.target->value = 2.0;
  CHECK_FALSE(settled(rule, calls(2000, 1.0, 0.01), calls(2000, 2.0, 0.01, 8)));  // 2x against 2x: never decided
  rule.target->value = 3.0;
  CHECK_FALSE(settled(rule, calls(2000, 1.0, 0.01), calls(2000, 2.0, 0.01, 8)));  // missed: timed on
}

TEST_CASE("paced asks the rule only as the samples grow by a fifth") {
  SettleRule rule = screen_settle_rule();
  auto ask = paced(rule);
  const std::vector<double> original = calls(400, 2.0, 0.01, 8);
  std::vector<double> mine = calls(20, 1.0, 0.01);
  CHECK(ask(mine, original));  // the first ask is answered
  auto ask_again = paced(rule);
  CHECK_FALSE(ask_again(calls(10, 1.0, 0.01), original));  // asked at 10 calls: too few
  CHECK_FALSE(ask_again(calls(15, 1.0, 0.01), original));  // 15 < 10 + 8: not asked yet
  CHECK(ask_again(calls(40, 1.0, 0.01), original));
}

TEST_CASE("a full measurement settles once the variant is clearly slower than one measured before it") {
  // 1.25x against a variant measured at 1.5x or more: settled at the minimum calls, though its p99 straddles.
  const std::vector<double> mine = calls(200, 1.6, 0.01), original = calls(200, 2.0, 0.01, 8);
  const Target straddled = p99_target(lite::stats::percentile(mine, 0.99));
  CHECK_FALSE(settled(measure_settle_rule(straddled), mine, original));
  CHECK(settled(measure_settle_rule(straddled, 1.5), mine, original));
  CHECK_FALSE(settled(measure_settle_rule(straddled, 1.2), mine, original));  // not beaten: 1.25x > 1.2x
}

TEST_CASE("the target is judged at the original's first speed: a slow window of the machine is scaled out") {
  // The original ran at 2 ms beside this variant but at 1 ms in its first timing: the machine was twice as slow,
  // so the variant's 1 ms calls are 0.5 ms at the first timing's speed, under a 0.6 ms target.
  const std::vector<double> mine = calls(400, 1.0, 0.01), original = calls(400, 2.0, 0.01, 8);
  CHECK_FALSE(settled(measure_settle_rule(p99_target(0.6)), mine, original));
  CHECK(settled(measure_settle_rule(p99_target(0.6), 0, /*baseline_p50_ms=*/1.0), mine, original));
}
