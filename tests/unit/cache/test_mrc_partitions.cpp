// Key-partitioned LRU curves (--mrc-partitions): the partitions cover every key once, one partition is the
// exact curve, N partitions estimate it within a bound, and the combination does not depend on the order
// or the process the partitions came from.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "cache_test_util.hpp"
#include "lite/cache/mrc_internal.hpp"
#include "lite/cache/mrc_partitions.hpp"
#include "lite/cache/object_table_internal.hpp"
#include "lite/cache/options.hpp"
#include "lite/core/options.hpp"

using namespace cache_test;
using namespace lite::cache;
using lite::cache::detail::hash_key;

namespace {

detail::Batch batch_of(const std::vector<Request>& trace, bool bytes) {
  detail::Batch b;
  b.reserve(trace.size());
  for (const auto& r : trace) {
    b.key[b.n] = r.key;
    b.hash[b.n] = hash_key(r.key);
    b.size[b.n] = bytes ? r.size : 1;
    ++b.n;
  }
  return b;
}

PartitionCurve partition_curve(const std::vector<Request>& trace, const std::vector<uint64_t>& sizes, size_t p, size_t n,
                               bool bytes = false) {
  detail::LruProfiler prof(bytes, sizes);
  const HashRange r = partition_range(p, n);
  prof.keep_hashes(r.lo, r.width);
  prof.run(batch_of(trace, bytes));
  return {p, prof.sampled_requests(), prof.sampled_bytes(), prof.finish(0, std::nullopt, prof.shared_grid())};
}

// What one process computes with --mrc-partitions n.
MrcCurve partitioned(const std::vector<Request>& trace, const std::vector<uint64_t>& sizes, size_t n, bool bytes = false) {
  std::vector<PartitionCurve> parts;
  for (size_t p = 0; p < n; ++p) parts.push_back(partition_curve(trace, sizes, p, n, bytes));
  return combine_partitions(std::move(parts), n, std::nullopt);
}

std::string write_txt(const ScratchDir& d, const std::vector<Request>& trace) {
  std::ostringstream s;
  for (const auto& r : trace) s << r.key << "\n";
  return d.file("t.txt", s.str());
}

}  // namespace

TEST_CASE("key partitions cover every hash exactly once, and partition_of agrees with the ranges") {
  for (size_t n : {1, 2, 3, 4, 7, 8, 100, 256}) {
    CAPTURE(n);
    std::vector<uint64_t> hashes = {0, 1, UINT64_MAX, UINT64_MAX - 1, uint64_t(1) << 63};
    for (size_t p = 0; p < n; ++p) {  // both sides of every boundary
      const HashRange r = partition_range(p, n);
      hashes.push_back(r.lo);
      hashes.push_back(r.lo - 1);
      hashes.push_back(r.lo + r.width - 1);
    }
    for (uint64_t k = 0; k < 20000; ++k) hashes.push_back(hash_key(k * 7919 + 13));
    for (uint64_t h : hashes) {
      size_t holders = 0, holder = n;
      for (size_t p = 0; p < n; ++p) {
        const HashRange r = partition_range(p, n);
        if (r.width == UINT64_MAX || h - r.lo < r.width) ++holders, holder = p;
      }
      CAPTURE(h);
      REQUIRE(holders == 1);
      REQUIRE(partition_of(h, n) == holder);
    }
    // the widths add up to 2^64, each within one of 2^64 / n
    unsigned __int128 total = 0;
    for (size_t p = 0; p < n; ++p) total += n == 1 ? (unsigned __int128)(1) << 64 : partition_range(p, n).width;
    CHECK(total == ((unsigned __int128)(1) << 64));
  }
  CHECK(partitions_of_process(8, 1, 3) == std::vector<size_t>{1, 4, 7});
  CHECK(partitions_of_process(2, 3, 4).empty());
}

TEST_CASE("one key partition is the exact curve, at the requested sizes and on the grid") {
  auto trace = zipf(60000, 3000, 0.9, 1, 5);
  std::vector<uint64_t> sizes = {1, 10, 100, 500, 1000, 3000};
  auto exact = lru_curve_requests(trace, sizes, false);
  auto one = partitioned(trace, sizes, 1);
  REQUIRE(one.at_sizes.size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(sizes[i]);
    CHECK(one.at_sizes[i].miss_ratio == doctest::Approx(exact[i].miss_ratio()).epsilon(1e-12));
    CHECK(one.partitions->at_sizes[i].min == doctest::Approx(one.at_sizes[i].miss_ratio).epsilon(1e-12));
    CHECK(one.partitions->at_sizes[i].std_error == 0);
  }
  CHECK(one.n_req == trace.size());
  // on the grid too (3000 keys: every size up to the largest distance)
  detail::LruProfiler whole(false, sizes);
  whole.run(batch_of(trace, false));
  const MrcCurve reference = whole.finish(0, std::nullopt);
  REQUIRE(one.points.size() == reference.points.size());
  for (size_t i = 0; i < one.points.size(); ++i) {
    CHECK(one.points[i].size == reference.points[i].size);
    CHECK(one.points[i].miss_ratio == doctest::Approx(reference.points[i].miss_ratio).epsilon(1e-12));
  }
}

