// --results-dir for prefix studies (prefix/prefix_store.hpp): a study run twice finds every row of the first run;
// every option that changes a row misses the rows of the others (each variation below is run twice into one
// folder: the first run finds none of what the variations before it wrote, the second finds all of its own);
// what does not change a row (threads, the curve, a target, the format named rather than detected, more sizes)
// finds them; a damaged file is replayed and rewritten.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "cache_test_util.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/prefix/prefix_store.hpp"

using namespace lite::cache::prefix;
using cache_test::ScratchDir;

namespace {

// 8 conversations of 4 turns behind one shared system block, a block being 4 tokens: a prompt of k blocks is 4k
// tokens, so 5-token blocks read the same hash_ids (k <= 4) and the trace reads with either block size.
std::string chat_trace(int first_conversation = 0) {
  std::string text;
  int t = 0;
  for (int turn = 1; turn <= 4; ++turn)
    for (int conv = first_conversation; conv < first_conversation + 8; ++conv) {
      std::string ids = "900";
      for (int i = 1; i < turn; ++i) ids += fmt::format(",{}", 100 * conv + i);
      text += fmt::format("{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": 3, \"hash_ids\": [{}]}}\n",
                          t, 4 * turn, ids);
      t += 7;
    }
  return text;
}

PrefixConfig base_config(const std::string& trace, const std::filesystem::path& results) {
  PrefixConfig c;
  c.trace = trace;
  c.block_tokens = 4;
  c.policies = {"lru", "radix-lru", "radix-reference"};
  c.sizes = "2,4,8";
  c.prefill = PrefillModel{0, 0.01, 0};
  c.threads = 1;
  c.results_dir = results.string();
  return c;
}

nlohmann::json rows_without_seconds(const PrefixResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const PrefixRow& row : r.rows) {
    PrefixRow untimed = row;
    untimed.seconds = 0;
    rows.push_back(untimed);
  }
  return rows;
}

struct Variation {
  const char* name;
  std::function<void(PrefixConfig&)> change;
  size_t shared = 0;  // rows an earlier variation wrote that this one finds (a job both have)
};

// Every option that changes a row, each a variation of the base study.
std::vector<Variation> variations() {
  const auto kv = [](PrefixConfig& c) { c.kv_bytes_per_token = 256; };
  return {
      {"base", [](PrefixConfig&) {}},
      {"5-token blocks", [](PrefixConfig& c) { c.block_tokens = 5; }},
      {"bad lines skipped", [](PrefixConfig& c) { c.skip_bad_lines = true; }},
      {"no prefill model", [](PrefixConfig& c) { c.prefill.reset(); }},
      {"another prefill b", [](PrefixConfig& c) { c.prefill->b_ms_per_token = 0.02; }},
      {"a prefill a", [](PrefixConfig& c) { c.prefill->a_ms = 1; }},
      {"a prefill c", [](PrefixConfig& c) { c.prefill->c_ms_per_token2 = 1e-3; }},
      {"a prefill d", [](PrefixConfig& c) { c.prefill->d_ms_per_cached_token = 1e-2; }},
      {"2 instances", [](PrefixConfig& c) { c.instances = 2; }},
      {"kv bytes per token", kv},
      {"other kv bytes per token", [](PrefixConfig& c) { c.kv_bytes_per_token = 512; }},
      // --kv-bytes-per-token is fp16's: the same bytes in int8 is another format
      {"kv layout, same bytes", [](PrefixConfig& c) { c.kv_layout = "layers=1,kv-heads=1,head-dim=128,dtype=int8"; }},
      {"kv dtype fp16 in bytes",  // 4 and 8 blocks of 1 KiB of fp16: the jobs of "kv bytes per token" there
       [](PrefixConfig& c) {
         c.kv_layout = "layers=1,kv-heads=1,head-dim=64,dtype=fp16";
         c.kv_dtypes = {"fp16"};
         c.sizes = "4KiB,8KiB";
       },
       6},
      {"kv dtype int8 in bytes",  // 8 and 16 blocks of 512 bytes: 8 blocks as above, in another format
       [](PrefixConfig& c) {
         c.kv_layout = "layers=1,kv-heads=1,head-dim=64,dtype=fp16";
         c.kv_dtypes = {"int8"};
         c.sizes = "4KiB,8KiB";
       }},
      {"tiers", [](PrefixConfig& c) { c.sizes = "auto", c.tiers = "hbm=2,dram=8"; }},
      {"larger tier", [](PrefixConfig& c) { c.sizes = "auto", c.tiers = "hbm=2,dram=16"; }},
      {"tier bandwidth",
       [kv](PrefixConfig& c) { kv(c), c.sizes = "auto", c.tiers = "hbm=2,dram=8@1GB/s"; }},
      {"route random", [](PrefixConfig& c) { c.instances = 2, c.routes = "random"; }},
      // the global pool (a job of every cluster study) is the one before's
      {"route round-robin", [](PrefixConfig& c) { c.instances = 2, c.routes = "round-robin"; }, 9},
      {"engine vllm", [](PrefixConfig& c) { c.policies.clear(), c.engine = "vllm"; }},
      {"engine decode time", [](PrefixConfig& c) { c.policies.clear(), c.engine = "vllm:decode-ms=5"; }},
      {"engine sglang", [](PrefixConfig& c) { c.policies.clear(), c.engine = "sglang"; }},
  };
}

}  // namespace

