#pragma once
// Prefix KV-cache studies (cache-sim's prefix mode, docs/cache-sim.md "Prefix KV cache"): LLM requests whose
// prompts are chains of KV blocks, replayed through block caches where a request reuses the longest cached
// prefix of its blocks. The model is Mooncake's Figure 9's: requests in file order, each served at once; after a
// request all its blocks are cached, its later blocks counting as used before its earlier ones (tail first, as
// vLLM frees and SGLang evicts). Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::cache::prefix {

// What the trace holds per request: a chain of blocks (ids dense from 0, a block's parent the block before it).
struct TraceFacts {
  std::string path, format;
  uint32_t block_tokens = 0;
  uint64_t requests = 0, prompt_tokens = 0, output_tokens = 0;
  uint64_t block_refs = 0, distinct_blocks = 0;
  uint64_t bad_lines_skipped = 0;
  double duration_s = 0;  // last timestamp - first
};

// The KV bytes a token takes, when the study is sized in bytes or asks what a lighter KV format buys.
struct KvFormat {
  std::string dtype;            // "fp16", "fp8", "int8", "int4", or "" (bytes per token given directly)
  double bytes_per_token = 0;   // K and V of every layer
};

// Prefill time of one request: a + b x new + c x new x (cached + new/2) + d x cached ms, new = uncached prompt
// tokens (--prefill-ms-per-token X is b = X alone). The c term is attention reading the whole context; the d term
// what a call pays per cached token whatever its new tokens, as a model that appends to its KV cache with torch.cat
// copies the cache (on GPT-2-small 20-30 ms more for 28-44 new tokens after 512 cached than after none).
struct PrefillModel {
  double a_ms = 0, b_ms_per_token = 0, c_ms_per_token2 = 0, d_ms_per_cached_token = 0;
  double ms(uint64_t cached_tokens, uint64_t new_tokens) const {
    const double n = double(new_tokens), k = double(cached_tokens);
    return a_ms + b_ms_per_token * n + c_ms_per_token2 * n * (k + n / 2) + d_ms_per_cached_token * k;
  }
};

struct PrefixConfig {
  std::string trace, format = "auto";
  uint32_t block_tokens = 0;               // 0 = the format's own (512 for mooncake, 16 for token ids)
  bool skip_bad_lines = false;
  std::string bad_line_fix;                // a malformed line's fix; "" = the reader's (fix it or skip it)
  std::vector<std::string> policies;       // prefix policy names (policy table in prefix_policies.cpp)
  std::string engine = "ideal";            // "ideal", or an engine and its decode time: "vllm:decode-ms=20"
  std::string sizes = "auto";              // blocks, tokens ("3Mtok"), bytes ("64GiB"), or shares ("10%")
  std::optional<double> kv_bytes_per_token;
  std::string kv_layout;                   // "layers=80,kv-heads=8,head-dim=128,dtype=fp16"
  std::vector<std::string> kv_dtypes;      // what-if over KV formats
  std::optional<PrefillModel> prefill;
  std::string prefill_source;              // where a fitted model came from ("" when given as coefficients)
  uint32_t instances = 0;                  // 0: no queueing; K: K prefill instances serve FCFS by timestamp
  std::string tiers;                       // "hbm=3Mtok,dram=50Mtok@50GB/s": KV tiers, fastest first (tiers.hpp)
  std::string routes;                      // "" or prefix routes ("prefix-affinity,session", "all"): the cluster
                                           // study of `instances` local pools against one global pool
  bool mrc = false;                        // the exact tail-first LRU curve in one pass
  std::optional<double> target_hit_ratio;  // token hit ratio
  std::optional<double> target_ttft_p99_ms;
  int threads = 0;
  std::string results_dir;                 // rows kept here and reused by a re-run (prefix_store.hpp); "" = none
};

// With --tiers: one tier's capacity and the prompt tokens loaded from it.
struct TierHits {
  std::string name;
  uint64_t capacity_blocks = 0;
  std::optional<double> capacity_bytes, bytes_per_second;
  uint64_t hit_tokens = 0, hit_blocks = 0;
};

