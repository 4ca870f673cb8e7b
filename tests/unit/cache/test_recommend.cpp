// recommend() alone, on hand-made records: the first size meeting the target per policy, the best
// across policies, Belady as an offline bound, per-variant p99 targets, the --mrc-only answer.
#include "cache_test_util.hpp"

#include "lite/cache/recommend.hpp"

using namespace lite::cache;

namespace {

SimRecord record(const std::string& policy, uint64_t size, uint64_t misses, std::optional<double> p99 = {}) {
  SimRecord r;
  r.policy = policy;
  r.size = size;
  r.counters.n_req = 100;
  r.counters.n_miss = misses;
  if (p99) r.latency = LatencyFigures{0, 0, *p99};
  return r;
}

}  // namespace

TEST_CASE("recommend: the smallest size meeting a hit-ratio target, best across policies") {
  SimulationConfig o;
  o.policies = parse_policies("lru,s3fifo");
  o.target_hit_ratio = 0.7;
  CacheSimResult r;
  r.records = {record("lru", 10, 50), record("lru", 20, 35), record("lru", 40, 20),
               record("s3fifo", 10, 40), record("s3fifo", 20, 30), record("s3fifo", 40, 10)};
  auto set = recommend(r, o);
  REQUIRE(set.per_policy.size() == 2);
  CHECK(*set.per_policy[0].size == 40);
  CHECK(*set.per_policy[1].size == 20);
  REQUIRE(set.best);
  CHECK(set.best->policy == "s3fifo");
  CHECK(*set.best->size == 20);
  CHECK(set.best->miss_ratio == doctest::Approx(0.3));
  CHECK(set.reached);
  CHECK(set.target == "hit ratio >= 0.7");

  o.target_hit_ratio = 0.95;  // nothing reaches it
  set = recommend(r, o);
  CHECK_FALSE(set.reached);
  CHECK_FALSE(set.best);
  CHECK_FALSE(set.per_policy[0].size);
}

TEST_CASE("recommend: ties go to the lower miss ratio, Belady is best only when alone") {
  SimulationConfig o;
  o.policies = parse_policies("lru,fifo,belady");
  o.target_hit_ratio = 0.5;
  CacheSimResult r;
  r.records = {record("lru", 10, 45), record("fifo", 10, 40), record("belady", 5, 10)};
  auto set = recommend(r, o);
  REQUIRE(set.best);
  CHECK(set.best->policy == "fifo");
  CHECK(set.per_policy[2].offline_bound);
  CHECK(*set.per_policy[2].size == 5);

  o.policies = parse_policies("belady");
  r.records = {record("belady", 5, 10)};
  set = recommend(r, o);
  REQUIRE(set.best);
  CHECK(set.best->policy == "belady");
}

TEST_CASE("recommend: p99 target with one cost model and per model variant") {
  SimulationConfig o;
  o.policies = parse_policies("lru,lfu");
  o.target_p99_ms = 20;
  CacheSimResult r;
  r.records = {record("lru", 10, 50, 40.0), record("lru", 20, 30, 18.0), record("lfu", 10, 55, 19.0),
               record("lfu", 20, 40, 5.0)};
  auto set = recommend(r, o);
  REQUIRE(set.best);
  CHECK(set.best->policy == "lfu");  // more misses but cheaper ones: the latency target decides
  CHECK(*set.best->size == 10);
  CHECK(*set.best->p99_ms == 19.0);
  CHECK(set.target == "p99 <= 20 ms");

  ModelVariant fast, slow;
  fast.label = "fast.pt";
  slow.label = "slow.pt";
  o.variants = {fast, slow};
  o.policies = parse_policies("lru");
  SimRecord a = record("lru", 10, 50), b = record("lru", 20, 30);
  a.variants = {{"fast.pt", {0, 0, 10}}, {"slow.pt", {0, 0, 90}}};
  b.variants = {{"fast.pt", {0, 0, 8}}, {"slow.pt", {0, 0, 15}}};
  r.records = {a, b};
  set = recommend(r, o);
  REQUIRE(set.per_policy.size() == 2);
  CHECK(set.per_policy[0].variant == "fast.pt");
  CHECK(*set.per_policy[0].size == 10);
  CHECK(set.per_policy[1].variant == "slow.pt");
  CHECK(*set.per_policy[1].size == 20);
  CHECK(set.best->variant == "fast.pt");
}

TEST_CASE("recommend: --policy none --mrc answers from the one-pass LRU curve") {
  SimulationConfig o;
  o.policies = {};
  o.target_hit_ratio = 0.6;
  CacheSimResult r;
  MrcCurve c;
  c.points = {{10, 0.6, 0.6}, {30, 0.4, 0.4}};
  c.smallest_size_for_target = 30;
  r.mrc = c;
  auto set = recommend(r, o);
  REQUIRE(set.best);
  CHECK(set.best->policy == "lru");
  CHECK(*set.best->size == 30);
  CHECK(set.best->miss_ratio == doctest::Approx(0.4));
  r.mrc->smallest_size_for_target.reset();
  set = recommend(r, o);
  CHECK_FALSE(set.reached);
}
