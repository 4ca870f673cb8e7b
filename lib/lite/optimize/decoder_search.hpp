#pragma once
// lite optimize on a decoder with an LLM request trace (docs/optimize.md "Decoders and the prefix cache"): every
// weight mode x KV-cache format x prefix-cache capacity, judged against a time-to-first-token target. Each weight
// mode is built by lite quantize (float is the model frozen) and screened: quality against frozen float, decode
// speed, its prefill cost over a grid of (new, cached) tokens fitted to cache-sim's model, and its cache in each KV
// format (the KV-cache what-if, predicted from float's), each measured further only where it decides the choice.
// Each (mode, format) within the quality budget then replays the trace through cache-sim's prefix mode at every
// cache size in bytes: the same bytes hold more tokens in a lighter format, and a lighter model prefills the misses
// faster. The choice is the smallest cache that meets the target,
// then the fastest decoding, then the least quality lost. Torch-free header.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/prefix/prefix_cache.hpp"

namespace lite::optimize {

// One weight mode as measured.
struct DecoderWeights {
  std::string mode;                     // "float" (frozen) or a quantize mode
  std::string status;                   // "measured", "over budget" (its weights alone lose), "failed", "skipped"
  std::string reason;
  std::string artifact;                 // in the work folder
  double quality_loss_pct = 0;          // against frozen float: perplexity increase in %, or % of tokens changed
  double agreement = 1;                 // next-token agreement with frozen float
  std::optional<double> perplexity;
  double tpot_p50_ms = 0, decode_tokens_per_s = 0;
  // How decode speed was timed: "full" (--duration: the exhaustive grid), "screened" (--screen-duration), "raced"
  // (screened, then timed again in turn with the modes tied with it in cache bytes: DecoderRace).
  std::string timing;
  std::optional<cache::prefix::PrefillModel> prefill;  // fitted to its measured grid
  double prefill_fit_error = 0;         // the fit's largest relative error on the grid
  // "full" (lite profile's grid, 5 timed calls per point), or "screen" (every other point, timed once) where
  // no fit error of kFitMargin could change what the search chooses (decoder_search.cpp, confirm_prefill).
  std::string prefill_grid;
  size_t prefill_points = 0;
  // Timed calls per point the fit's medians are over: 1 for the screen, 5 for the full grid, fewer where a refit
  // settled its mode's sizes early (confirm_prefill).
  int prefill_passes = 0;
  uint64_t file_bytes = 0;
  double build_s = 0, measure_s = 0;
};

// One (weights, KV format) pair and the prefix cache sized for it.
struct DecoderChoice {
  std::string mode, kv_format;          // kv_format: the cache's own dtype ("float32"), "int8" or "fp8"
  double kv_bytes_per_token = 0;
  double quality_loss_pct = 0;          // weights and cache together, against frozen float with its own cache
  // The search runs the KV-cache what-if on float alone and predicts the other modes' format losses from it (a
  // format's perplexity ratio times the weights' own); the chosen pair's is then measured (confirm_kv_quality).
  bool quality_predicted = false;
  std::string status;                   // "met", "not reached", "over budget", or the weights' failure
  std::string policy;                   // the best policy at the size below
  double cache_bytes = 0;               // the smallest simulated size meeting the target (else the largest)
  uint64_t capacity_tokens = 0;
  double token_hit_ratio = 0;
  double ttft_p50_ms = 0, ttft_p99_ms = 0;
  std::vector<double> ttft_by_size_ms;  // the target's percentile at each DecoderSearch::cache_bytes (0: < 1 block)
  bool feasible = false, chosen = false;
};

// The tie-break on decode speed, timed further: the modes whose pairs need the chosen cache and whose screened
// speeds are within 15% of the fastest (a short timing's noise here) take turns of --screen-duration each; a mode more
// than 5% behind the leader's median leaves; the race ends with one mode left, with all within 5% after two turns
// (any of them would do), or when --duration is spent among them.
struct DecoderRace {
  std::vector<std::string> modes;       // who raced, in the order they were timed
  std::vector<std::string> dropped;     // who left, in the order they did
  int turns = 0;
  double seconds = 0;
  std::string ended;                    // "one left", "settled", "duration spent"
};

struct DecoderSearch {
  std::string trace, trace_format;
  uint64_t requests = 0, prompt_tokens = 0, distinct_blocks = 0;
  uint32_t block_tokens = 0;
  std::optional<int64_t> max_positions;
  std::string quality_data;             // what quality was judged on
  std::string percentile;               // "p99" or "p50" of TTFT
  double target_ms = 0, budget_pct = 0;
  std::vector<std::string> policies;
  std::string cache_dtype;              // the cache as the model returns it
  std::vector<double> cache_bytes;      // the sizes simulated
  std::vector<DecoderWeights> weights;
  std::vector<DecoderChoice> choices;
  std::optional<size_t> chosen;         // into choices
  std::optional<DecoderRace> race;      // when the screen left a tie on decode speed
  std::vector<std::string> refitted;    // modes whose screened prefill fit was replaced by the full grid's
  int simulations = 0;
};

void to_json(nlohmann::json& j, const DecoderWeights& w);
void to_json(nlohmann::json& j, const DecoderChoice& c);
void to_json(nlohmann::json& j, const DecoderRace& r);
void to_json(nlohmann::json& j, const DecoderSearch& s);

}  // namespace lite::optimize