TEST_CASE("prefix results folder: every option that changes a row misses the others' rows and finds its own") {
  ScratchDir d;
  const std::string trace = d.file("chat.jsonl", chat_trace()).string();
  const auto results = d.path / "results";
  for (const Variation& v : variations()) {
    const std::string name = v.name;
    CAPTURE(name);
    PrefixConfig c = base_config(trace, results);
    v.change(c);
    const PrefixResult first = run_study(c);
    CHECK(first.reused_records == v.shared);
    const PrefixResult again = run_study(c);
    CHECK(again.reused_records == again.rows.size());
    CHECK(rows_without_seconds(again) == rows_without_seconds(first));
  }
  // the same options on another trace (one conversation's ids changed) find nothing
  std::ofstream(trace) << chat_trace(1);
  CHECK(run_study(base_config(trace, results)).reused_records == 0);
}

TEST_CASE("prefix results folder: threads, the curve, a target, the format named or more sizes find the rows") {
  ScratchDir d;
  const std::string trace = d.file("chat.jsonl", chat_trace()).string();
  const PrefixConfig base = base_config(trace, d.path / "results");
  const PrefixResult first = run_study(base);
  REQUIRE(first.rows.size() == 9);
  CHECK(first.reused_records == 0);
  const std::vector<std::function<void(PrefixConfig&)>> same = {
      [](PrefixConfig& c) { c.threads = 2; }, [](PrefixConfig& c) { c.mrc = true; },
      [](PrefixConfig& c) { c.target_hit_ratio = 0.3; }, [](PrefixConfig& c) { c.format = "mooncake"; }};
  for (const auto& change : same) {
    PrefixConfig c = base;
    change(c);
    const PrefixResult r = run_study(c);
    CHECK(r.reused_records == 9);
    CHECK(rows_without_seconds(r) == rows_without_seconds(first));
  }
  PrefixConfig more = base;
  more.sizes = "2,4,8,16";
  const PrefixResult r = run_study(more);
  CHECK(r.rows.size() == 12);
  CHECK(r.reused_records == 9);
  // the mrc curve and the recommendation come from the rows, found or replayed alike
  PrefixConfig curve = base;
  curve.mrc = true;
  curve.target_hit_ratio = 0.3;
  PrefixConfig fresh = curve;
  fresh.results_dir.clear();
  const PrefixResult found = run_study(curve), replayed = run_study(fresh);
  REQUIRE(found.curve);
  CHECK(found.curve->hit_tokens == replayed.curve->hit_tokens);
  REQUIRE(found.recommendation);
  CHECK(nlohmann::json(*found.recommendation->row).at("hit_tokens") ==
        nlohmann::json(*replayed.recommendation->row).at("hit_tokens"));
}

TEST_CASE("prefix results folder: a damaged or edited row is replayed and rewritten") {
  ScratchDir d;
  const std::string trace = d.file("chat.jsonl", chat_trace()).string();
  const auto results = d.path / "results";
  PrefixConfig c = base_config(trace, results);
  c.sizes = "2,4";
  c.policies = {"lru"};
  const PrefixResult first = run_study(c);
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(results)) files.push_back(e.path());
  REQUIRE(files.size() == 2);
  std::ofstream(files[0]) << "{\"key\": 1";  // cut short
  CHECK(run_study(c).reused_records == 1);
  CHECK(run_study(c).reused_records == 2);  // rewritten whole
  // a row whose key was edited (here: the policy) is another job's, so it is not trusted
  std::ifstream in(files[1]);
  nlohmann::json stored = nlohmann::json::parse(in);
  stored["key"]["policy"] = "radix-lru";
  std::ofstream(files[1]) << stored.dump();
  CHECK(run_study(c).reused_records == 1);
  // a key intact over a record that is no row: replayed
  stored = nlohmann::json::parse(std::ifstream(files[0]));
  stored["record"] = {{"policy", "lru"}};
  std::ofstream(files[0]) << stored.dump();
  const PrefixResult last = run_study(c);
  CHECK(last.reused_records == 1);
  CHECK(rows_without_seconds(last) == rows_without_seconds(first));
}

TEST_CASE("prefix results folder: the key's two halves") {
  PrefixConfig c;
  c.engine = "sglang:decode-ms=7";
  c.prefill = PrefillModel{1, 2, 3};
  c.instances = 4;
  TraceFacts t;
  t.format = "tokens";
  t.block_tokens = 16;
  const nlohmann::json k = prefix_options_key(c, t);
  CHECK(k.at("format") == "tokens");
  CHECK(k.at("block_tokens") == 16);
  CHECK(k.at("prefill") == nlohmann::json{1.0, 2.0, 3.0, 0.0});
  CHECK(k.at("engine") == "sglang");
  CHECK(k.at("decode_ms") == 7.0);
  CHECK(k.at("instances") == 4);
  c.results_dir = "/elsewhere", c.threads = 3, c.mrc = true, c.sizes = "1,2";  // not in it
  CHECK(prefix_options_key(c, t) == k);
}