// With a cluster study: what one instance served.
struct InstanceLoad {
  uint64_t requests = 0, prompt_tokens = 0, hit_tokens = 0;
  uint64_t prefill_tokens() const { return prompt_tokens - hit_tokens; }
};

// Engine mode (engine.hpp): how the engine's admissions went.
struct EngineCounters {
  double decode_ms = 0;          // per generated token
  uint64_t waited = 0;           // requests admitted after their arrival: no room among unpinned blocks
  double wait_mean_ms = 0, wait_max_ms = 0;  // over the requests that waited
  uint64_t too_large = 0;        // requests needing more blocks than the whole pool: served uncached, not cached
  uint64_t preemptions = 0;      // 0: a request waits at admission rather than being preempted later
  uint64_t evicted_blocks = 0;   // cached blocks evicted
};

// One policy at one capacity (and KV format).
struct PrefixRow {
  std::string policy;
  std::string kv_dtype;  // "" without a KV format
  uint64_t capacity_blocks = 0;
  uint64_t capacity_tokens = 0;
  std::optional<double> capacity_bytes;
  uint64_t requests = 0, prompt_tokens = 0, hit_tokens = 0, hit_blocks = 0, block_refs = 0;
  uint64_t orphan_blocks = 0;   // cached at the end but unreachable (an ancestor evicted)
  uint64_t cached_blocks = 0;   // cached at the end
  std::optional<double> ttft_mean_ms, ttft_p50_ms, ttft_p99_ms;
  std::vector<TierHits> tiers;   // --tiers: where the hit tokens came from (capacity_blocks is their total)
  uint64_t recomputed_tokens = 0;  // --tiers: cached, but recomputing them was faster than loading them
  std::string route;               // cluster: "global" (one pool of the capacity), else the router of K local pools
  std::vector<InstanceLoad> instances;  // cluster: per instance
  std::optional<EngineCounters> engine;  // engine mode (policy is then the engine's name)
  double seconds = 0;
  double token_hit_ratio() const { return prompt_tokens ? double(hit_tokens) / double(prompt_tokens) : 0; }
  double block_hit_ratio() const { return block_refs ? double(hit_blocks) / double(block_refs) : 0; }
};

// The tail-first LRU curve from one pass of stack distances, at every capacity in blocks.
struct PrefixCurve {
  std::vector<uint64_t> capacity_blocks;
  std::vector<uint64_t> hit_tokens, hit_blocks;
};

// Hit ratios with room for every block: the trace's reuse, by three definitions that papers mix.
struct UnboundedReuse {
  double token_hit_ratio = 0;       // hit tokens / prompt tokens
  double block_hit_ratio = 0;       // hit blocks / block references
  double mean_request_hit_ratio = 0;  // mean over requests of hit tokens / prompt tokens
};

struct PrefixRecommendation {
  std::string target;  // "token hit ratio >= 0.4" or "TTFT p99 <= 500 ms"
  bool met = false;
  std::optional<PrefixRow> row;  // the smallest capacity (then the best policy there) meeting it
};

struct PrefixResult {
  TraceFacts trace;
  std::vector<KvFormat> kv_formats;      // empty when sizes are in blocks or tokens and no format was named
  std::optional<PrefillModel> prefill;
  std::string prefill_source;
  uint32_t instances = 0;
  std::string engine = "ideal";          // the engine's name
  UnboundedReuse unbounded;
  std::vector<PrefixRow> rows;           // policy-major, capacity ascending
  std::optional<PrefixCurve> curve;
  std::optional<PrefixRecommendation> recommendation;
  std::vector<std::string> notes;
  size_t reused_records = 0;             // results_dir: rows found there instead of replayed
  int threads = 1;
  double read_seconds = 0, simulate_seconds = 0;
};

void to_json(nlohmann::json& j, const PrefixRow& r);
void to_json(nlohmann::json& j, const PrefixResult& r);

}  // namespace lite::cache::prefix
