// simulate() end to end on trace files: batching and threads change nothing, sizes, targets, cost
// models, sampling check, errors, JSON record fields, the SVG plot, Ctrl-C.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <unordered_map>

#include "cache_test_util.hpp"
#include "lite/cache/object_table_internal.hpp"
#include "lite/cache/policies.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

using namespace cache_test;
using namespace lite::cache;

namespace {

std::string write_txt(const ScratchDir& d, const std::vector<Request>& trace, const std::string& name = "t.txt") {
  std::ostringstream s;
  for (const auto& r : trace) s << r.key << "\n";
  return d.file(name, s.str());
}

SimulationConfig options(const std::string& path, const std::string& policies, const std::string& sizes, bool bytes = false) {
  SimulationConfig o;
  o.trace = path;
  o.policies = parse_policies(policies);
  o.sizes = parse_sizes(sizes, bytes);
  o.bytes = bytes;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("batches of 16K requests and 1 or 2 threads give exactly the in-memory results") {
  ScratchDir d;
  auto trace = zipf(150000, 5000, 0.9, 1, 41);  // > 2 batches
  auto path = write_txt(d, trace);
  for (int threads : {1, 2}) {
    auto o = options(path, "all", "10,300,2000");
    o.threads = threads;
    auto r = simulate(o);
    CHECK(r.threads == threads);
    REQUIRE(r.records.size() == policy_table().size() * 3);
    for (const auto& rec : r.records) {
      CAPTURE(rec.policy);
      CAPTURE(rec.size);
      auto expect = simulate_requests(parse_policies(rec.policy)[0], rec.size, trace);
      CHECK(rec.counters.n_req == expect.n_req);
      CHECK(rec.counters.n_miss == expect.n_miss);
    }
  }
}

TEST_CASE("one simulation with 2 threads: the reader runs beside its worker and the counts stay exact") {
  ScratchDir d;
  auto trace = zipf(150000, 5000, 0.9, 1, 47);  // > 2 batches, so both buffers are refilled
  auto path = write_txt(d, trace);
  for (const char* policy : {"lru", "wtinylfu", "lirs"}) {
    CAPTURE(policy);
    auto o = options(path, policy, "300");
    o.threads = 2;
    auto r = simulate(o);
    CHECK(r.threads == 1);  // one simulation: one worker (the reader is the calling thread)
    REQUIRE(r.records.size() == 1);
    auto expect = simulate_requests(parse_policies(policy)[0], 300, trace);
    CHECK(r.records[0].counters.n_req == expect.n_req);
    CHECK(r.records[0].counters.n_miss == expect.n_miss);
  }
}

TEST_CASE("sizes: auto fractions of the working set, explicit fractions, sorted and deduplicated") {
  ScratchDir d;
  auto trace = zipf(5000, 1000, 0.8, 1, 43);
  std::vector<uint64_t> keys;
  for (const auto& r : trace) keys.push_back(r.key);
  std::sort(keys.begin(), keys.end());
  const uint64_t ws = static_cast<uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  auto path = write_txt(d, trace);
  auto r = simulate(options(path, "lru", "auto"));
  REQUIRE(r.trace.n_obj.has_value());
  CHECK(*r.trace.n_obj == ws);
  std::vector<uint64_t> expect;
  for (double f : auto_size_fractions()) {
    uint64_t s = static_cast<uint64_t>(double(ws) * f);
    if (s > 0 && (expect.empty() || expect.back() != s)) expect.push_back(s);
  }
  std::vector<uint64_t> got;
  for (const auto& rec : r.records) got.push_back(rec.size);
  CHECK(got == expect);
  CHECK(r.records.back().counters.n_miss == ws);  // the whole working set: compulsory misses only
  auto f = simulate(options(path, "lru", "50%,100,0.5"));
  REQUIRE(f.records.size() == 2);  // 50% and 0.5 are the same size
  CHECK(f.records[0].size == 100);
  CHECK(f.records[1].size == ws / 2);
}

TEST_CASE("errors: empty trace, only zero sizes, a fraction that rounds to nothing") {
  ScratchDir d;
  auto e = d.file("empty.txt", "");
  try {
    simulate(options(e, "lru", "10"));
    FAIL("expected an error");
  } catch (const lite::InputError& err) {
    CHECK(std::string(err.what()).find("empty.txt: the trace has no requests") != std::string::npos);
  }
  auto z = d.file("zeros.csv", "key,size\na,0\nb,0\n");
  try {
    simulate(options(z, "lru", "10", true));
    FAIL("expected an error");
  } catch (const lite::InputError& err) {
    CHECK(std::string(err.what()).find("2 of size 0 were skipped") != std::string::npos);
  }
  auto small = write_txt(d, zipf(100, 10, 1.0, 1, 1));
  CHECK_THROWS_AS(simulate(options(small, "lru", "0.001")), lite::UsageError);
}

TEST_CASE("targets: smallest size per policy, the best policy, exit status 1 when unreachable") {
  ScratchDir d;
  auto trace = zipf(30000, 2000, 1.0, 1, 47);
  auto path = write_txt(d, trace);
  auto o = options(path, "lru,fifo,belady", "10,100,500,2000");
  o.target_hit_ratio = 0.6;
  auto r = simulate(o);
  REQUIRE(r.recommendation.has_value());
  CHECK(r.recommendation->reached);
  for (const auto& rec : r.recommendation->per_policy) {
    CAPTURE(rec.policy);
    REQUIRE(rec.size.has_value());
    auto at = simulate_requests(parse_policies(rec.policy)[0], *rec.size, trace);
    CHECK(1 - at.miss_ratio() >= 0.6);
  }
  // Belady (offline: it needs the future) is the bound, never the recommendation...
  CHECK(r.recommendation->best->policy != "belady");
  CHECK(*r.recommendation->per_policy[2].size <= *r.recommendation->best->size);
  CHECK(r.gates.passed());
  // ...unless it is the only policy simulated
  auto only = options(path, "belady", "10,100,500,2000");
  only.target_hit_ratio = 0.6;
  CHECK(simulate(only).recommendation->best->policy == "belady");
  o.target_hit_ratio = 0.999;
  auto miss = simulate(o);
  CHECK_FALSE(miss.recommendation->reached);
  CHECK(miss.gates.failed == std::vector<std::string>{"target"});
  auto rep = to_report(miss);
  REQUIRE_FALSE(rep.findings.empty());
  CHECK(rep.findings[0].severity == "warning");
}

TEST_CASE("cost models: constant, cost column, p99 target") {
  ScratchDir d;
  std::string csv = "key,size,cost\n";
  for (int i = 0; i < 400; ++i) csv += std::to_string(i % 40) + ",10," + std::to_string(5 + i % 7) + "\n";
  auto path = d.file("c.csv", csv);
  auto o = options(path, "lru", "10,40");
  auto r = simulate(o);
  CHECK(r.cost_model == "cost column");
  REQUIRE(r.records[1].latency.has_value());
  // 40 objects fit in 40: only the 40 first requests miss, with costs 5..11
  CHECK(r.records[1].counters.n_miss == 40);
  CHECK(r.records[1].latency->p50_ms == 0.0);
  o.miss_latency_ms = 100;
  o.hit_latency_ms = 1;
  o.target_p99_ms = 50;
  auto c = simulate(o);
  CHECK(c.cost_model == "constant");
  CHECK(c.records[1].latency->p99_ms == 100.0);  // 10% misses
  CHECK_FALSE(c.recommendation->reached);
  o.target_p99_ms = std::nullopt;
  o.csv = parse_csv_columns("key=1,size=2,cost=3");
  CHECK_THROWS_AS(simulate(o), lite::UsageError);  // two miss-latency sources
}

TEST_CASE("sampling: SHARDS fixed rate with a full-trace check, fixed size") {
  ScratchDir d;
  auto trace = zipf(200000, 40000, 0.8, 1, 53);
  auto path = write_txt(d, trace);
  auto o = options(path, "lru,s3fifo", "1000,5000,20000");
  o.sample_rate = 0.1;
  o.sample_check = true;
  auto r = simulate(o);
  REQUIRE(r.sampling_check.has_value());
  MESSAGE("fixed-rate 0.1: mean |error| " << r.sampling_check->mean_abs_error << ", max " << r.sampling_check->max_abs_error);
  CHECK(r.sampling_check->max_abs_error < 0.05);
  CHECK(r.trace.n_req < r.trace.n_req_total);
  for (const auto& rec : r.records) {
    CHECK(rec.sampled);
    CHECK(rec.simulated_size == rec.size / 10);
    REQUIRE(rec.full.has_value());
    CHECK(rec.full->n_req == trace.size());
    CHECK(rec.counters.n_req == trace.size());  // full-trace estimate
    REQUIRE(rec.sampled_counters.has_value());
    CHECK(rec.sampled_counters->n_req == r.trace.n_req);
    // misses scale by the rate the sample achieved over objects, not the nominal 0.1
    REQUIRE(r.trace.achieved_rate.has_value());
    CHECK(rec.counters.n_miss == uint64_t(std::llround(double(rec.sampled_counters->n_miss) / *r.trace.achieved_rate)));
  }
  // the achieved rate: sampled objects (exact) over all objects (estimated in the main pass: no scan ran)
  std::set<uint64_t> all;
  for (const auto& req : trace) all.insert(req.key);
  uint64_t sampled = 0;
  for (uint64_t k : all) sampled += lite::cache::detail::hash_key(k) < lite::cache::detail::threshold_for(0.1);
  REQUIRE(r.trace.n_obj_sampled.has_value());
  CHECK(*r.trace.n_obj_sampled == sampled);
  CHECK(*r.trace.achieved_rate == doctest::Approx(double(sampled) / double(all.size())).epsilon(0.005));
  CHECK(*r.trace.achieved_rate != 0.1);
  auto f = options(path, "lru", "1000,5000,20000");
  f.sample_objects = 4000;
  f.sample_check = true;
  f.mrc = true;
  auto fr = simulate(f);
  CHECK(fr.trace.sampling == "fixed-size");
  CHECK(fr.sampling_check->max_abs_error < 0.05);
  REQUIRE(fr.mrc.has_value());
}

TEST_CASE("belady on a format without next-access computes it in a backward pass") {
  ScratchDir d;
  auto trace = zipf(100000, 3000, 0.9, 1, 59);
  auto path = write_txt(d, trace);
  auto r = simulate(options(path, "belady", "50,500"));
  CHECK(r.passes == 3);
  for (const auto& rec : r.records)
    CHECK(rec.counters.n_miss == simulate_requests({"belady", {}}, rec.size, trace).n_miss);
}

TEST_CASE("belady on oracleGeneral from stdin reads the trace once: next accesses come with it, no spool") {
  ScratchDir d;
  auto trace = zipf(20000, 500, 0.9, 1, 67);
  std::vector<int64_t> next(trace.size(), -1);  // oracleGeneral: 1-based index of the next access, -1 for none
  std::unordered_map<uint64_t, int64_t> last;
  for (size_t i = trace.size(); i-- > 0;) {
    if (auto it = last.find(trace[i].key); it != last.end()) next[i] = it->second;
    last[trace[i].key] = static_cast<int64_t>(i + 1);
  }
  std::string bin;
  for (size_t i = 0; i < trace.size(); ++i) {
    char rec[24];
    const uint32_t time = static_cast<uint32_t>(i), size = 1;
    std::memcpy(rec, &time, 4);
    std::memcpy(rec + 4, &trace[i].key, 8);
    std::memcpy(rec + 12, &size, 4);
    std::memcpy(rec + 16, &next[i], 8);
    bin.append(rec, sizeof rec);
  }
  const std::string path = d.file("t.oracleGeneral.bin", bin);
  auto o = options("-", "belady", "50,200");
  o.format = TraceFormat::oracle_general;
  const int saved_stdin = ::dup(0);
  const int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  ::dup2(fd, 0);
  ::close(fd);
  CacheSimResult r;
  try {
    r = simulate(o);
  } catch (...) {
    ::dup2(saved_stdin, 0);
    throw;
  }
  ::dup2(saved_stdin, 0);
  ::close(saved_stdin);
  CHECK(r.passes == 1);
  for (const auto& note : r.notes) CHECK(note.find("stdin was copied") == std::string::npos);
  for (const auto& rec : r.records)
    CHECK(rec.counters.n_miss == simulate_requests({"belady", {}}, rec.size, trace).n_miss);
}

TEST_CASE("--mrc through simulate: the curve at the requested sizes equals the simulated LRU rows") {
  ScratchDir d;
  auto path = write_txt(d, zipf(50000, 2000, 0.9, 1, 61));
  auto o = options(path, "lru", "1,10,100,1000,2000");
  o.mrc = true;
  auto r = simulate(o);
  REQUIRE(r.mrc.has_value());
  for (size_t i = 0; i < r.records.size(); ++i) CHECK(r.mrc->at_sizes[i].miss_ratio == doctest::Approx(r.records[i].counters.miss_ratio()).epsilon(1e-12));
}

TEST_CASE("JSON records carry the stable field names, the report and the SVG render") {
  ScratchDir d;
  auto path = write_txt(d, zipf(3000, 300, 1.0, 1, 67));
  auto o = options(path, "lru,s3fifo", "20,100");
  o.miss_latency_ms = 20;
  o.mrc = true;
  auto r = simulate(o);
  nlohmann::json j = r;
  REQUIRE(j["records"].size() == 4);
  for (const char* k : {"policy", "size", "n_req", "n_miss", "miss_ratio", "n_req_byte", "n_miss_byte", "byte_miss_ratio"})
    CHECK(j["records"][0].contains(k));
  CHECK(j["records"][0]["latency_ms"].contains("p99"));
  auto rep = to_report(r);
  CHECK(rep.result["options"]["policies"][1] == "s3fifo");
  auto svg = render_svg(r);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("s3fifo") != std::string::npos);
  CHECK(svg.find("polyline") != std::string::npos);
}

TEST_CASE("Ctrl-C: a long simulation stops with lite::Interrupted") {
  ScratchDir d;
  auto path = write_txt(d, zipf(1000, 100, 1.0, 1, 71));
  lite::request_interrupt_for_testing(true);
  CHECK_THROWS_AS(simulate(options(path, "lru", "10")), lite::Interrupted);
  lite::request_interrupt_for_testing(false);
}

TEST_CASE("usage errors in option combinations") {
  ScratchDir d;
  auto path = write_txt(d, zipf(1000, 100, 1.0, 1, 73));
  auto o = options(path, "lru", "10");
  o.sample_rate = 1.5;
  CHECK_THROWS_AS(simulate(o), lite::UsageError);
  o = options(path, "lru", "10");
  o.sample_check = true;
  CHECK_THROWS_AS(simulate(o), lite::UsageError);
  o = options(path, "lru", "10");
  o.target_p99_ms = 5;
  CHECK_THROWS_AS(simulate(o), lite::UsageError);  // no miss latency
  o = options(path, "lru", "10");
  o.csv = parse_csv_columns("key=1");
  CHECK_THROWS_AS(simulate(o), lite::UsageError);  // csv columns on a txt trace
}
