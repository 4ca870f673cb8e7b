// JSON and table views of lite quantize on a decoder (QuantizeResult::decoder): frozen float and each mode side by
// side in the decoder's terms.
#include <fmt/format.h>

#include "lite/core/text.hpp"
#include "lite/quantize/decoder_report.hpp"

namespace lite::quantize {

void to_json(nlohmann::json& j, const DecoderCandidate& c) {
  j = nlohmann::json{{"mode", c.mode},
                     {"problem", c.problem},
                     {"file_bytes", c.file_bytes},
                     {"next_token_agreement", c.agreement},
                     {"perplexity", c.perplexity ? nlohmann::json(*c.perplexity) : nlohmann::json(nullptr)},
                     {"quality_loss_pct", c.quality_loss_pct},
                     {"ttft_p50_ms", c.ttft_p50_ms},
                     {"tpot_p50_ms", c.tpot_p50_ms},
                     {"decode_tokens_per_s", c.decode_tokens_per_s},
                     {"ttft_speedup", c.ttft_speedup},
                     {"decode_speedup", c.decode_speedup},
                     {"meets_tolerance", c.meets_tolerance},
                     {"chosen", c.chosen}};
}

void to_json(nlohmann::json& j, const DecoderQuantizeResult& r) {
  j = nlohmann::json{{"form", r.form},
                     {"quality_data", r.quality_data},
                     {"scored_tokens", r.scored_tokens},
                     {"prompt_tokens", r.prompt_tokens},
                     {"generated_tokens", r.generated_tokens},
                     {"frozen_float", r.reference},
                     {"candidates", r.candidates}};
}

namespace {

std::vector<std::string> row_of(const DecoderCandidate& c, const DecoderCandidate& ref) {
  if (!c.problem.empty()) return {c.mode, "-", "-", "-", "-", "-", "-", "not built: " + shorten(c.problem, 30)};
  const std::string size = ref.file_bytes ? fmt::format("{} ({:.2f}x)", format_bytes(double(c.file_bytes)),
                                                        double(c.file_bytes) / double(ref.file_bytes))
                                          : format_bytes(double(c.file_bytes));
  const bool is_ref = &c == &ref;
  return {c.mode + (c.chosen ? " *" : ""),
          size,
          fmt::format("{:.2f}%", 100 * c.agreement),
          c.perplexity ? fmt::format("{:.3f}", *c.perplexity) : "-",
          is_ref ? format_ms(c.ttft_p50_ms) : fmt::format("{} ({:.2f}x)", format_ms(c.ttft_p50_ms), c.ttft_speedup),
          is_ref ? format_ms(c.tpot_p50_ms) : fmt::format("{} ({:.2f}x)", format_ms(c.tpot_p50_ms), c.decode_speedup),
          fmt::format("{:.1f}", c.decode_tokens_per_s),
          is_ref ? "reference" : c.meets_tolerance ? "within tolerance" : "beyond tolerance"};
}

}  // namespace

void add_decoder_views(const QuantizeResult& r, report::Report& rep) {
  const DecoderQuantizeResult& d = *r.decoder;
  report::Table t{fmt::format("Decoder ({}): quality on {}; {} prompt tokens, {} generated, time p50", d.form,
                              d.quality_data, d.prompt_tokens, d.generated_tokens),
                  {"mode", "size", "next-token agreement", "perplexity", "TTFT ms", "time/token ms", "decode tok/s",
                   "verdict"},
                  {}};
  t.rows.push_back(row_of(d.reference, d.reference));
  t.rows.back()[0] = "float32 (frozen)";
  for (const auto& c : d.candidates) t.rows.push_back(row_of(c, d.reference));
  rep.tables.push_back(t);
  rep.notes = r.notes;
  rep.notes.push_back(fmt::format("tolerance: {:.2f}% {} (* marks the written mode{})", r.tolerance,
                                  d.reference.perplexity ? "perplexity increase over frozen float"
                                                         : "of positions whose greedy token changed",
                                  r.output.empty() ? "; dry run: nothing written" : ", " + r.output));
}

}  // namespace lite::quantize
