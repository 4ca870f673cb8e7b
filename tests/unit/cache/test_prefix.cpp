// The prefix mode on hand-made traces whose answers are worked out by hand (docs/cache-sim.md "Prefix KV cache"),
// the one-pass curve against per-capacity replays, bad lines, capacities and KV formats.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "prefix_trace_spec.hpp"
#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/block_ids.hpp"
#include "lite/cache/prefix/capacity.hpp"
#include "lite/cache/prefix/prefix_mrc.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/prefix/radix_cache.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/cache/prefix/request_line.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

using namespace lite::cache::prefix;

namespace {

using testing::mooncake;

PrefixRow run(const BlockTrace& t, const std::string& policy, uint64_t capacity,
              std::optional<PrefillModel> prefill = std::nullopt, uint32_t instances = 0) {
  static std::vector<uint32_t> next;
  next = next_uses(t);
  ReplaySetup s;
  s.trace = &t;
  s.policy = &find_prefix_policy(policy);
  s.capacity_blocks = capacity;
  s.next_use = &next;
  s.prefill = prefill;
  s.instances = instances;
  return replay(s);
}

std::string bad_line_message(const std::string& line, uint32_t block_tokens = 4) {
  BlockTraceOptions o;
  o.block_tokens = block_tokens;
  o.path = "t.jsonl";
  TraceFacts facts;
  try {
    parse_block_trace("{\"timestamp\": 0, \"input_length\": 4, \"output_length\": 1, \"hash_ids\": [9]}\n" + line, o,
                      facts);
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a shared system prompt and a multi-turn chat hit their cached prefixes") {
  // r1 shares block 1 (4 tokens) with r0; r2 is r1's next turn: blocks 1 and 3 (8 tokens) cached.
  const BlockTrace t = mooncake("0:8:1,2 1:7:1,3 2:10:1,3,4");
  for (const char* p : {"lru", "fifo", "lfu", "radix-lru", "radix-lfu", "radix-cost", "radix-reference"}) {
    const PrefixRow r = run(t, p, 100);
    CHECK_MESSAGE(r.hit_tokens == 12, p);
    CHECK(r.hit_blocks == 3);
    CHECK(r.prompt_tokens == 25);
    CHECK(r.block_refs == 7);
    CHECK(r.orphan_blocks == 0);
  }
}

TEST_CASE("the hit of a full prompt is its length, not whole blocks") {
  const BlockTrace t = mooncake("0:6:1,2 1:6:1,2");
  CHECK(run(t, "lru", 10).hit_tokens == 6);  // two blocks, the second holding 2 tokens
}

TEST_CASE("a shared prefix shorter than one block hits nothing") {
  BlockTraceOptions o;
  o.format = PrefixFormat::token_ids;
  o.block_tokens = 4;
  TraceFacts facts;
  const BlockTrace t = parse_block_trace("{\"tokens\": [1, 2, 3, 4, 5]}\n{\"tokens\": [1, 2, 9, 9, 9]}\n"
                                         "{\"prompt_token_ids\": [1, 2, 3, 4, 7]}\n", o, facts);
  CHECK(t.blocks() == 5);  // [1 2 3 4], [5], [1 2 9 9], [9], [7]: only the third prompt reuses a block
  CHECK(run(t, "lru", 10).hit_tokens == 4);
  CHECK(facts.prompt_tokens == 15);
}

TEST_CASE("a request longer than the capacity keeps its head") {
  const BlockTrace t = mooncake("0:16:1,2,3,4 1:16:1,2,3,4");
  for (const char* p : {"lru", "fifo", "lfu", "radix-lru", "radix-lfu", "radix-cost", "radix-reference"}) {
    const PrefixRow r = run(t, p, 2);
    CHECK_MESSAGE(r.hit_blocks == 2, p);
    CHECK(r.cached_blocks == 2);
  }
}

TEST_CASE("a request's tail is evicted before its head") {
  // Capacity 3: r0 caches 1,2,3; r1's block 4 evicts 3 (r0's tail), so r2 still hits 1,2.
  const BlockTrace t = mooncake("0:12:1,2,3 1:4:4 2:12:1,2,3");
  for (const char* p : {"lru", "radix-lru"}) CHECK_MESSAGE(run(t, p, 3).hit_blocks == 2, p);
}

TEST_CASE("fifo orphans a block whose parent leaves first, prefix-closed policies never do") {
  // Capacity 2: r0 caches 1; r1 adds 2 under it; r2's block 7 evicts 1, the oldest: 2 is cached but unreachable,
  // so r3 = [1, 2] hits nothing.
  const BlockTrace t = mooncake("0:4:1 1:8:1,2 2:4:7 3:8:1,2");
  const PrefixRow at_r2 = run(mooncake("0:4:1 1:8:1,2 2:4:7"), "fifo", 2);
  CHECK(at_r2.orphan_blocks == 1);
  CHECK(run(t, "fifo", 2).hit_blocks == 1);  // r1's block 1 only
  CHECK(run(t, "radix-lru", 2).orphan_blocks == 0);
}

TEST_CASE("prefill queueing with two instances") {
  // 1 ms a token; three 4-token requests at t=0 on two instances: TTFT 4, 4 and 8 (the third waits); the fourth,
  // a repeat of the first at t=20, is fully cached: TTFT 0.
  const BlockTrace t = mooncake("0:4:1 0:4:2 0:4:3 20:4:1");
  const PrefixRow r = run(t, "lru", 10, PrefillModel{0, 1, 0}, 2);
  CHECK(*r.ttft_mean_ms == doctest::Approx(16.0 / 4));
  CHECK(*r.ttft_p50_ms == doctest::Approx(4));
  CHECK(*r.ttft_p99_ms == doctest::Approx(4 + 0.97 * 4));  // type 7 between 4 and 8 at h = 2.97
  const PrefixRow alone = run(t, "lru", 10, PrefillModel{0, 1, 0}, 0);
  CHECK(*alone.ttft_mean_ms == doctest::Approx(12.0 / 4));  // no queueing
  // the attention term: a + b*new + c*new*(cached + new/2) = 1 + 0 + 0.5*4*(0 + 2) = 5 for a 4-token miss
  CHECK(PrefillModel{1, 0, 0.5}.ms(0, 4) == doctest::Approx(5));
  // the cached-token term: + d*cached = 1 + 0.5*4*(6 + 2) + 0.25*6 = 18.5 for 4 new tokens after 6 cached
  CHECK(PrefillModel{1, 0, 0.5, 0.25}.ms(6, 4) == doctest::Approx(18.5));
}

namespace {

// A random trace of chains sharing prefixes (a few "system prompts", multi-turn conversations growing).
BlockTrace random_tree_trace(uint32_t seed, int requests) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> conversations(40);
  int next_id = 1;
  std::string text;
  for (int r = 0; r < requests; ++r) {
    auto& c = conversations[rng() % conversations.size()];
    if (c.empty() || rng() % 5 == 0) c = {1 + int(rng() % 3)};  // a new conversation under one of 3 system prompts
    const int grow = 1 + int(rng() % 4);
    for (int i = 0; i < grow; ++i) c.push_back(100 + next_id++);
    std::string ids;
    for (int id : c) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    text += fmt::format("{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 1, \"hash_ids\": [{}]}}\n", r,
                        c.size() * 4 - rng() % 4, ids);
  }
  BlockTraceOptions o;
  o.block_tokens = 4;
  TraceFacts facts;
  return parse_block_trace(text, o, facts);
}

}  // namespace

TEST_CASE("the one-pass curve equals tail-first LRU replayed at every capacity") {
  const BlockTrace t = random_tree_trace(7, 400);
  std::vector<uint64_t> capacities;
  for (uint64_t c = 1; c <= t.blocks() + 1; ++c) capacities.push_back(c);
  const PrefixCurve curve = tail_first_lru_curve(t, capacities);
  REQUIRE(curve.capacity_blocks == capacities);
  for (size_t i = 0; i < capacities.size(); ++i) {
    const PrefixRow r = run(t, "lru", capacities[i]);
    CHECK_MESSAGE(curve.hit_tokens[i] == r.hit_tokens, "capacity ", capacities[i]);
    CHECK(curve.hit_blocks[i] == r.hit_blocks);
  }
  // tail-first LRU keeps a parent at least as recent as its children: it never orphans, and equals radix-lru
  for (uint64_t c : {3, 17, 60}) {
    CHECK(run(t, "lru", c).orphan_blocks == 0);
    CHECK(run(t, "lru", c).hit_tokens == run(t, "radix-lru", c).hit_tokens);
  }
}

namespace {

// radix-lru's keys on the general leaf heap (radix_cache.hpp): what its recency list must evict, victim by victim.
struct LastUseOnHeap {
  explicit LastUseOnHeap(const CacheSetup&) {}
  HeapKey use(uint32_t, uint32_t depth, uint64_t, size_t request) {
    return {double(request), UINT32_MAX - uint64_t(depth)};
  }
  void evicted(uint32_t, const HeapKey&) {}
};

}  // namespace

TEST_CASE("radix-lru's recency list evicts the leaves a heap by last use evicts, in the same order") {
  for (uint32_t seed : {3u, 5u}) {
    const BlockTrace t = random_tree_trace(seed, 300);
    for (uint64_t c = 0; c <= t.blocks() + 1; c += 1 + c / 8) {
      std::vector<uint32_t> by_list, by_heap;
      CacheSetup s;
      s.trace = &t;
      s.capacity_blocks = c;
      s.evicted = &by_list;
      std::unique_ptr<BlockCache> list = make_radix_lru(s);
      s.evicted = &by_heap;
      RadixCache<LastUseOnHeap> heap(s);
      for (size_t r = 0; r < t.requests(); ++r) REQUIRE_MESSAGE(list->serve(r) == heap.serve(r), "capacity ", c);
      CHECK(by_list == by_heap);
      CHECK(list->occupied() == heap.occupied());
    }
  }
}

TEST_CASE("the offline reference is at least as good as the online policies here, and hits grow with capacity") {
  const BlockTrace t = random_tree_trace(11, 600);
  for (uint64_t c : {4, 16, 64}) {
    const uint64_t reference = run(t, "radix-reference", c).hit_tokens;
    for (const char* p : {"lru", "radix-lfu", "radix-cost"}) CHECK_MESSAGE(reference >= run(t, p, c).hit_tokens, p);
    CHECK(run(t, "radix-lru", c).hit_tokens <= run(t, "radix-lru", c * 2).hit_tokens);
  }
}

TEST_CASE("bad lines name the line and the field") {
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}").find("t.jsonl:2") !=
        std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 4, \"output_length\": 1}").find("'hash_ids' is missing") !=
        std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": \"4\", \"output_length\": 1, \"hash_ids\": [1]}")
            .find("'input_length'") != std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": -4, \"output_length\": 1, \"hash_ids\": [1]}")
            .find("-4 is negative") != std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 9, \"output_length\": 1, \"hash_ids\": [1]}")
            .find("needs 3") != std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 2.5, \"output_length\": 1, \"hash_ids\": [1]}")
            .find("not a whole number") != std::string::npos);
  CHECK(bad_line_message("[1, 2]").find("not one JSON object") != std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": -1, \"input_length\": 4, \"output_length\": 1, \"hash_ids\": [1]}")
            .find("'timestamp'") != std::string::npos);
  // the same id after another block: ids must name their whole prefix
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 8, \"output_length\": 1, \"hash_ids\": [5, 9]}")
            .find("whole prefix") != std::string::npos);
  CHECK(bad_line_message("{\"timestamp\": 1, \"input_length\": 8, \"output_length\": 1, \"hash_ids\": [7, 7]}")
            .find("whole prefix") != std::string::npos);
}

