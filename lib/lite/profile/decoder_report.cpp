// JSON and table views of a decoder's profile (ProfileResult::decoder): the model, generation as it serves
// (time to first token, time per token), warm-up, the KV cache, and the prefill-cost table when one was written.
#include "lite/profile/decoder_report.hpp"

#include <fmt/format.h>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/text.hpp"

namespace lite::profile {

namespace {

std::string per_s(double v) { return fmt::format("{:.1f}", v); }

std::string ms_list(const std::vector<double>& ms) {
  std::vector<std::string> parts;
  for (double v : ms) parts.push_back(format_ms(v));
  return parts.empty() ? "-" : join(parts, ", ");
}

report::Table decoder_model_table(const ProfileResult& r) {
  const ModelProfile& m = r.models[0];
  const llm::GenerationStats& s = *r.decoder;
  report::Table t{"Decoder", {"", m.path}, {}};
  t.rows.push_back({"size on disk", format_bytes(double(m.facts.file_bytes))});
  t.rows.push_back({"parameters", format_count(m.facts.parameters)});
  t.rows.push_back({"form", s.form});
  t.rows.push_back({"vocabulary", format_count(uint64_t(s.vocab))});
  t.rows.push_back({"positions", s.max_positions ? format_count(uint64_t(*s.max_positions)) : "not stated"});
  if (s.cache.layers)
    t.rows.push_back({"KV cache", fmt::format("{} layers x {} KV heads x {} head dim, {}", s.cache.layers, s.cache.kv_heads,
                                              s.cache.head_dim, s.cache.dtype)});
  t.left_aligned_columns = 2;
  return t;
}

report::Table generation_table(const ProfileResult& r) {
  const llm::GenerationStats& s = *r.decoder;
  report::Table t{fmt::format("Generation (batch {}, {} prompt tokens, {} generated, greedy; {} timed runs)", s.batch,
                              s.prompt_tokens, s.new_tokens, s.runs),
                  {"metric", "mean", "p50", "p99"}, {}};
  t.rows.push_back({"time to first token (ms)", format_ms(s.ttft_ms.mean), format_ms(s.ttft_ms.p50), format_ms(s.ttft_ms.p99)});
  if (s.tpot_ms.count)
    t.rows.push_back({"time per output token (ms)", format_ms(s.tpot_ms.mean), format_ms(s.tpot_ms.p50), format_ms(s.tpot_ms.p99)});
  t.rows.push_back({"prefill tokens/s (at p50)", "", per_s(s.prefill_tokens_per_s), ""});
  if (s.tpot_ms.count) t.rows.push_back({"decode tokens/s (at p50)", "", per_s(s.decode_tokens_per_s), ""});
  t.rows.push_back({"warm-up TTFT, in order (ms)", ms_list(s.warmup_ttft_ms), "", ""});
  t.rows.push_back({"warm-up first decode step (ms)", ms_list(s.warmup_first_step_ms), "", ""});
  return t;
}

report::Table memory_table(const ProfileResult& r) {
  const llm::GenerationStats& s = *r.decoder;
  report::Table t{"Memory", {"", "bytes"}, {}};
  if (s.cache.layers) {
    t.rows.push_back({"KV bytes per token (measured)", format_bytes(s.cache.bytes_per_token)});
    t.rows.push_back({"KV bytes per token (layers x heads x dim x 2 x dtype)", format_bytes(s.cache.formula_bytes_per_token())});
    t.rows.push_back({fmt::format("KV cache at {} tokens (after the prompt)", s.prompt_tokens), format_bytes(s.kv_bytes_after_prefill)});
    t.rows.push_back({fmt::format("KV cache at {} tokens (at the end)", s.prompt_tokens + s.new_tokens - 1),
                      format_bytes(s.kv_bytes_at_end)});
  }
  t.rows.push_back({"model tensors", format_bytes(double(r.models[0].facts.tensor_bytes))});
  t.rows.push_back({"peak RSS", format_bytes(double(r.models[0].peak_rss_bytes))});
  return t;
}

}  // namespace

nlohmann::json decoder_json(const ProfileResult& r) {
  const ModelProfile& m = r.models[0];
  nlohmann::json j{{"model",
                    {{"path", m.path},
                     {"sha256", m.sha256},
                     {"file_bytes", m.facts.file_bytes},
                     {"parameters", m.facts.parameters},
                     {"tensor_bytes", m.facts.tensor_bytes}}},
                   {"cold_start", {{"load_ms", m.load_ms}}},
                   {"memory", {{"peak_rss_bytes", m.peak_rss_bytes}, {"rss_before_load_bytes", m.rss_before_load_bytes}}},
                   {"threads", r.threads},
                   {"machine_load", r.load},
                   {"notes", r.notes},
                   {"decoder", *r.decoder}};
  if (r.prefill_cost) {
    const auto& p = *r.prefill_cost;
    j["prefill_cost"] = {{"path", p.path},
                         {"points", p.points},
                         {"fit", cache::prefix::prefill_model_json(p.model)},
                         {"max_relative_error", p.max_relative_error}};
  }
  return j;
}

void add_decoder_views(const ProfileResult& r, report::Report& rep) {
  rep.tables.push_back(decoder_model_table(r));
  rep.tables.push_back(generation_table(r));
  rep.tables.push_back(memory_table(r));
  rep.notes = r.notes;
  if (r.prefill_cost) {
    const auto& p = *r.prefill_cost;
    rep.notes.push_back(fmt::format("wrote the prefill-cost table {} ({} points): fitted {}, largest error {:.1f}%; "
                                    "lite cache-sim --prefill-cost-from reads it",
                                    p.path, p.points, cache::prefix::prefill_model_text(p.model),
                                    100 * p.max_relative_error));
  }
  rep.notes.push_back("TTFT: the prompt's prefill and the first token's choice; time per output token: one decode step "
                      "and its argmax. Warm-up generations are reported apart and left out of the steady figures.");
}

}  // namespace lite::profile
