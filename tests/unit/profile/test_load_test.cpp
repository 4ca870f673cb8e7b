#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "lite/core/error.hpp"
#include "lite/profile/load_test.hpp"

using namespace lite;

TEST_CASE("Poisson arrivals are seeded and have the offered rate") {
  auto a = profile::poisson_arrivals_ms(1000, 20000, 7);
  auto b = profile::poisson_arrivals_ms(1000, 20000, 7);
  CHECK(a == b);
  // mean gap 1 ms; the sum of 20000 exponential gaps is within 3% of 20 s with overwhelming probability
  CHECK(a.back() == doctest::Approx(20000).epsilon(0.03));
  for (size_t i = 1; i < a.size(); ++i) REQUIRE(a[i] > a[i - 1]);
  CHECK_THROWS_AS(profile::poisson_arrivals_ms(0, 10, 1), UsageError);
}

TEST_CASE("load summary from hand-computed arrivals and service times") {
  // Arrivals at 0, 1, 2, 10 ms; service takes 2 ms; one worker.
  // starts: 0, 2, 4, 10; finishes: 2, 4, 6, 12; latency: 2, 3, 4, 2; queue: 0, 1, 2, 0.
  std::vector<double> arrivals = {0, 1, 2, 10}, start = {0, 2, 4, 10}, finish = {2, 4, 6, 12};
  auto r = profile::summarize_load(100, arrivals, start, finish);
  CHECK(r.requests == 4);
  CHECK(r.latency_ms.mean == doctest::Approx(2.75));
  CHECK(r.latency_ms.max == doctest::Approx(4));
  CHECK(r.queue_ms.mean == doctest::Approx(0.75));
  CHECK(r.waited_fraction == doctest::Approx(0.5));
  CHECK(r.utilization == doctest::Approx(8.0 / 12.0));
  CHECK(r.achieved_qps == doctest::Approx(1000.0 * 4 / 12));
  CHECK_FALSE(r.saturated);
}

TEST_CASE("a queue that keeps growing is saturated") {
  std::vector<double> arrivals, start, finish;
  double free_at = 0;
  for (int i = 0; i < 100; ++i) {
    arrivals.push_back(i * 1.0);  // one per ms, but service takes 1.5 ms
    start.push_back(std::max(arrivals.back(), free_at));
    finish.push_back(start.back() + 1.5);
    free_at = finish.back();
  }
  CHECK(profile::summarize_load(1000, arrivals, start, finish).saturated);
}
