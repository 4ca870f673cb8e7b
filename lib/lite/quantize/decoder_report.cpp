// JSON and table views of lite quantize on a decoder (QuantizeResult::decoder): frozen float and each mode side by
// side in the decoder's terms.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

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

namespace {

nlohmann::json layout_json(const llm::KvWhatIf& w) {
  return {{"judged_on", w.judged_on},
          {"skipped", w.skipped},
          {"cache_dtype", w.layout.dtype},
          {"layers", w.layout.layers},
          {"kv_heads", w.layout.kv_heads},
          {"head_dim", w.layout.head_dim},
          {"bytes_per_token", w.layout.bytes_per_token}};
}

nlohmann::json kv_json(const llm::KvWhatIf& w) {
  nlohmann::json j = layout_json(w);
  if (w.skipped) {
    j.update({{"perplexity", nullptr},
              {"real_tokens", w.real_tokens},
              {"sequences", 0},
              {"prefill_tokens", w.prefill_tokens},
              {"scored_tokens", 0},
              {"formats", nlohmann::json::array()}});
    return j;
  }
  const double base = w.layout.bytes_per_token;
  nlohmann::json formats = nlohmann::json::array();
  for (const auto& f : w.formats)
    formats.push_back({{"format", f.format},
                       {"description", f.description},
                       {"bytes_per_token", f.bytes_per_token},
                       {"bytes_ratio", base > 0 ? f.bytes_per_token / base : 0},
                       {"next_token_agreement", f.agreement},
                       {"perplexity", f.perplexity},
                       {"perplexity_change_pct", 100 * (f.perplexity / w.perplexity - 1)},
                       {"sequences", f.sequences},
                       {"scored_tokens", f.scored_tokens}});
  j.update({{"perplexity", w.perplexity},
            {"real_tokens", w.real_tokens},
            {"sequences", w.sequences},
            {"prefill_tokens", w.prefill_tokens},
            {"scored_tokens", w.scored_tokens},
            {"formats", formats}});
  return j;
}

nlohmann::json bound_json(const llm::KvWhatIf& w) {
  const llm::KvWhatIfBound& b = w.bound;
  return {{"limit_s", b.limit_s},
          {"limit_from", b.limit_from},
          {"seconds", b.seconds},
          {"cut", b.cut_by_time || b.cut_by_steps},
          {"cut_by_time", b.cut_by_time},
          {"cut_by_steps", b.cut_by_steps},
          {"sequences_offered", b.sequences_offered},
          {"sequences", w.sequences},
          {"decode_steps_offered", b.decode_steps_offered},
          {"decode_steps_cap", b.decode_steps_cap},
          {"decode_steps", b.decode_steps},
          {"scored_tokens", w.scored_tokens}};
}

}  // namespace

void to_json(nlohmann::json& j, const DecoderQuantizeResult& r) {
  j = nlohmann::json{{"form", r.form},
                     {"quality_data", r.quality_data},
                     {"scored_tokens", r.scored_tokens},
                     {"prompt_tokens", r.prompt_tokens},
                     {"generated_tokens", r.generated_tokens},
                     {"frozen_float", r.reference},
                     {"candidates", r.candidates},
                     {"kv_cache_what_if", r.kv_cache ? kv_json(*r.kv_cache) : nlohmann::json(nullptr)},
                     {"kv_cache_what_if_bound",
                      r.kv_cache && !r.kv_cache->skipped ? bound_json(*r.kv_cache) : nlohmann::json(nullptr)}};
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

report::Table kv_table(const llm::KvWhatIf& w) {
  const std::vector<std::string> columns{"KV format", "bytes/token", "vs as returned", "next-token agreement",
                                         "perplexity", "change"};
  if (w.skipped)
    return {fmt::format("KV-cache what-if on {}: skipped ({{kv_what_if}}); the cache as returned, measured from one "
                        "{}-token prefill", w.judged_on, w.prefill_tokens),
            columns,
            {{w.layout.dtype + " (as returned)", format_bytes(w.layout.bytes_per_token), "1.00x", "-", "-", "-"}}};
  report::Table t{fmt::format("KV-cache what-if on {}: the cache quantized between decode steps; {} sequences, {} "
                              "tokens decoded after a {}-token prefill",
                              w.judged_on, w.sequences, w.scored_tokens, w.prefill_tokens),
                  columns,
                  {}};
  auto ppl = [&](double v) { return w.real_tokens ? fmt::format("{:.3f}", v) : std::string("-"); };
  t.rows.push_back({w.layout.dtype + " (as returned)", format_bytes(w.layout.bytes_per_token), "1.00x", "100.00%",
                    ppl(w.perplexity), "-"});
  for (const auto& f : w.formats)
    t.rows.push_back({f.format, format_bytes(f.bytes_per_token),
                      fmt::format("{:.2f}x", f.bytes_per_token / w.layout.bytes_per_token),
                      fmt::format("{:.2f}%", 100 * f.agreement), ppl(f.perplexity),
                      w.real_tokens ? fmt::format("{:+.2f}%", 100 * (f.perplexity / w.perplexity - 1)) : "-"});
  return t;
}

// One line when the what-if's bound cut it: what was judged of what the data offered, what cut it, what changes it.
std::optional<std::string> bound_note(const llm::KvWhatIf& w) {
  const llm::KvWhatIfBound& b = w.bound;
  if (w.skipped || (!b.cut_by_time && !b.cut_by_steps)) return std::nullopt;
  std::vector<std::string> why;
  if (b.cut_by_time)
    why.push_back(fmt::format("its {:.3g} s limit ({})", b.limit_s,
                              b.limit_from == "budget_s" ? "half of what {budget_s} left; a larger {budget_s} raises it"
                                                         : "{kv_what_if_seconds} raises it"));
  if (b.cut_by_steps) why.push_back(fmt::format("a fixed cap of {} decode steps a row", b.decode_steps_cap));
  return fmt::format("KV-cache what-if: {} of {} sequences, {} of the {} decode steps a row their length gives, "
                     "judged in {:.1f} s: cut by {}", w.sequences, b.sequences_offered, b.decode_steps,
                     b.decode_steps_offered, b.seconds, join(why, " and by "));
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
  if (d.kv_cache) rep.tables.push_back(kv_table(*d.kv_cache));
  rep.notes = r.notes;
  if (d.kv_cache)
    if (const auto note = bound_note(*d.kv_cache)) rep.notes.push_back(*note);
  if (d.kv_cache && !d.kv_cache->formats.empty())
    rep.notes.push_back(fmt::format("a KV format's bytes/token is what cache-sim's prefix mode turns into capacity: "
                                    "lite cache-sim TRACE --kv-bytes-per-token {:.0f} (docs/cache-sim.md)",
                                    d.kv_cache->formats.front().bytes_per_token));
  rep.notes.push_back(fmt::format("tolerance: {:.2f}% {} (* marks the written mode{})", r.tolerance,
                                  d.reference.perplexity ? "perplexity increase over frozen float"
                                                         : "of positions whose greedy token changed",
                                  r.output.empty() ? "; dry run: nothing written" : ", " + r.output));
}

}  // namespace lite::quantize
