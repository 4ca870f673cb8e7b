#pragma once
// Timing a decoder as it serves: time to first token (the prompt's prefill) and time per output token (one decode
// step), warm-up apart from steady state, and the KV cache's bytes.
#include <torch/script.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/llm/decoder.hpp"
#include "lite/llm/decoder_knobs.hpp"
#include "lite/llm/generation_stats.hpp"
#include "lite/measure/timing_options.hpp"

namespace lite::llm {

struct GenerationPlan {
  int64_t batch = 1;
  int64_t prompt_tokens = 128;
  int64_t new_tokens = 32;
  std::optional<torch::Tensor> prompt;  // [batch, prompt_tokens] ids from a file; else seeded random ids
  std::string prompt_file = {};         // that file, for messages
  int warmup_runs = 3;                  // whole generations before timing
  std::optional<int> runs;              // timed generations; unset: run for duration_s, at least 3
  double duration_s = 2.0;
  uint64_t seed = 1;
};

// Whole generations warmed up at most: each is a prompt and a call per new token, so a verb's default warm-up of
// 20 calls would be 20 generations.
constexpr int kMaxWarmupGenerations = 3;

// `plan` (its batch, seed and prompt) timed as the knobs say (warm-up capped at kMaxWarmupGenerations, runs and
// seconds as given), with the lengths of set_lengths; its note, when the lengths were shrunk, is added to `notes`.
GenerationPlan timed_plan(GenerationPlan plan, const measure::TimingKnobs& timing, const DecoderKnobs& knobs,
                          const Decoder& decoder, std::vector<std::string>& notes);

// The plan's lengths from the knobs: given ones as they are; unset ones the defaults (the prompt file's length when
// plan.prompt is set), shrunk to fit a model that states max_positions. Returns a note when they were shrunk.
std::string set_lengths(GenerationPlan& plan, const DecoderKnobs& knobs, const Decoder& decoder);

// Refuses a plan the model cannot hold before any work: prompt + generated tokens beyond max_positions.
void check_context(const Decoder& decoder, const GenerationPlan& plan);

GenerationStats time_generation(Decoder& decoder, const GenerationPlan& plan, Progress& progress);

}  // namespace lite::llm