TEST_CASE("timestamps going back are refused, or skipped with the line") {
  CHECK_THROWS_AS(mooncake("5:4:1 3:4:2"), lite::InputError);
  BlockTraceOptions o;
  o.block_tokens = 4;
  o.skip_bad_lines = true;
  TraceFacts facts;
  const BlockTrace t = parse_block_trace(
      "{\"timestamp\": 5, \"input_length\": 4, \"output_length\": 1, \"hash_ids\": [1]}\n"
      "{\"timestamp\": 3, \"input_length\": 8, \"output_length\": 1, \"hash_ids\": [1, 2]}\n"
      "not json\n"
      "{\"timestamp\": 6, \"input_length\": 8, \"output_length\": 1, \"hash_ids\": [1, 3]}\n",
      o, facts);
  CHECK(facts.bad_lines_skipped == 2);
  CHECK(t.requests() == 2);
  CHECK(t.blocks() == 2);  // the skipped line's block 2 left nothing behind
}

TEST_CASE("capacities in blocks, tokens, bytes and shares") {
  TraceFacts facts;
  facts.block_tokens = 512;
  facts.distinct_blocks = 1000;
  PrefixConfig c;
  c.kv_layout = "layers=80,kv-heads=8,head-dim=128,dtype=fp16";
  const auto kv = resolve_kv_formats(c);
  REQUIRE(kv.size() == 1);
  CHECK(kv[0].bytes_per_token == 327680);  // Llama-3-70B: 320 KiB a token, as Mooncake counts
  const auto caps = resolve_capacities(parse_capacities("3Mtok,64GiB,10%,7"), facts, &kv[0]);
  REQUIRE(caps.size() == 4);
  CHECK(caps[0].blocks == 7);
  CHECK(caps[1].blocks == 100);   // 10% of 1000
  CHECK(caps[2].blocks == 409);   // 64 GiB / (320 KiB x 512)
  CHECK(caps[3].blocks == 5859);  // 3,000,000 / 512
  c.kv_dtypes = {"fp16", "int4"};
  const auto formats = resolve_kv_formats(c);
  CHECK(formats[1].bytes_per_token == 327680 / 4);
  CHECK(resolve_capacities(parse_capacities("64GiB"), facts, &formats[1])[0].blocks == 1638);  // 4x the blocks
  CHECK_THROWS_AS(parse_capacities("abc"), lite::OptionError);
  CHECK_THROWS_AS(parse_capacities("0"), lite::OptionError);
  CHECK_THROWS_AS(resolve_capacities(parse_capacities("64GiB"), facts, nullptr), lite::OptionError);
  CHECK_THROWS_AS(resolve_capacities(parse_capacities("100tok"), facts, nullptr), lite::OptionError);  // < 1 block
  PrefixConfig bad;
  bad.kv_dtypes = {"fp8"};
  CHECK_THROWS_AS(resolve_kv_formats(bad), lite::OptionError);  // no layout to scale
  bad.kv_layout = "layers=80,kv-heads=8";
  CHECK_THROWS_AS(resolve_kv_formats(bad), lite::OptionError);
}

