// Determinism (issue 14): the same cache-sim job gives identical counts whatever the thread count, for every
// policy in the table, in object and byte mode, on the shared cloudPhysics trace. Threads split the policy x
// size simulators among themselves; each simulator still sees every request in trace order, so any difference
// would be a data race or shared state between simulators. Skipped (doctest::skip) when ../shared is absent.
#include <cstdlib>
#include <filesystem>

#include "cache_test_util.hpp"
#include "lite/cache/policies.hpp"

using namespace lite::cache;

namespace {

std::filesystem::path shared_trace() {
  const std::filesystem::path dir = std::getenv("LITE_SHARED_DIR")
                                        ? std::filesystem::path(std::getenv("LITE_SHARED_DIR")) / "data" / "traces"
                                        : std::filesystem::path(LITE_SHARED_TRACES);
  return dir / "cloudPhysicsIO.oracleGeneral.bin";
}

bool shared_trace_missing() { return !std::filesystem::exists(shared_trace()); }

CacheSimResult run_with_threads(bool bytes, int threads) {
  SimulationConfig o;
  o.trace = shared_trace().string();
  o.policies = parse_policies("all");
  o.sizes = parse_sizes(bytes ? "0.001,0.01,0.1,64MiB" : "0.001,0.01,0.1,5000", bytes);
  o.bytes = bytes;
  o.threads = threads;
  return simulate(o);
}

}  // namespace

TEST_CASE("cache-sim counts are identical with 1 and 2 threads, for every policy, objects and bytes" *
          doctest::skip(shared_trace_missing()) *
          doctest::description("needs ../shared/data/traces/cloudPhysicsIO.oracleGeneral.bin; skipped when absent")) {
  for (bool bytes : {false, true}) {
    CAPTURE(bytes);
    const CacheSimResult one = run_with_threads(bytes, 1);
    const CacheSimResult two = run_with_threads(bytes, 2);
    CHECK(two.threads == 2);
    REQUIRE(one.records.size() == policy_table().size() * 4);
    REQUIRE(one.records.size() == two.records.size());
    for (size_t i = 0; i < one.records.size(); ++i) {
      const SimRecord& a = one.records[i];
      const SimRecord& b = two.records[i];
      CAPTURE(a.policy);
      CAPTURE(a.size);
      CHECK(a.policy == b.policy);
      CHECK(a.size == b.size);
      CHECK(a.counters.n_req == b.counters.n_req);
      CHECK(a.counters.n_miss == b.counters.n_miss);
      CHECK(a.counters.n_req_byte == b.counters.n_req_byte);
      CHECK(a.counters.n_miss_byte == b.counters.n_miss_byte);
      CHECK(a.counters.n_miss > 0);  // a real simulation, not two empty results that agree
    }
  }
}
