// lite optimize's decoder search, the torch-free rules that decide what the screen leaves open: which sizes a prefill
// fit's error could change, which modes a short decode timing cannot tell apart, and the choice made again after
// either is measured further.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "lite/optimize/decoder_search_internal.hpp"
#include "lite/optimize/outputs.hpp"

using namespace lite::optimize;
using namespace lite::optimize::detail;

namespace {

DecoderWeights weights(const std::string& mode, double tokens_per_s) {
  DecoderWeights w;
  w.mode = mode;
  w.status = "measured";
  w.decode_tokens_per_s = tokens_per_s;
  return w;
}

DecoderChoice met(const std::string& mode, const std::string& format, double cache_bytes) {
  DecoderChoice p;
  p.mode = mode;
  p.kv_format = format;
  p.status = "met";
  p.cache_bytes = cache_bytes;
  return p;
}

// Target 100 ms over sizes of 1, 2, 4 and 8 MB.
DecoderSearch search_of(std::vector<DecoderWeights> w, std::vector<DecoderChoice> pairs) {
  DecoderSearch s;
  s.target_ms = 100;
  s.budget_pct = 1;
  s.cache_bytes = {1e6, 2e6, 4e6, 8e6};
  s.weights = std::move(w);
  s.choices = std::move(pairs);
  return s;
}

}  // namespace

TEST_CASE("a fit error could change a pair's size only where its TTFT is within the margin, at a size that could win") {
  const DecoderSearch s = search_of({weights("float", 100)}, {});
  DecoderChoice p = met("float", "float32", 8e6);
  p.ttft_by_size_ms = {130, 112, 104, 90};  // target 100: meets at 8 MB
  CHECK(size_a_fit_error_could_change(s, p, 8e6, 0.05) == std::optional<size_t>(2));   // 104 is within 5%
  CHECK(size_a_fit_error_could_change(s, p, 8e6, 0.15) == std::optional<size_t>(1));   // 112 within 15%: first
  CHECK_FALSE(size_a_fit_error_could_change(s, p, 2e6, 0.05).has_value());  // 4 MB cannot beat a 2 MB choice
  p.ttft_by_size_ms = {0, 104, 90, 80};  // 1 MB holds no block of this format: not a size it was sized at
  CHECK(size_a_fit_error_could_change(s, p, 8e6, 0.05) == std::optional<size_t>(1));
  p.ttft_by_size_ms = {200, 150, 60, 50};  // far from the target everywhere: its size is the fit's, whatever error
  CHECK_FALSE(size_a_fit_error_could_change(s, p, 8e6, 0.05).has_value());
}

