// KV tiers in the prefix mode (--tiers, docs/cache-sim.md "Tiers"), on hand-made traces worked out by hand:
// demotion order down the tiers, the load-against-recompute rule, and --tiers' parsing and rules.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>

#include "prefix_trace_spec.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/cache/prefix/tiered_cache.hpp"
#include "lite/cache/prefix/tiers.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

using namespace lite::cache::prefix;

namespace {

using testing::mooncake;

Tier tier(const char* name, uint64_t blocks, double load_ms_per_token = 0) {
  Tier t;
  t.name = name;
  t.capacity_blocks = blocks;
  t.load_ms_per_token = load_ms_per_token;
  return t;
}

}  // namespace

TEST_CASE("a victim moves down one tier and the last tier's victims are dropped") {
  // one block per request, blocks 1..6 then 2 again; lru over hbm (2 blocks), dram (2), ssd (1)
  const BlockTrace t = mooncake("0:4:1 1:4:2 2:4:3 3:4:4 4:4:5 5:4:6 6:4:2");
  CacheSetup setup;
  setup.trace = &t;
  const std::vector<Tier> tiers = {tier("hbm", 2), tier("dram", 2), tier("ssd", 1)};
  TieredCache cache(find_prefix_policy("lru"), setup, tiers);
  for (size_t r = 0; r < 6; ++r) CHECK(cache.serve(r) == 0);
  // hbm {6,5}; 1, 2, 3, 4 left hbm in that order: dram {4,3}, 2 went on to ssd, 1 (ssd's victim) was dropped
  auto tier_of_id = [&](uint32_t id) { return cache.tier_of(id - 1); };  // ids are dense in first-seen order
  CHECK(tier_of_id(6) == 0);
  CHECK(tier_of_id(5) == 0);
  CHECK(tier_of_id(4) == 1);
  CHECK(tier_of_id(3) == 1);
  CHECK(tier_of_id(2) == 2);
  CHECK(tier_of_id(1) == -1);
  CHECK(cache.occupied() == 5);
  // block 2 is hit in ssd and moves up to hbm; hbm's victim 5 enters dram, whose victim 3 takes ssd's free place
  CHECK(cache.serve(6) == 1);
  CHECK(cache.prefix_tiers() == std::vector<uint8_t>{2});
  CHECK(tier_of_id(2) == 0);
  CHECK(tier_of_id(5) == 1);
  CHECK(tier_of_id(4) == 1);
  CHECK(tier_of_id(3) == 2);
  CHECK(cache.occupied() == 5);
}

TEST_CASE("a cached block is loaded only while loading it beats recomputing it") {
  // 12 tokens in 3 blocks cached in hbm (free), dram (0.5 ms/token), ssd (2 ms/token); prefill 1 ms/token.
  // Loading j blocks: j=0 12 ms, j=1 0 + 8 = 8, j=2 2 + 4 = 6, j=3 2 + 8 + 0 = 10: load two, recompute the third.
  const BlockTrace t = mooncake("0:12:1,2,3");
  const std::vector<Tier> tiers = {tier("hbm", 1), tier("dram", 1, 0.5), tier("ssd", 1, 2)};
  const std::vector<uint8_t> where = {0, 1, 2};
  const PrefillModel linear{0, 1, 0};
  PrefixLoad load = choose_prefix_load(t, 0, where, tiers, linear);
  CHECK(load.blocks == 2);
  CHECK(load.load_ms == doctest::Approx(2));
  // dram at 1 ms/token: j=1 and j=2 both take 8 ms; a tie loads (the larger j)
  const std::vector<Tier> even = {tier("hbm", 1), tier("dram", 1, 1), tier("ssd", 1, 2)};
  load = choose_prefix_load(t, 0, where, even, linear);
  CHECK(load.blocks == 2);
  CHECK(load.load_ms == doctest::Approx(4));
  // without a prefill model there is nothing to weigh against: every cached block is loaded
  load = choose_prefix_load(t, 0, where, tiers, std::nullopt);
  CHECK(load.blocks == 3);
  CHECK(load.load_ms == doctest::Approx(10));
}

