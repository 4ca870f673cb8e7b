// The one-pass LRU curve (Mattson stack distances) against simulated LRU, and SHARDS sampling.
#include <algorithm>

#include "cache_test_util.hpp"
#include "lite/cache/mrc_internal.hpp"
#include "lite/cache/object_rate_internal.hpp"

using namespace cache_test;
using lite::cache::lru_curve_requests;
using lite::cache::simulate_requests;

TEST_CASE("stack distances by hand") {
  // A B C A: A's distance is 3 (C, B, A) -> a hit for C >= 3. B C: distances 3 and 3.
  auto r = seq("A B C A B C");
  auto c = lru_curve_requests(r, {1, 2, 3, 4}, false);
  CHECK(c[0].n_miss == 6);
  CHECK(c[1].n_miss == 6);
  CHECK(c[2].n_miss == 3);
  CHECK(c[3].n_miss == 3);
  // byte mode: A:4 B:2 A:4 -> A's distance is 2 + 4 = 6 bytes
  auto b = lru_curve_requests(seq("A:4 B:2 A:4"), {5, 6}, true);
  CHECK(b[0].n_miss == 3);
  CHECK(b[1].n_miss == 2);
  CHECK(b[1].n_miss_byte == 6);
}

namespace {
// Every counter of the one-pass curve equals a simulated LRU cache of that size.
void check_curve_is_lru(const std::vector<Request>& trace, const std::vector<uint64_t>& sizes, bool bytes) {
  auto curve = lru_curve_requests(trace, sizes, bytes);
  REQUIRE(curve.size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(sizes[i]);
    auto sim = simulate_requests({"lru", {}}, sizes[i], trace);
    REQUIRE(curve[i].n_req == sim.n_req);
    REQUIRE(curve[i].n_miss == sim.n_miss);
    REQUIRE(curve[i].n_req_byte == sim.n_req_byte);
    REQUIRE(curve[i].n_miss_byte == sim.n_miss_byte);
  }
}
}  // namespace

TEST_CASE("the one-pass curve equals simulated LRU at every size (object mode)") {
  for (uint64_t seed : {1, 2, 3}) {
    auto trace = zipf(20000, 400, 0.7 + 0.2 * double(seed), 1, seed);
    std::vector<uint64_t> sizes;
    for (uint64_t s = 1; s <= 410; ++s) sizes.push_back(s);
    check_curve_is_lru(trace, sizes, false);
  }
}

TEST_CASE("the one-pass curve equals simulated LRU at every size from the largest object up (byte mode)") {
  auto trace = zipf(20000, 300, 0.9, 500, 17);  // fixed size per object, 1..500 bytes
  uint64_t largest = 0, total = 0;
  for (const auto& r : trace) largest = std::max<uint64_t>(largest, r.size);
  for (const auto& r : trace) total += r.size;
  std::vector<uint64_t> sizes;
  for (uint64_t s = largest; s < 200000; s = s + 1 + s / 7) sizes.push_back(s);
  check_curve_is_lru(trace, sizes, true);
  CHECK(lru_curve_requests(trace, {largest}, true)[0].n_req_byte == total);
}

TEST_CASE("the one-pass curve stays exact across position compactions") {
  // 200K requests over 30K keys: positions run out (64K) and are compacted several times.
  auto trace = zipf(200000, 30000, 0.6, 1, 23);
  check_curve_is_lru(trace, {1, 10, 100, 1000, 5000, 20000, 30000}, false);
}

namespace {
double mean_abs_error(const lite::cache::MrcCurve& sampled, const std::vector<Counters>& exact) {
  double sum = 0;
  for (size_t i = 0; i < exact.size(); ++i) sum += std::fabs(sampled.at_sizes[i].miss_ratio - exact[i].miss_ratio());
  return sum / double(exact.size());
}
lite::cache::detail::Batch batch_of(const std::vector<Request>& trace) {
  lite::cache::detail::Batch b;
  b.reserve(trace.size());
  for (const auto& r : trace) {
    b.key[b.n] = r.key;
    b.hash[b.n] = lite::cache::detail::hash_key(r.key);
    b.size[b.n] = 1;
    ++b.n;
  }
  return b;
}
}  // namespace

TEST_CASE("SHARDS: fixed-rate and fixed-size sampling track the exact curve") {
  auto trace = zipf(300000, 50000, 0.8, 1, 29);
  std::vector<uint64_t> sizes = {100, 500, 1000, 5000, 10000, 25000, 50000};
  auto exact = lru_curve_requests(trace, sizes, false);
  auto b = batch_of(trace);

  lite::cache::detail::LruProfiler rate(false, sizes, 0.1);
  rate.run(b);
  auto r = rate.finish(trace.size(), std::nullopt);
  const double rate_error = mean_abs_error(r, exact);
  MESSAGE("fixed-rate R=0.1 mean |error| = " << rate_error);
  CHECK(rate_error < 0.02);

  lite::cache::detail::LruProfiler fixed(false, sizes, 1.0, 4000);  // ~8% of the keys
  fixed.run(b);
  auto f = fixed.finish(trace.size(), std::nullopt);
  const double fixed_error = mean_abs_error(f, exact);
  MESSAGE("fixed-size s_max=4000 mean |error| = " << fixed_error);
  CHECK(fixed_error < 0.03);

  // sampling at rate 1 is the exact curve
  lite::cache::detail::LruProfiler all(false, sizes, 1.0);
  all.run(b);
  CHECK(mean_abs_error(all.finish(trace.size(), std::nullopt), exact) < 1e-12);
}

TEST_CASE("the curve finds the exact smallest LRU size for a hit-ratio target") {
  auto trace = zipf(20000, 500, 1.0, 1, 31);
  lite::cache::detail::LruProfiler p(false, {10});
  p.run(batch_of(trace));
  auto c = p.finish(0, 0.5);
  REQUIRE(c.smallest_size_for_target.has_value());
  const uint64_t s = *c.smallest_size_for_target;
  CHECK(1.0 - simulate_requests({"lru", {}}, s, trace).miss_ratio() >= 0.5);
  CHECK(1.0 - simulate_requests({"lru", {}}, s - 1, trace).miss_ratio() < 0.5);
}

TEST_CASE("SHARDS: the achieved object rate counts sampled objects exactly and estimates all objects closely") {
  using lite::cache::detail::hash_key;
  using lite::cache::detail::ObjectRate;
  using lite::cache::detail::threshold_for;
  for (uint64_t n : {1000ULL, 200000ULL, 8000000ULL}) {
    ObjectRate rate(threshold_for(0.01));
    uint64_t sampled = 0;
    for (uint64_t k = 1; k <= n; ++k) {
      const uint64_t h = hash_key(k * 7919);
      sampled += h < threshold_for(0.01);
      rate.observe(h);
      if (k % 3 == 0) rate.observe(h);  // repeats count once
    }
    CHECK(rate.sampled_objects() == sampled);
    const double estimate = rate.estimated_objects();
    MESSAGE(n << " objects estimated as " << estimate);
    CHECK(std::abs(estimate / double(n) - 1) < (n > 5000000 ? 0.01 : 0.005));
    CHECK(rate.achieved_rate(n) == doctest::Approx(double(sampled) / double(n)));
  }
}
