#include <doctest/doctest.h>

#include <cmath>

#include "lite/core/error.hpp"
#include "lite/core/stats.hpp"

using namespace lite;

TEST_CASE("percentile uses linear interpolation between closest ranks (type 7)") {
  std::vector<double> x = {1, 2, 3, 4};
  // h = (4-1)*0.5 = 1.5 -> 2 + 0.5*(3-2) = 2.5
  CHECK(stats::percentile(x, 0.5) == doctest::Approx(2.5));
  // h = 3*0.9 = 2.7 -> 3 + 0.7*(4-3) = 3.7
  CHECK(stats::percentile(x, 0.9) == doctest::Approx(3.7));
  CHECK(stats::percentile(x, 0.0) == 1);
  CHECK(stats::percentile(x, 1.0) == 4);
  CHECK(stats::percentile({7}, 0.99) == 7);
  // order of input does not matter
  CHECK(stats::percentile({4, 1, 3, 2}, 0.25) == doctest::Approx(1.75));
}

TEST_CASE("summary of a hand-computed sample") {
  std::vector<double> x = {2, 4, 4, 4, 5, 5, 7, 9};
  auto s = stats::summarize(x);
  CHECK(s.count == 8);
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  CHECK(s.mean == doctest::Approx(5.0));
  // sum of squared deviations = 32, n-1 = 7
  CHECK(s.stddev == doctest::Approx(std::sqrt(32.0 / 7.0)));
  CHECK(s.cv == doctest::Approx(std::sqrt(32.0 / 7.0) / 5.0));
  CHECK(s.p50 == doctest::Approx(4.5));
  // h = 7*0.99 = 6.93 -> 7 + 0.93*2 = 8.86
  CHECK(s.p99 == doctest::Approx(8.86));
  CHECK(s.p999 == doctest::Approx(7 + 0.993 * 2));
}

TEST_CASE("summary of nothing is an input error") { CHECK_THROWS_AS(stats::summarize({}), InputError); }

TEST_CASE("median absolute deviation and slow outliers") {
  std::vector<double> x = {1, 1, 2, 2, 4, 6, 9};
  // median 2; |dev| = 1,1,0,0,2,4,7 -> sorted 0,0,1,1,2,4,7 -> MAD 1
  CHECK(stats::median_absolute_deviation(x) == doctest::Approx(1.0));
  // robust z of 9 = 7/1.4826 = 4.72; of 6 = 2.70
  auto out = stats::slow_outliers(x, 3.5);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == 6);
  CHECK(stats::slow_outliers(x, 2.5).size() == 2);
}

TEST_CASE("bootstrap median ratio brackets the estimate and is deterministic") {
  std::vector<double> a, b;
  for (int i = 0; i < 200; ++i) {
    a.push_back(2.0 + 0.01 * (i % 17));
    b.push_back(1.0 + 0.005 * (i % 13));
  }
  auto iv = stats::bootstrap_median_ratio(a, b);
  CHECK(iv.low <= iv.estimate);
  CHECK(iv.estimate <= iv.high);
  CHECK(iv.estimate == doctest::Approx(stats::median(a) / stats::median(b)));
  auto again = stats::bootstrap_median_ratio(a, b);
  CHECK(again.low == iv.low);
  CHECK(again.high == iv.high);
}

TEST_CASE("the Wilson interval holds the observed value, narrows with samples and widens with confidence") {
  auto iv = stats::wilson_interval(90, 100);
  CHECK(iv.low < 90);
  CHECK(iv.high > 90);
  CHECK(iv.confidence == doctest::Approx(0.95).epsilon(1e-4));
  // Hand-computed: p = 0.9, n = 100, z = 1.96 gives [82.56, 94.48] (Wilson 1927).
  CHECK(iv.low == doctest::Approx(82.56).epsilon(1e-3));
  CHECK(iv.high == doctest::Approx(94.48).epsilon(1e-3));
  auto wide = stats::wilson_interval(90, 100, stats::kZ99);
  CHECK(wide.low < iv.low);
  CHECK(wide.high > iv.high);
  auto many = stats::wilson_interval(90, 10000);
  CHECK(many.high - many.low < (iv.high - iv.low) / 5);
  auto all = stats::wilson_interval(100, 50);
  CHECK(all.high == doctest::Approx(100));
  CHECK(all.low > 90);
  auto none = stats::wilson_interval(50, 0);
  CHECK(none.low == 0);
  CHECK(none.high == 100);
}

TEST_CASE("quantile interval: order statistics around rank n*q, the extremes when too few samples") {
  std::vector<double> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = double(x.size() - i);  // 1000..1, unsorted
  const stats::Interval median = stats::quantile_interval(x, 0.5);
  CHECK(median.estimate == doctest::Approx(500.5));
  CHECK(median.low < 500.5);
  CHECK(median.high > 500.5);
  CHECK(median.high - median.low < 70);  // +-1.96 sqrt(250) ranks: about 31 each side
  const stats::Interval p99 = stats::quantile_interval({1, 2, 3}, 0.99);
  CHECK(p99.high == 3);
  CHECK_THROWS_AS(stats::quantile_interval({}, 0.5), InputError);
}
