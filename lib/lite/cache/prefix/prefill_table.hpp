#pragma once
// The measured prefill-cost table: `lite profile LM.pt --prefill-cost-out FILE` writes it, `lite cache-sim
// --prefill-cost-from FILE` reads it. One CSV row per measured point: the prefill time of `new_tokens` uncached
// prompt tokens after `cached_tokens` tokens whose KV was already cached. Lines starting with '#' describe the
// measurement (model, threads, CPU). The format is stated once, here. Torch-free.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "lite/cache/prefix/prefix_cache.hpp"

namespace lite::cache::prefix {

struct PrefillPoint {
  uint64_t new_tokens = 0, cached_tokens = 0;
  double ms = 0;
};

struct PrefillTable {
  std::vector<std::string> comments;  // without the leading "# "
  std::vector<PrefillPoint> points;
};

// The file's text: the comments, the header "new_tokens,cached_tokens,ms", one row per point.
std::string prefill_table_text(const PrefillTable& table);

// Reads and checks the file: InputError naming FILE:LINE and the field for a missing or foreign header, a row that
// is not three plain decimal numbers, new_tokens of 0, a negative or non-finite time, or fewer than 3 points.
PrefillTable read_prefill_table(const std::filesystem::path& path);

// The cost model as every report states it: its coefficients as JSON (a_ms, b_ms_per_token, c_ms_per_token2,
// d_ms_per_cached_token) and as a formula ("20 + 0.05 x new + ... ms").
nlohmann::json prefill_model_json(const PrefillModel& model);
std::string prefill_model_text(const PrefillModel& model);

// The cost model fitted to the table by least squares with every coefficient >= 0 (a, b, c, d of
// PrefillModel), and how well it fits: the largest relative error over the table's points.
struct PrefillFit {
  PrefillModel model;
  double max_relative_error = 0;
  size_t points = 0;
};
PrefillFit fit_prefill_model(const PrefillTable& table);

}  // namespace lite::cache::prefix