TEST_CASE("the modes tied with the choice are those at its cache within the band of its decode speed") {
  DecoderChoice over = met("weight-int4", "fp8", 1e6);
  over.quality_loss_pct = 3;  // over the 1% budget: not feasible, whatever its speed
  DecoderSearch s = search_of({weights("float", 1000), weights("weight-int8", 900), weights("fp16", 800),
                               weights("bf16", 990), weights("weight-int4", 2000)},
                              {met("float", "float32", 1e6), met("weight-int8", "int8", 1e6), met("fp16", "fp8", 1e6),
                               met("bf16", "int8", 2e6), over});
  CHECK(tied_weights(s, 0.15).empty());  // nothing chosen yet
  REQUIRE(choose_pair(s) == std::optional<size_t>(0));
  // weight-int8 is 10% slower (within 15%), fp16 20% slower, bf16 needs a larger cache, weight-int4 is infeasible
  CHECK(tied_weights(s, 0.15) == std::vector<size_t>{0, 1});
  CHECK(tied_weights(s, 0.25) == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("a pair chosen again after its mode is timed further is the only one chosen") {
  DecoderSearch s = search_of({weights("float", 1000), weights("weight-int8", 950)},
                              {met("float", "float32", 1e6), met("weight-int8", "int8", 1e6)});
  REQUIRE(choose_pair(s) == std::optional<size_t>(0));
  s.weights[1].decode_tokens_per_s = 1100;  // the race's median
  REQUIRE(choose_pair(s) == std::optional<size_t>(1));
  CHECK_FALSE(s.choices[0].chosen);
  CHECK(s.choices[1].chosen);
  s.choices[0].cache_bytes = 5e5;  // a refit that sizes float smaller wins whatever its speed
  s.choices[0].status = "met";
  CHECK(choose_pair(s) == std::optional<size_t>(0));
}

TEST_CASE("a refit is spared a mode that could at best tie the choice's cache and would lose the tie on decode speed") {
  DecoderSearch s = search_of({weights("float", 1000), weights("dynamic", 500), weights("fp16", 950),
                               weights("weight-int8", 2000)},
                              {met("float", "float32", 2e6), met("dynamic", "int8", 4e6), met("fp16", "int8", 4e6),
                               met("weight-int8", "int8", 4e6)});
  CHECK_FALSE(loses_a_tie_at_best(s, s.choices[1], 1, 0.15));  // nothing chosen yet: any refit could matter
  REQUIRE(choose_pair(s) == std::optional<size_t>(0));         // float, 2 MB
  CHECK(loses_a_tie_at_best(s, s.choices[1], 1, 0.15));        // dynamic at best ties at 2 MB, decoding 50% slower
  CHECK_FALSE(loses_a_tie_at_best(s, s.choices[1], 0, 0.15));  // ... but at 1 MB it would win outright
  CHECK_FALSE(loses_a_tie_at_best(s, s.choices[2], 1, 0.15));  // fp16 5% slower: a race could pick it
  CHECK_FALSE(loses_a_tie_at_best(s, s.choices[3], 1, 0.15));  // weight-int8 decodes faster: it would win the tie
  CHECK_FALSE(loses_a_tie_at_best(s, s.choices[0], 1, 0.15));  // the chosen mode's own fit could lose its size
}

TEST_CASE("a refit's margin needs two passes, shrinks with calls, and never goes under the drift between passes") {
  CHECK_FALSE(refit_margin({}, 0.05, 0.5).has_value());
  CHECK_FALSE(refit_margin({500}, 0.05, 0.5).has_value());
  // Steady passes: the screen's 5% over 2 passes of twice its calls, 5% x sqrt(0.5 / 2) = 2.5%.
  CHECK(*refit_margin({500, 500}, 0.05, 0.5) == doctest::Approx(0.025));
  CHECK(*refit_margin({500, 500, 500, 500, 500}, 0.05, 0.5) == doctest::Approx(0.05 * std::sqrt(0.1)));
  // Passes of 445 and 801 ms: sd 251.7, standard error 178, mean 623: twice that is 57% of the mean.
  CHECK(*refit_margin({445, 801}, 0.05, 0.5) == doctest::Approx(2 * 178.0 / 623.0).epsilon(0.01));
  // A 2% drift between passes: twice the standard error (1% of the mean over 2 passes) is 2%, under the calls' 2.5%.
  CHECK(*refit_margin({495, 505}, 0.05, 0.5) == doctest::Approx(0.025));
}

TEST_CASE("the emitted decoder recipe rebuilds the chosen pair: its mode, its cache in blocks, its prefill cost exactly") {
  DecoderWeights int8 = weights("weight-int8", 1000);
  int8.prefill = lite::cache::prefix::PrefillModel{1.25, 0.0123456789012345, 3.5e-6, 0};
  DecoderChoice chosen = met("weight-int8", "fp8", 1e6);
  chosen.kv_bytes_per_token = 544;
  chosen.policy = "radix-lru";
  chosen.token_hit_ratio = 0.41279;
  OptimizeResult r;
  r.decoder = search_of({weights("float", 900), int8}, {met("float", "float32", 8e6), chosen});
  r.decoder->block_tokens = 16;
  r.decoder->percentile = "p99";
  r.decoder->chosen = 1;
  OptimizeOptions o;
  o.model = "/m/lm.pt";
  o.trace = "/t/trace.jsonl";
  o.eval = "/t/heldout.pt";
  nlohmann::json recipe = emitted_decoder_recipe(r, o);
  REQUIRE(recipe["steps"].size() == 2);
  CHECK(recipe["steps"][0]["quantize"]["mode"] == "weight-int8");
  const nlohmann::json& sim = recipe["steps"][1]["cache-sim"];
  CHECK(sim["sizes"] == "114");  // 1e6 bytes / (16 tokens x 544 bytes) = 114.9 blocks
  CHECK(sim["policies"] == nlohmann::json::array({"radix-lru"}));
  // Written to 17 significant digits: every coefficient reads back as the same double.
  const std::string cost = sim["prefill_cost"];
  CHECK(cost.rfind("a=1.25,b=", 0) == 0);
  CHECK(std::stod(cost.substr(cost.find("b=") + 2)) == 0.0123456789012345);
  CHECK(std::stod(cost.substr(cost.find("c=") + 2)) == 3.5e-6);
  CHECK(cost.substr(cost.find("d=")) == "d=0");
  CHECK(recipe["gates"] == nlohmann::json{{"max_accuracy_drop", 1.0}, {"max_cache_p99_ms", 100.0},
                                          {"min_hit_ratio", 0.412}});
  // Float chosen under a p50 target: no model step and so no quality gate, no p99 gate.
  r.decoder->chosen = 0;
  r.decoder->percentile = "p50";
  r.decoder->weights[0].prefill = lite::cache::prefix::PrefillModel{};
  r.decoder->choices[0].kv_bytes_per_token = 2048;
  recipe = emitted_decoder_recipe(r, o);
  REQUIRE(recipe["steps"].size() == 1);
  CHECK(recipe["steps"][0].contains("cache-sim"));
  CHECK(recipe["gates"] == nlohmann::json{{"min_hit_ratio", 0.0}});
}