TEST_CASE("a replay over tiers counts hits per tier, recomputed tokens and the load in the TTFT") {
  // r0 caches blocks 1, 2 tail first: hbm (1 block) keeps 1, 2 goes down to dram. r1 = r0's prompt again:
  // block 1 from hbm, block 2 from dram at 2 ms/token (8 ms) against 4 ms to recompute: recomputed.
  const BlockTrace t = mooncake("0:8:1,2 1:8:1,2");
  ReplaySetup s;
  s.trace = &t;
  s.policy = &find_prefix_policy("lru");
  s.prefill = PrefillModel{0, 1, 0};
  s.tiers = {tier("hbm", 1), tier("dram", 4, 2)};
  s.capacity_blocks = 5;
  PrefixRow row = replay(s);
  CHECK(row.capacity_blocks == 5);
  CHECK(row.hit_tokens == 4);
  CHECK(row.recomputed_tokens == 4);
  REQUIRE(row.tiers.size() == 2);
  CHECK(row.tiers[0].hit_tokens == 4);
  CHECK(row.tiers[1].hit_tokens == 0);
  CHECK(*row.ttft_mean_ms == doctest::Approx((8.0 + 4.0) / 2));
  // dram at 0.5 ms/token: block 2 loads in 2 ms, recomputing takes 4: loaded, TTFT 2 ms
  s.tiers[1].load_ms_per_token = 0.5;
  row = replay(s);
  CHECK(row.hit_tokens == 8);
  CHECK(row.recomputed_tokens == 0);
  CHECK(row.tiers[1].hit_tokens == 4);
  CHECK(row.tiers[1].hit_blocks == 1);
  CHECK(*row.ttft_mean_ms == doctest::Approx((8.0 + 2.0) / 2));
  // radix-lru caches a prompt head first and never evicts the path it extends: hbm holds 1, block 2 is never
  // cached, so nothing is demoted and r1 misses block 2 (a miss, not a recompute)
  s.policy = &find_prefix_policy("radix-lru");
  row = replay(s);
  CHECK(row.tiers[0].hit_tokens == 4);
  CHECK(row.tiers[1].hit_tokens == 0);
  CHECK(row.recomputed_tokens == 0);
}

TEST_CASE("--tiers: names, capacities in --sizes' units, decimal and binary bandwidths") {
  const auto tiers = parse_tiers("hbm=3Mtok, dram=50Mtok@50GB/s, ssd=1TiB@5GiB/s");
  REQUIRE(tiers.size() == 3);
  CHECK(tiers[0].name == "hbm");
  CHECK(!tiers[0].bytes_per_second);
  CHECK(tiers[0].capacity.unit == CapacitySpec::Unit::tokens);
  CHECK(*tiers[1].bytes_per_second == doctest::Approx(50e9));
  CHECK(tiers[2].capacity.unit == CapacitySpec::Unit::bytes);
  CHECK(*tiers[2].bytes_per_second == doctest::Approx(5.0 * 1024 * 1024 * 1024));
  for (const char* bad : {"3Mtok", "hbm=", "hbm=3Mtok@fast", "hbm=3Mtok@50GB", "a=1,a=2", "hbm=3Mtok@0GB/s"})
    CHECK_THROWS_AS(parse_tiers(bad), lite::OptionError);
  TraceFacts facts;
  facts.block_tokens = 512;
  const KvFormat kv{"fp16", 1000};
  const auto resolved = resolve_tiers(tiers, facts, &kv);
  CHECK(resolved[0].capacity_blocks == 5859);  // 3e6 / 512
  CHECK(resolved[1].load_ms_per_token == doctest::Approx(1000 / 50e9 * 1e3));
  CHECK_THROWS_AS(resolve_tiers(tiers, facts, nullptr), lite::OptionError);  // bytes and bandwidths need a KV size
}

TEST_CASE("--tiers replaces --sizes and the one-tier curve, and a bandwidth needs the KV bytes") {
  PrefixConfig c;
  c.tiers = "hbm=100,dram=1000@10GB/s";
  c.kv_bytes_per_token = 1000;
  CHECK_NOTHROW(check_config(c));
  auto key_of = [](PrefixConfig bad) {
    try {
      check_config(bad);
    } catch (const lite::OptionError& e) {
      return e.key();
    }
    return std::string("(accepted)");
  };
  PrefixConfig sized = c;
  sized.sizes = "1000";
  CHECK(key_of(sized) == "sizes");
  PrefixConfig curve = c;
  curve.mrc = true;
  CHECK(key_of(curve) == "mrc");
  PrefixConfig no_kv = c;
  no_kv.kv_bytes_per_token.reset();
  CHECK(key_of(no_kv) == "tiers");
  PrefixConfig formats = c;
  formats.kv_dtypes = {"fp16", "fp8"};
  CHECK(key_of(formats) == "kv_dtypes");  // formats compare at equal bytes; these tiers are in blocks
}
