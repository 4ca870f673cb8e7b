#pragma once
// The views of a decoder's profile (docs/llm.md). Torch-free.
#include <nlohmann/json.hpp>

#include "lite/core/report.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

// The --json result of a decoder's run (in place of one forward call's latency).
nlohmann::json decoder_json(const ProfileResult& r);
// Its tables and notes.
void add_decoder_views(const ProfileResult& r, report::Report& rep);

}  // namespace lite::profile
