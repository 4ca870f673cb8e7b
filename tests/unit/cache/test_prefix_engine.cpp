// Engine mode (--engine, docs/cache-sim.md "Engine mode"), on hand-made traces worked out by hand: vLLM's
// block-size-4 walk-through (docs/design/prefix_caching.md), the input_length - 1 cap, pinned blocks against
// idle ones, SGLang's leaf LRU with a locked path, blocks filled by generated tokens, waits, --engine's parser.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>

#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/core/options.hpp"

using namespace lite::cache::prefix;

namespace {

// "t:in:out:ids" per request (ids comma-separated), in 4-token blocks, read by the real reader.
BlockTrace requests(const std::string& spec, uint32_t block_tokens = 4) {
  std::string text;
  std::istringstream in(spec);
  std::string item;
  while (in >> item) {
    const auto a = item.find(':'), b = item.find(':', a + 1), c = item.find(':', b + 1);
    text += fmt::format("{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [{}]}}\n",
                        item.substr(0, a), item.substr(a + 1, b - a - 1), item.substr(b + 1, c - b - 1),
                        item.substr(c + 1));
  }
  BlockTraceOptions o;
  o.block_tokens = block_tokens;
  TraceFacts facts;
  return parse_block_trace(text, o, facts);
}

const EngineEntry& engine(const char* name) { return *parse_engine(name).engine; }

std::unique_ptr<EngineCache> make(const char* name, const BlockTrace& t, uint64_t capacity) {
  return engine(name).make({&t, capacity});
}

uint64_t admit(EngineCache& cache, size_t r) {
  uint64_t hit = 0;
  REQUIRE(cache.admit(r, hit));
  return hit;
}

PrefixRow replay_with(const char* name, const BlockTrace& t, uint64_t capacity, double decode_ms) {
  ReplaySetup s;
  s.trace = &t;
  s.capacity_blocks = capacity;
  s.engine = &engine(name);
  s.decode_ms = decode_ms;
  return replay(s);
}

// The walk-through's three requests: request 0 (15 prompt tokens, blocks ABCD EFGH IJKL MNO) decodes into a
// fifth block; request 1 shares its first 10 tokens (2 blocks); request 2 its first 12 (3 blocks).
const char* const kWalkThrough = "0:15:5:1,2,3,4 4:14:2:1,2,5,6 7:29:1:1,2,3,7,8,9,10,11";

}  // namespace

TEST_CASE("vllm follows its design doc's block-size-4 walk-through with 10 blocks") {
  const BlockTrace t = requests(kWalkThrough);
  auto cache = make("vllm", t, 10);
  CHECK(admit(*cache, 0) == 0);
  CHECK(admit(*cache, 1) == 8);  // the third block matches 2 of 4 tokens only: 2 blocks hit
  cache->finish(0);              // its tail (the partial block, then the one decoding filled) freed first
  cache->finish(1);
  CHECK(cache->occupied() == 5);  // ABCD, EFGH, IJKL, MNO+generated, request 1's third block
  // the free queue is 7 8 9 (never used), request 0's 4 (partial), 3, 2, request 1's 6 (partial), 5, 1, 0:
  // the hits 0, 1, 2 are touched out of it, and the 5 new blocks are 7, 8, 9, 4 and 3, evicting 3
  CHECK(admit(*cache, 2) == 12);
  CHECK(cache->evicted() == 1);
  CHECK_FALSE(cache->cached(cache->generated_block(0, 0)));
  CHECK(cache->cached(t.blocks_of(1)[2]));  // request 1's third block (5) is still cached
  CHECK(cache->occupied() == 9);
  const PrefixRow row = replay_with("vllm", t, 10, 1);  // the same in time: request 0 ends at 5, request 1 at 6
  CHECK(row.hit_tokens == 20);
  CHECK(row.engine->evicted_blocks == 1);
  CHECK(row.engine->waited == 0);
}

TEST_CASE("the hit is capped at input_length - 1 tokens when the whole prompt is cached") {
  const BlockTrace t = requests("0:8:1:1,2 100:8:1:1,2");
  CHECK(replay_with("vllm", t, 100, 1).hit_tokens == 4);    // whole blocks within 7 tokens: 1
  CHECK(replay_with("sglang", t, 100, 1).hit_tokens == 7);  // tokens: 7
  ReplaySetup ideal;
  ideal.trace = &t;
  ideal.policy = &find_prefix_policy("lru");
  ideal.capacity_blocks = 100;
  CHECK(replay(ideal).hit_tokens == 8);
}

TEST_CASE("a running request's blocks survive eviction while an idle one's go") {
  const BlockTrace t = requests("0:4:1:1 1:4:1:2 2:4:1:3 3:4:1:4 4:4:1:5");
  for (const EngineEntry& e : engine_table()) {
    if (!e.make) continue;
    CAPTURE(e.name);
    auto cache = e.make({&t, 3});
    admit(*cache, 0);
    cache->finish(0);  // idle: cached, unpinned
    admit(*cache, 1);
    admit(*cache, 2);
    admit(*cache, 3);  // the pool is full: the idle block goes, the running ones stay
    CHECK_FALSE(cache->cached(t.blocks_of(0)[0]));
    CHECK(cache->cached(t.blocks_of(1)[0]));
    CHECK(cache->cached(t.blocks_of(2)[0]));
    uint64_t hit = 0;
    CHECK_FALSE(cache->admit(4, hit));  // every block pinned: request 4 waits
    CHECK(cache->occupied() == 3);
  }
}

