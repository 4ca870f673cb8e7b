// lite optimize's decoder search, the torch-free rules that decide what the screen leaves open: which sizes a prefill
// fit's error could change, which modes a short decode timing cannot tell apart, and the choice made again after
// either is measured further.
#include <doctest/doctest.h>

#include "lite/optimize/decoder_search_internal.hpp"

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