TEST_CASE("2, 4 and 8 key partitions estimate the exact curve within 0.002 mean and 0.01 max") {
  auto trace = zipf(400000, 60000, 0.8, 1, 29);
  std::vector<uint64_t> sizes = {100, 300, 1000, 3000, 10000, 30000, 60000};
  auto exact = lru_curve_requests(trace, sizes, false);
  for (size_t n : {2, 4, 8}) {
    auto c = partitioned(trace, sizes, n);
    double sum = 0, worst = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      const double e = std::fabs(c.at_sizes[i].miss_ratio - exact[i].miss_ratio());
      sum += e, worst = std::max(worst, e);
      const MrcSpread& s = c.partitions->at_sizes[i];
      CHECK(s.min <= c.at_sizes[i].miss_ratio + 1e-12);
      CHECK(c.at_sizes[i].miss_ratio <= s.max + 1e-12);
    }
    MESSAGE(n << " partitions: mean |error| " << sum / double(sizes.size()) << ", max " << worst);
    CHECK(sum / double(sizes.size()) < 0.002);
    CHECK(worst < 0.01);
    uint64_t requests = 0;
    for (uint64_t r : c.partitions->requests) requests += r;
    CHECK(requests == trace.size());
  }
}

TEST_CASE("key partitions in byte mode: the combined byte miss ratio weighs each partition by its bytes") {
  auto trace = zipf(100000, 4000, 0.9, 400, 17);
  uint64_t largest = 0;
  for (const auto& r : trace) largest = std::max<uint64_t>(largest, r.size);
  std::vector<uint64_t> sizes = {largest * 4, largest * 40, largest * 400};
  auto exact = lru_curve_requests(trace, sizes, true);
  auto one = partitioned(trace, sizes, 1, true);
  auto four = partitioned(trace, sizes, 4, true);
  for (size_t i = 0; i < sizes.size(); ++i) {
    CAPTURE(sizes[i]);
    CHECK(one.at_sizes[i].byte_miss_ratio == doctest::Approx(exact[i].byte_miss_ratio()).epsilon(1e-9));
    CHECK(std::fabs(four.at_sizes[i].byte_miss_ratio - exact[i].byte_miss_ratio()) < 0.03);
  }
}

TEST_CASE("the combination does not depend on the order or on a JSON round trip (what lite-mpi ranks send)") {
  auto trace = zipf(50000, 8000, 0.9, 1, 3);
  std::vector<uint64_t> sizes = {50, 500, 5000};
  std::vector<PartitionCurve> parts, sent;
  for (size_t p = 0; p < 4; ++p) parts.push_back(partition_curve(trace, sizes, p, 4));
  for (size_t p = 4; p-- > 0;) sent.push_back(partition_curve_from_json(nlohmann::json(parts[p])));
  const nlohmann::json a = combine_partitions(parts, 4, 0.5), b = combine_partitions(sent, 4, 0.5);
  CHECK(a.dump() == b.dump());
  CHECK(a.at("partitions").at("n") == 4);
  CHECK_THROWS_AS(combine_partitions({parts[0], parts[1], parts[1], parts[3]}, 4, std::nullopt), std::logic_error);
  CHECK_THROWS_AS(combine_partitions({parts[0], parts[1]}, 4, std::nullopt), std::logic_error);
}

TEST_CASE("simulate() with --mrc-partitions: the partitions of one pass, combined, equal the partitions alone") {
  ScratchDir d;
  auto trace = zipf(120000, 20000, 0.9, 1, 41);  // > 7 batches, positions compacted
  SimulationConfig o;
  o.trace = write_txt(d, trace);
  o.policies = {};
  o.mrc = true;
  o.sizes = parse_sizes("100,1000,10000", false);
  for (int threads : {1, 2}) {
    o.threads = threads;
    o.mrc_partitions = 4;
    auto r = simulate(o);
    REQUIRE(r.mrc);
    REQUIRE(r.mrc->partitions);
    const nlohmann::json expect = partitioned(trace, {100, 1000, 10000}, 4);
    nlohmann::json got = *r.mrc;
    got.erase("seconds");
    nlohmann::json want = expect;
    want.erase("seconds");
    CHECK(got.dump() == want.dump());
  }
}

TEST_CASE("--mrc-partitions: bad values are refused by key") {
  CacheSimOptions o;
  o.trace = "t.txt";
  o.mrc = true;
  auto refused = [&](const char* what) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(check_resolved(resolve(o)), doctest::Contains("mrc_partitions"), lite::OptionError);
  };
  o.mrc_partitions = 0;
  refused("0");
  o.mrc_partitions = kMaxMrcPartitions + 1;
  refused("too many");
  o.mrc_partitions = 4;
  o.mrc = false;
  refused("without --mrc");
  o.mrc = true;
  o.sample_rate = 0.5;
  refused("with sampling");
  o.sample_rate = 1;
  CHECK_NOTHROW(check_resolved(resolve(o)));
}