TEST_CASE("unbounded reuse of the shared Mooncake trace, by three definitions") {
  // $LITE_SHARED_DIR first, as the other shared-trace tests read it (a worktree has no ../shared beside it)
  const char* shared = std::getenv("LITE_SHARED_DIR");
  const std::string path = shared ? std::string(shared) + "/data/llm-traces/conversation_trace.jsonl"
                                  : std::string(LITE_SHARED_TRACES) + "/../llm-traces/conversation_trace.jsonl";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "the shared Mooncake trace is missing: ", path);
  PrefixConfig c;
  c.trace = path;
  c.policies = {"lru"};
  c.sizes = "3Mtok,50Mtok";
  c.mrc = true;
  const PrefixResult r = run_study(c);
  CHECK(r.trace.requests == 12031);
  CHECK(r.trace.prompt_tokens == 144793823);
  CHECK(r.trace.block_refs == 288500);
  CHECK(r.trace.distinct_blocks == 182790);
  CHECK(r.unbounded.mean_request_hit_ratio == doctest::Approx(0.409).epsilon(0.005));  // Table 2's "~40%"
  CHECK(r.unbounded.token_hit_ratio == doctest::Approx(0.374).epsilon(0.005));
  // Figure 9's shape: 3M tokens under half of the unbounded ratio, 50M nearly all of it
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0].token_hit_ratio() < r.unbounded.token_hit_ratio / 2);
  CHECK(r.rows[1].token_hit_ratio() > 0.95 * r.unbounded.token_hit_ratio);
  REQUIRE(r.curve);
  for (size_t i = 0; i < r.curve->capacity_blocks.size(); ++i)
    for (const auto& row : r.rows)
      if (row.capacity_blocks == r.curve->capacity_blocks[i]) CHECK(row.hit_tokens == r.curve->hit_tokens[i]);
}

