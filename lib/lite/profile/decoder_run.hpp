#pragma once
// lite profile's decoder run (docs/llm.md): what run() does instead of timing one forward call when the model is a
// decoder.
#include <torch/script.h>

#include "lite/core/progress.hpp"
#include "lite/model/load.hpp"
#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

// A decoder option was given, or the model's forward takes a KV cache (llm::takes_kv_cache).
bool is_decoder_run(const ProfileOptions& o, const torch::jit::Module& module);

// Times generation, fills r.decoder (and r.prefill_cost with --prefill-cost-out) and the model's tensor facts.
void run_decoder(const ProfileOptions& o, model::LoadedModel& model, ModelProfile& profile, ProfileResult& r,
                 Progress& progress);

}  // namespace lite::profile