TEST_CASE("a request that finds every block pinned waits for the first running one to finish") {
  // 2 blocks; requests 0 and 1 decode until 10 and 11; request 2 arrives at 2 and starts at 10
  const BlockTrace t = requests("0:4:1:1 1:4:1:2 2:4:1:3");
  for (const char* name : {"vllm", "sglang"}) {
    CAPTURE(name);
    const PrefixRow row = replay_with(name, t, 2, 10);
    CHECK(row.engine->waited == 1);
    CHECK(row.engine->wait_mean_ms == doctest::Approx(8));
    CHECK(row.engine->preemptions == 0);
  }
}

TEST_CASE("sglang evicts unlocked leaves by last use and a locked path survives") {
  const BlockTrace t = requests("0:8:1:1,2 1:4:1:3 2:4:1:4 3:4:1:5 4:4:1:6");
  auto cache = make("sglang", t, 3);
  auto cached = [&](size_t r, uint32_t i) { return cache->cached(t.blocks_of(r)[i]); };
  admit(*cache, 0);  // 1-2, locked while it runs: the oldest path
  admit(*cache, 1);
  cache->finish(1);  // 3: the only unlocked leaf
  admit(*cache, 2);
  CHECK(cached(0, 0));
  CHECK(cached(0, 1));
  CHECK_FALSE(cached(1, 0));
  cache->finish(2);  // 4 unlocked before 1-2
  cache->finish(0);
  admit(*cache, 3);  // the leaf used longest ago: 4
  CHECK_FALSE(cached(2, 0));
  CHECK(cached(0, 1));
  admit(*cache, 4);  // the leaf node 1-2 (inserted together) goes whole: one block more than needed
  CHECK_FALSE(cached(0, 1));
  CHECK_FALSE(cached(0, 0));
  CHECK(cache->occupied() == 2);
  CHECK(cache->evicted() == 4);
}

TEST_CASE("sglang splits the node a match ends inside, and its lower part takes the match's time") {
  // RadixCache._match_prefix_helper stamps a node before _split_node cuts it, so the part below the match is
  // refreshed too (scripts/bench/prefix_cache section 5 drives SGLang's own file to the same counts)
  const BlockTrace t = requests("0:12:1:1,2,3 1:4:1:4 2:4:1:1 3:4:1:5");
  auto cache = make("sglang", t, 4);
  admit(*cache, 0);
  cache->finish(0);  // node 1-2-3
  admit(*cache, 1);
  cache->finish(1);  // node 4, used after 1-2-3
  CHECK(admit(*cache, 2) == 3);  // block 1 (capped at input_length - 1): 1 | 2-3, and 2-3 stamped now
  cache->finish(2);
  admit(*cache, 3);  // 4 is the leaf used longest ago, not 2-3
  CHECK_FALSE(cache->cached(t.blocks_of(1)[0]));
  CHECK(cache->cached(t.blocks_of(0)[2]));
  CHECK(cache->cached(t.blocks_of(0)[1]));
  CHECK(cache->evicted() == 1);
}

TEST_CASE("blocks filled by generated tokens are cached, a partial one is not") {
  // vllm: 8 prompt tokens and 9 output tokens hold 16 KV tokens, 2 generated blocks, both full
  const BlockTrace full = requests("0:8:9:1,2");
  auto vllm = make("vllm", full, 10);
  admit(*vllm, 0);
  vllm->finish(0);
  CHECK(vllm->occupied() == 4);
  CHECK(vllm->cached(vllm->generated_block(0, 0)));
  CHECK(vllm->cached(vllm->generated_block(0, 1)));
  // one more output token starts a fifth block: freed uncached
  const BlockTrace partial = requests("0:8:10:1,2");
  auto vllm2 = make("vllm", partial, 10);
  admit(*vllm2, 0);
  vllm2->finish(0);
  CHECK(vllm2->occupied() == 4);
  CHECK_FALSE(vllm2->cached(vllm2->generated_block(0, 2)));
  // sglang caches tokens: 6 prompt tokens (a partial second block) and 7 output tokens hold 12, a third block
  const BlockTrace tokens = requests("0:6:7:1,2");
  auto sglang = make("sglang", tokens, 10);
  admit(*sglang, 0);
  sglang->finish(0);
  CHECK(sglang->occupied() == 3);
  CHECK(sglang->cached(sglang->generated_block(0, 0)));
}

TEST_CASE("a request larger than the whole pool is counted and computed without the cache") {
  const BlockTrace t = requests("0:16:1:1,2,3,4 1:16:1:1,2,3,4");
  const PrefixRow row = replay_with("vllm", t, 3, 1);
  CHECK(row.engine->too_large == 2);
  CHECK(row.hit_tokens == 0);
}

TEST_CASE("--engine names an engine and its decode time") {
  CHECK(std::string(parse_engine("ideal").engine->name) == "ideal");
  CHECK(parse_engine("vllm").decode_ms == 20);
  CHECK(parse_engine("sglang:decode-ms=30").decode_ms == 30);
  CHECK(std::string(parse_engine("SGLang").engine->name) == "sglang");
  CHECK_THROWS_AS(parse_engine("vlm"), lite::OptionError);
  CHECK_THROWS_AS(parse_engine("vllm:decode-ms=-1"), lite::OptionError);
  CHECK_THROWS_AS(parse_engine("vllm:decode=1"), lite::OptionError);
  CHECK_THROWS_AS(parse_engine("ideal:decode-ms=1"), lite::OptionError);
}
