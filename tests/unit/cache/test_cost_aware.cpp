// Cost-aware eviction on the bundled inference trace (data/inference_requests.csv: per-request miss
// cost in ms and result sizes), total miss cost beside the miss ratio, and the honest-sampling
// fields: scaled size, error estimate, the warning for small sampled caches.
#include <algorithm>
#include <sstream>

#include "cache_test_util.hpp"

using namespace cache_test;
using namespace lite::cache;

namespace {

SimulationConfig bundled(const std::string& policies, const std::string& sizes, bool bytes) {
  SimulationConfig o;
  o.trace = std::string(LITE_DATA_DIR) + "/inference_requests.csv";
  o.policies = parse_policies(policies);
  o.sizes = parse_sizes(sizes, bytes);
  o.bytes = bytes;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("cost-aware GDSF beats LRU on mean latency when miss costs vary") {
  for (bool bytes : {false, true}) {
    CAPTURE(bytes);
    auto o = bundled("lru,gdsf:cost=1,freq=0,gdsf:cost=1", "5%,10%,20%,40%", bytes);
    auto r = simulate(o);
    REQUIRE(r.cost_model == "cost column");
    REQUIRE(r.records.size() == 12);
    REQUIRE(r.trace.total_cost_s.has_value());
    for (size_t s = 0; s < 4; ++s) {
      const auto& lru = r.records[s];
      const auto& gds = r.records[4 + s];
      const auto& gdsf = r.records[8 + s];
      CAPTURE(lru.size);
      CHECK(gds.latency->mean_ms < lru.latency->mean_ms);
      CHECK(gdsf.latency->mean_ms < lru.latency->mean_ms);
      CHECK(*gds.miss_cost_s < *lru.miss_cost_s);
      // miss cost + saved = the cost of every request with no cache
      CHECK(*lru.miss_cost_s + *lru.saved_cost_s == doctest::Approx(*r.trace.total_cost_s));
      // with hit latency 0 the mean latency is the miss cost spread over all requests
      CHECK(lru.latency->mean_ms == doctest::Approx(*lru.miss_cost_s * 1000 / double(lru.counters.n_req)).epsilon(1e-6));
    }
  }
}

TEST_CASE("cost-aware GreedyDual equals LRU when miss costs are constant") {
  auto o = bundled("lru,gdsf:cost=1,freq=0", "1%,5%,10%,20%,40%", false);
  o.miss_latency_ms = 40;  // one miss latency: the trace's cost column is not read
  auto r = simulate(o);
  REQUIRE(r.cost_model == "constant");
  for (size_t s = 0; s < 5; ++s) {
    CAPTURE(r.records[s].size);
    CHECK(r.records[5 + s].counters.n_miss == r.records[s].counters.n_miss);
    CHECK(r.records[5 + s].latency->mean_ms == r.records[s].latency->mean_ms);
    CHECK(*r.records[s].miss_cost_s == doctest::Approx(double(r.records[s].counters.n_miss) * 0.040));
  }
}

TEST_CASE("--target-p99 picks between cost-aware and cost-blind policies by their latency") {
  auto o = bundled("lru,gdsf:cost=1,freq=0", "5%,10%,20%,30%,40%,60%,80%", false);
  auto r = simulate(o);
  double target = 0;  // a p99 the cost-aware policy reaches at a smaller size than LRU
  for (size_t s = 0; s < 7 && target == 0; ++s)
    if (r.records[7 + s].latency->p99_ms < r.records[s].latency->p99_ms) target = r.records[7 + s].latency->p99_ms;
  REQUIRE(target > 0);
  o.target_p99_ms = target;
  auto t = simulate(o);
  REQUIRE(t.recommendation.has_value());
  REQUIRE(t.recommendation->best.has_value());
  CHECK(t.recommendation->best->policy == "gdsf:cost=1,freq=0");
}

TEST_CASE("sampling: scaled size, error estimate, and the small-sample warning exactly when it is small") {
  ScratchDir d;
  auto trace = zipf(300000, 60000, 0.9, 1, 17);
  std::ostringstream s;
  for (const auto& r : trace) s << r.key << "\n";
  auto path = d.file("z.txt", s.str());
  SimulationConfig o;
  o.trace = path;
  o.policies = parse_policies("lru");
  o.sizes = parse_sizes("500,9999,10000,30000", false);
  o.sample_rate = 0.01;
  o.threads = 1;
  auto r = simulate(o);
  REQUIRE(r.records.size() == 4);
  CHECK(r.records[0].simulated_size == 5);
  CHECK(r.records[0].small_sample);
  CHECK(r.records[1].simulated_size == 99);
  CHECK(r.records[1].small_sample);
  CHECK(r.records[2].simulated_size == 100);
  CHECK_FALSE(r.records[2].small_sample);
  CHECK_FALSE(r.records[3].small_sample);
  for (const auto& rec : r.records) {
    REQUIRE(rec.miss_ratio_error.has_value());
    CHECK(*rec.miss_ratio_error > 0);
    CHECK(*rec.miss_ratio_error < 0.05);
  }
  auto rep = to_report(r);
  auto warning = std::find_if(rep.findings.begin(), rep.findings.end(),
                              [](const auto& f) { return f.what.find("sampled cache under 100") != std::string::npos; });
  REQUIRE(warning != rep.findings.end());
  CHECK(warning->what.find("2 of the sampled sizes") != std::string::npos);
  CHECK(warning->advice.find("rate >= 0.2") != std::string::npos);  // 100 / 500
  CHECK(rep.result["records"][0]["small_sample"] == true);

  o.sizes = parse_sizes("10000,30000", false);
  auto big = simulate(o);
  auto rep2 = to_report(big);
  CHECK(std::none_of(rep2.findings.begin(), rep2.findings.end(),
                     [](const auto& f) { return f.what.find("sampled cache under") != std::string::npos; }));
  o.sample_rate = 1.0;  // no sampling: no estimate, no flag
  auto full = simulate(o);
  CHECK_FALSE(full.records[0].miss_ratio_error.has_value());
  CHECK_FALSE(full.records[0].small_sample);
}
