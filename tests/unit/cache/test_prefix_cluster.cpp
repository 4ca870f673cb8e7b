// A cluster of prefix-cache instances (--instances K --route NAME, docs/cache-sim.md "Cluster of instances"):
// two instances on hand-made traces worked out by hand, each router against the global pool.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>

#include "prefix_trace_spec.hpp"
#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

using namespace lite::cache::prefix;

namespace {

using testing::mooncake;

// Two instances of `capacity` blocks in all, behind `route` ("global": one pool).
PrefixRow cluster(const BlockTrace& t, const std::string& route, uint64_t capacity = 4,
                  std::optional<PrefillModel> prefill = std::nullopt) {
  ReplaySetup s;
  s.trace = &t;
  s.policy = &find_prefix_policy("lru");
  s.capacity_blocks = capacity;
  s.instances = 2;
  s.cluster = true;
  s.prefill = prefill;
  s.route = route == "global" ? nullptr : &find_prefix_route(route);
  return replay(s);
}

std::vector<uint64_t> requests_per_instance(const PrefixRow& r) {
  std::vector<uint64_t> n;
  for (const auto& l : r.instances) n.push_back(l.requests);
  return n;
}

}  // namespace

TEST_CASE("two instances: prefix-affinity keeps each conversation where its prefix is, least-loaded does not") {
  // two conversations of two turns, interleaved: A = blocks 1,2 and B = 3,4; each local pool holds 2 blocks
  const BlockTrace t = mooncake("0:8:1,2 1:8:3,4 2:8:1,2 3:8:3,4");
  // prefix-affinity: r0, r1 cold (to the least loaded: 0, then 1); r2 finds A on 0, r3 finds B on 1
  PrefixRow r = cluster(t, "prefix-affinity");
  CHECK(r.route == "prefix-affinity");
  CHECK(r.hit_tokens == 16);
  CHECK(requests_per_instance(r) == std::vector<uint64_t>{2, 2});
  CHECK(r.instances[0].hit_tokens == 8);
  CHECK(r.instances[1].hit_tokens == 8);
  CHECK(r.capacity_blocks == 4);
  // least-loaded by prefill tokens: r0 -> 0 (8), r1 -> 1 (8), r2 -> 0 on the tie, hits A (still 8), r3 -> 0 on the
  // tie again, misses B there and evicts A
  r = cluster(t, "least-loaded");
  CHECK(r.hit_tokens == 8);
  CHECK(requests_per_instance(r) == std::vector<uint64_t>{3, 1});
  CHECK(r.instances[0].prefill_tokens() == 16);
  CHECK(r.instances[1].prefill_tokens() == 8);
  // round-robin alternates, which here is the conversations' own order
  r = cluster(t, "round-robin");
  CHECK(r.hit_tokens == 16);
  CHECK(requests_per_instance(r) == std::vector<uint64_t>{2, 2});
  // session: a conversation's turns share their first block, so they meet on one instance; splitmix64 of the
  // first blocks' ids (0 for A, 2 for B) is odd for A and even for B: A on instance 1, B on 0
  r = cluster(t, "session");
  CHECK(r.hit_tokens == 16);
  CHECK(requests_per_instance(r) == std::vector<uint64_t>{2, 2});
  CHECK(r.instances[1].hit_tokens == 8);
  // the global pool of 4 blocks holds both conversations
  r = cluster(t, "global");
  CHECK(r.route == "global");
  CHECK(r.hit_tokens == 16);
  CHECK(r.capacity_blocks == 4);
}

TEST_CASE("a prefix shared across instances: what the global pool buys over local pools") {
  // r1 shares r0's first block; round-robin puts it on the other instance, where nothing is cached
  const BlockTrace t = mooncake("0:8:1,2 1:8:1,3");
  CHECK(cluster(t, "round-robin").hit_tokens == 0);
  CHECK(cluster(t, "global").hit_tokens == 4);
  CHECK(cluster(t, "prefix-affinity").hit_tokens == 4);  // follows the prefix to instance 0
  // local pools of floor(5 / 2) = 2 blocks: the row's capacity is what the pools hold
  CHECK(cluster(t, "round-robin", 5).capacity_blocks == 4);
  CHECK(cluster(t, "global", 5).capacity_blocks == 5);
}

TEST_CASE("random routing is seeded, and each local instance queues its own prefills") {
  const BlockTrace t = mooncake("0:8:1,2 0:8:3,4 0:8:5,6 0:8:7,8 0:8:9,10 0:8:11,12");
  const PrefixRow a = cluster(t, "random"), b = cluster(t, "random");
  CHECK(requests_per_instance(a) == requests_per_instance(b));
  CHECK(a.instances[0].requests + a.instances[1].requests == 6);
  // round-robin, all arriving at 0, 1 ms per token: each instance serves 3 requests of 8 ms in turn: 8, 16, 24
  const PrefixRow q = cluster(t, "round-robin", 4, PrefillModel{0, 1, 0});
  CHECK(*q.ttft_mean_ms == doctest::Approx(16));
  CHECK(*q.ttft_p99_ms == doctest::Approx(24).epsilon(0.01));
}

TEST_CASE("--route in the prefix mode: the routes, 'all', and what it needs") {
  CHECK(parse_prefix_routes("all").size() == 5);
  CHECK(parse_prefix_routes("session, prefix-affinity").size() == 2);
  CHECK_THROWS_AS(parse_prefix_routes("prefix-afinity"), lite::OptionError);
  PrefixConfig c;
  c.routes = "round-robin";
  c.instances = 1;
  CHECK_THROWS_AS(check_config(c), lite::OptionError);  // one instance is no cluster
  c.instances = 2;
  CHECK_NOTHROW(check_config(c));  // no prefill model needed: hits and load need no timing
  c.tiers = "hbm=10";
  CHECK_THROWS_AS(check_config(c), lite::OptionError);
}
