// The recipe lite optimize emits for a decoder search (outputs.hpp): the chosen weight mode as a quantize step, the
// trace replayed by a cache-sim step at the chosen policy and size with the chosen mode's fitted prefill cost, and
// the same TTFT target and quality budget as gates, so a CI job keeps checking the choice when the trace or the
// model changes. The prefill cost is the search's fit on the machine it ran on, written out exactly.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/optimize/outputs.hpp"
#include "lite/quantize/verb.hpp"

namespace lite::optimize {

namespace {
std::string recipe_path(const std::filesystem::path& p) {
  return std::filesystem::absolute(p).lexically_normal().string();
}

const DecoderWeights& chosen_weights(const DecoderSearch& s, const std::string& mode) {
  for (const auto& w : s.weights)
    if (w.mode == mode) return w;
  throw InternalError("the chosen pair's weights " + mode + " were not measured");
}
}  // namespace

nlohmann::json emitted_decoder_recipe(const OptimizeResult& r, const OptimizeOptions& o) {
  const DecoderSearch& s = *r.decoder;
  const DecoderChoice& chosen = s.choices.at(*s.chosen);
  const DecoderWeights& w = chosen_weights(s, chosen.mode);
  nlohmann::json data = {{"trace", recipe_path(*o.trace)}};
  if (o.eval) data["eval"] = recipe_path(*o.eval);

  nlohmann::json steps = nlohmann::json::array();
  if (chosen.mode != "float") {
    nlohmann::json q = {{"mode", chosen.mode}, {"allow_slower", true}, {"threads", o.threads}, {"duration_s", 0.5}};
    if (o.eval) q["eval"] = "@data.eval";
    steps.push_back({{quantize::verb().name, q}});
  }
  const cache::prefix::PrefillModel& m = *w.prefill;
  const auto blocks = uint64_t(std::floor(chosen.cache_bytes / (double(s.block_tokens) * chosen.kv_bytes_per_token)));
  nlohmann::json c = {{"trace", "@data.trace"},
                      {"block_tokens", s.block_tokens},
                      {"policies", {chosen.policy}},
                      {"sizes", std::to_string(blocks)},
                      {"prefill_cost", fmt::format("a={:.17g},b={:.17g},c={:.17g},d={:.17g}", m.a_ms, m.b_ms_per_token,
                                                   m.c_ms_per_token2, m.d_ms_per_cached_token)}};
  if (!o.trace_format.empty()) c["format"] = o.trace_format;
  steps.push_back({{cache::verb().name, c}});

  nlohmann::json gates = nlohmann::json::object();
  if (chosen.mode != "float") {  // float weights are the model itself: no step writes one, nothing to judge
    if (o.eval)
      gates["max_accuracy_drop"] = s.budget_pct;
    else
      gates["min_agreement"] = 100.0 - s.budget_pct;
  }
  if (s.percentile == "p99") gates["max_cache_p99_ms"] = s.target_ms;
  // The replay is deterministic: the chosen size's token hit ratio (rounded down) holds until the trace changes.
  gates["min_hit_ratio"] = std::floor(chosen.token_hit_ratio * 1000) / 1000;
  return {{"lite_recipe", 1},
          {"name", "optimized"},
          {"description", fmt::format("lite optimize's choice for TTFT {} <= {} ms: {} weights, a {} KV cache (the "
                                      "serving engine's setting) behind a {} prefix cache of {} blocks of {} tokens",
                                      s.percentile, s.target_ms, chosen.mode, chosen.kv_format, chosen.policy, blocks,
                                      s.block_tokens)},
          {"model", recipe_path(o.model)},
          {"data", data},
          {"steps", steps},
          {"evaluate", {{"threads", o.threads}, {"duration_s", 2.0}}},
          {"gates", gates}};
}

}  // namespace lite::optimize