TEST_CASE("the line scanner takes a request's fields and skips any other value") {
  const RequestLine line = scan_request_line(
      R"( {"meta": {"a": [1, {"b": null}], "s": "x\"}y"}, "timestamp": 7, "flag": true, "score": -1.5e3,)"
      R"( "input_length": 1024, "output_length": 0, "hash_ids": [ 3 , 18446744073709551615 ]} )");
  CHECK(*line.timestamp == 7);
  CHECK(*line.input_length == 1024);
  CHECK(*line.output_length == 0);
  CHECK(line.has_hash_ids);
  CHECK(line.hash_ids == std::vector<uint64_t>{3, UINT64_MAX});
  auto problem = [](const std::string& text) {
    try {
      scan_request_line(text);
    } catch (const LineError& e) {
      return e.field + ": " + e.what();
    }
    return std::string("(accepted)");
  };
  CHECK(problem(R"({"timestamp": 1, "timestamp": 2})") == "timestamp: appears twice");
  CHECK(problem(R"({"timestamp": 01})") == "timestamp: '01' is not a whole number");
  CHECK(problem(R"({"timestamp": 1e3})") == "timestamp: '1e3' is not a whole number");
  CHECK(problem(R"({"hash_ids": [18446744073709551616]})").find("larger than") != std::string::npos);
  CHECK(problem(R"({"input_length": 4294967297})").find("larger than 4294967296") != std::string::npos);
  CHECK(problem(R"({"a": 1} x)").find("text after it") != std::string::npos);
  CHECK(problem(R"({"a": 1)").find("not one JSON object") != std::string::npos);
  CHECK(problem(R"({"a": tru})").find("not one JSON object") != std::string::npos);
  CHECK(problem(std::string(100, '[')).find("not one JSON object") != std::string::npos);
  CHECK(problem("{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}").find("deeper than 64") !=
        std::string::npos);
}

TEST_CASE("block ids: counters in pages, then hashes move every key to the table, erased keys stay gone") {
  BlockIds ids(true);
  std::unordered_map<uint64_t, uint32_t> want;
  std::mt19937_64 rng(5);
  uint32_t next = 0;
  auto add = [&](uint64_t key) {
    const uint32_t id = ids.find_or_insert(key, next);
    if (!want.count(key)) want[key] = next++;
    REQUIRE(id == want[key]);
  };
  for (uint64_t k = 0; k < 20000; ++k) add(k % 7 == 3 ? 20000 - k : k);  // counters, some seen again
  CHECK(ids.paged());
  const uint64_t erased[] = {7, 8, 10, 11};  // not multiples of 3: not added again below
  for (uint64_t k : erased) {
    ids.erase(k);
    want.erase(k);
  }
  for (int i = 0; i < 3000; ++i) add(rng());  // hashes: too sparse for pages
  CHECK(!ids.paged());
  for (uint64_t k = 0; k < 30000; k += 3) add(k);
  for (const auto& [key, id] : want) REQUIRE(ids.find(key) == id);
  for (uint64_t k : erased) CHECK(ids.find(k) == kNoBlock);
}
