// Properties every registered policy must have. These loop over the policy table, so a policy added
// to the table is tested the moment it is registered.
#include <algorithm>

#include "cache_test_util.hpp"

#include "lite/cache/policies.hpp"

using namespace cache_test;
using lite::cache::policy_table;
using lite::cache::simulate_requests;

namespace {
PolicySpec spec(const char* name) { return {name, {}}; }
}  // namespace

TEST_CASE("every policy: a trace of unique keys misses every request") {
  std::vector<Request> unique;
  for (uint64_t k = 0; k < 500; ++k) unique.push_back({k * 977 + 1, 1, 0, lite::cache::kNoNextAccess});
  for (const auto& e : policy_table()) {
    CAPTURE(std::string(e.name));
    for (uint64_t cap : {1, 7, 64, 1000}) {
      auto c = simulate_requests(spec(e.name), cap, unique);
      CHECK(c.n_req == 500);
      CHECK(c.n_miss == 500);
      CHECK(c.miss_ratio() == 1.0);
    }
  }
}

TEST_CASE("every policy: counters are consistent on a skewed trace") {
  auto trace = zipf(20000, 800, 0.9, 64, 7);
  uint64_t bytes = 0;
  std::vector<uint64_t> keys;
  for (const auto& r : trace) {
    bytes += r.size;
    keys.push_back(r.key);
  }
  std::sort(keys.begin(), keys.end());
  const uint64_t unique = static_cast<uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  for (const auto& e : policy_table()) {
    CAPTURE(std::string(e.name));
    for (uint64_t cap : {1, 10, 100, 2000}) {
      auto objects = trace;
      for (auto& r : objects) r.size = 1;
      auto c = simulate_requests(spec(e.name), cap, objects);
      CHECK(c.n_req == trace.size());
      CHECK(c.n_miss <= c.n_req);
      CHECK(c.n_miss >= unique);  // at least the compulsory misses
      CHECK(c.n_req_byte == c.n_req);  // object mode: every size is 1
      auto b = simulate_requests(spec(e.name), cap * 32, trace);
      CHECK(b.n_req_byte == bytes);
      CHECK(b.n_miss_byte <= b.n_req_byte);
      CHECK(b.n_miss <= b.n_req);
    }
  }
}

TEST_CASE("every policy: with room for the whole working set only first accesses miss") {
  auto trace = zipf(20000, 300, 1.0, 50, 11);
  std::vector<uint64_t> seen;
  uint64_t ws_bytes = 0;
  for (const auto& r : trace)
    if (std::find(seen.begin(), seen.end(), r.key) == seen.end()) {
      seen.push_back(r.key);
      ws_bytes += r.size;
    }
  for (const auto& e : policy_table()) {
    CAPTURE(std::string(e.name));
    auto objects = trace;
    for (auto& r : objects) r.size = 1;
    // SLRU's segments and LIRS's LIR/HIR split have fixed shares of the capacity (as in libCacheSim):
    // with the working set just fitting, a promotion can overflow a share and evict. With room for
    // the working set in the LIR part (and in every SLRU segment), only first accesses miss.
    const std::string name = e.name;
    const uint64_t room = name == "slru" ? 4 : name == "lirs" ? 2 : 1;
    // object mode: capacity = the working set (>= 20 so S3-FIFO's small queue admits objects)
    auto c = simulate_requests(spec(e.name), room * std::max<uint64_t>(seen.size(), 20), objects);
    CHECK(c.n_miss == seen.size());
    // byte mode: room for everything, and objects small against the 10% small queue
    auto b = simulate_requests(spec(e.name), room * std::max<uint64_t>(ws_bytes, 50 * 11), trace);
    CHECK(b.n_miss == seen.size());
    CHECK(b.n_miss_byte == ws_bytes);
  }
}

TEST_CASE("belady is optimal and lru has the inclusion property (object mode)") {
  auto trace = zipf(30000, 2000, 0.8, 1, 3);
  uint64_t prev_lru = UINT64_MAX, prev_opt = UINT64_MAX;
  for (uint64_t cap : {1, 2, 5, 10, 50, 100, 400, 1000, 2000}) {
    CAPTURE(cap);
    auto opt = simulate_requests(spec("belady"), cap, trace);
    for (const auto& e : policy_table()) {
      CAPTURE(std::string(e.name));
      CHECK(opt.n_miss <= simulate_requests(spec(e.name), cap, trace).n_miss);
    }
    auto lru = simulate_requests(spec("lru"), cap, trace);
    CHECK(lru.n_miss <= prev_lru);
    CHECK(opt.n_miss <= prev_opt);
    prev_lru = lru.n_miss;
    prev_opt = opt.n_miss;
  }
}

TEST_CASE("the policy table: unique names, parameters with sane defaults, factories") {
  std::vector<std::string> names;
  for (const auto& e : policy_table()) {
    CAPTURE(std::string(e.name));
    CHECK(std::find(names.begin(), names.end(), std::string(e.name)) == names.end());
    names.push_back(e.name);
    CHECK(std::string(e.description).size() > 10);
    CHECK(static_cast<bool>(e.make));
    for (const auto& p : e.params) {
      CHECK(p.default_value >= p.min_value);
      CHECK(p.default_value <= p.max_value);
    }
  }
  for (const char* required : {"lru", "fifo", "lfu", "arc", "2q", "s3fifo", "sieve", "clock", "belady"})
    CHECK(std::find(names.begin(), names.end(), std::string(required)) != names.end());
}
