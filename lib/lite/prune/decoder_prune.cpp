// lite prune on a decoder (docs/prune.md "Decoders"): find its attentions and MLPs, cut KV heads (each with its
// query group) and MLP width, prove the pruned decoder prefills and decodes, then judge it as it serves: next-token
// agreement with the original on every scored position (and perplexity on --eval token ids), time to first token
// and per token, and the KV bytes per token its returned cache measures, checked against the formula with the new
// kv_heads. Both decoders are timed as loaded, one after the other, under the same plan.
#include <fmt/format.h>

#include <filesystem>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/llm/decoder.hpp"
#include "lite/llm/generation_timing.hpp"
#include "lite/llm/token_data.hpp"
#include "lite/llm/token_quality.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/prune/decoder_internal.hpp"
#include "lite/prune/plan_internal.hpp"
#include "lite/prune/prune.hpp"

namespace lite::prune {

namespace {

constexpr int64_t kScoreBatch = 4;

// Options that shape a classifier's run and mean nothing for a decoder's.
void refuse_options(const PruneOptions& o) {
  auto refuse = [](const char* key, const std::string& why) {
    throw OptionError(key, why, "drop it: a decoder is pruned by {heads} and {ratio} and judged on tokens (docs/prune.md)");
  };
  if (o.global) refuse("global", "ranks channels across a classifier's groups; a decoder's heads and MLP units are ranked per layer");
  if (o.sensitivity) refuse("sensitivity", "analyses channel groups one forward call at a time, not a decoder");
  if (o.labels) refuse("labels", "labels a classifier's samples; a decoder is judged on the next tokens of {eval}'s ids");
  if (o.data) refuse("data", "feeds the taylor criterion, which a decoder's run does not take");
  if (!o.inputs.empty()) refuse("inputs", "shapes one forward call; a decoder's lengths are {prompt_tokens} and {generate}");
  if (!o.ratio && !o.heads && o.layer_ratios.empty())
    throw OptionError("heads", "or {ratio} is required on a decoder: what to prune",
                      "pass {heads} 0.25 (KV heads) and/or {ratio} 0.25 (MLP width)");
  const std::string c = to_lower(o.criterion);
  if (c != "l1" && c != "l2")
    throw OptionError("criterion", "'" + o.criterion + "' does not rank a decoder's heads", "use {criterion} l1 or l2");
}

void fill_counts(DecoderFigures& f, const DecoderParts& parts, bool after) {
  for (const auto& p : parts.attention) {
    f.heads += after ? p.cut.heads_kept : p.cut.heads;
    f.kv_heads += after ? p.cut.kv_heads_kept : p.cut.kv_heads;
  }
  for (const auto& p : parts.mlp) f.mlp_width += after ? p.cut.kept : p.cut.width;
}


// The pruned decoder must prefill and take a decode step before anything is judged or written.
void check_decoder_runs(llm::Decoder& pruned) {
  try {
    const llm::Step first = pruned.prefill(torch::zeros({1, 4}, torch::kInt64));
    pruned.extend(torch::zeros({1, 1}, torch::kInt64), first.cache);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InternalError("the pruned decoder does not run (" + model::torch_error_reason(e) +
                        "); nothing was written. Please report this with the model; {exclude} the modules named may help");
  }
}

struct Decoders {
  llm::Decoder& original;
  llm::Decoder& pruned;
};

// Next-token agreement with the original on every scored position, and perplexity on real token ids.
void judge_quality(const PruneOptions& o, Decoders d, Progress& progress, DecoderPruneResult& r) {
  const int64_t vocab = d.original.prefill(torch::zeros({1, 1}, torch::kInt64)).last_logits.size(-1);
  const llm::TokenData data = llm::load_token_data(o.eval, std::nullopt, vocab, d.original.max_positions());
  const llm::ReferenceTokens ref = llm::score_reference(d.original, data.tokens, kScoreBatch, progress);
  const llm::TokenQuality q = llm::score_candidate(d.pruned, data.tokens, kScoreBatch, ref, progress);
  r.quality_data = data.name;
  r.scored_tokens = ref.scored_tokens;
  r.before.agreement = 1;
  r.after.agreement = q.agreement;
  if (data.real) r.before.perplexity = ref.perplexity, r.after.perplexity = q.perplexity;
}

// The lengths both decoders are timed at; a prompt and generation beyond the model's positions is refused here,
// before any cut.
llm::GenerationPlan timing_plan(const PruneOptions& o, const llm::Decoder& original, PruneResult& r) {
  llm::GenerationPlan plan = llm::timed_plan({}, o.timing, o.decoder, original, r.notes);
  llm::check_context(original, plan);
  return plan;
}

void time_both(const llm::GenerationPlan& plan, Decoders d, Progress& progress, PruneResult& r) {
  DecoderPruneResult& dr = *r.decoder;
  dr.prompt_tokens = plan.prompt_tokens;
  dr.generated_tokens = plan.new_tokens;
  progress.announce(fmt::format("lite prune: timing the original decoder, then the pruned one: {} prompt tokens, {} "
                                "generated, about {:.0f} s each", plan.prompt_tokens, plan.new_tokens, plan.duration_s));
  measure::LoadWatch load(r.threads);
  fill_speed(dr.before, llm::time_generation(d.original, plan, progress));
  fill_speed(dr.after, llm::time_generation(d.pruned, plan, progress));
  r.load = load.result();
  if (r.load.oversubscribed())
    r.findings.push_back(measure::oversubscription_finding(r.load, "the decoder timing", "its times are untrusted"));
}

// Without a tolerance, the "agreement" gate fails beyond {agreement_floor} points of next-token agreement lost;
// with one, the "tolerance" gate beyond it.
void judge_gates(const PruneOptions& o, PruneResult& r) {
  const double lost = 100 * (1 - r.decoder->after.agreement);
  r.agreement_floor = o.agreement_floor;
  const double limit = o.tolerance.value_or(o.agreement_floor);
  if (lost <= limit) return;
  r.gates.fail(o.tolerance ? "tolerance" : "agreement");
  r.findings.push_back(
      {"warning",
       fmt::format("the pruned decoder's next token agrees with the original's on {:.2f}% of {} positions ({:.2f} "
                   "points lost)", 100 - lost, r.decoder->scored_tokens, lost),
       fmt::format("{} {:.2f} points", o.tolerance ? "{tolerance}" : "{agreement_floor}", limit),
       "lower {heads} or {ratio}, {exclude} the layers that matter most, or recover with lite distill"});
}

void write_decoder_artifact(const PruneOptions& o, const model::LoadedModel& source, const std::string& bytes,
                            const RunContext& context, PruneResult& r) {
  const DecoderPruneResult& d = *r.decoder;
  model::ArtifactInfo info;
  info.transform = "prune";
  info.command_line = context.command_line;
  info.details = {{"method", "structured"}, {"criterion", r.criterion},
                  {"decoder", {{"form", d.form}, {"attention", d.attention}, {"mlp", d.mlp}}},
                  {"heads", o.heads ? nlohmann::json(*o.heads) : nlohmann::json()},
                  {"ratio", o.ratio ? nlohmann::json(*o.ratio) : nlohmann::json()}, {"layer_ratios", o.layer_ratios},
                  {"exclude", o.exclude}};
  info.figures = {{"parameters", {{"before", d.before.parameters}, {"after", d.after.parameters}}},
                  {"kv_bytes_per_token", {{"before", d.before.kv_bytes_per_token}, {"after", d.after.kv_bytes_per_token}}},
                  {"quality", {{"agreement", d.after.agreement}, {"perplexity", d.after.perplexity.value_or(-1)},
                               {"original_perplexity", d.before.perplexity.value_or(-1)}, {"data", d.quality_data}}}};
  const std::filesystem::path out = output_path(o);
  throw_if_interrupted();  // the last moment a Ctrl-C leaves every file untouched
  model::save_artifact(deserialize(bytes), out, source, info);
  r.output = out.string();
  r.decoder->after.file_bytes = std::filesystem::file_size(out);
}

}  // namespace

void fill_speed(DecoderFigures& f, const llm::GenerationStats& s) {
  f.ttft_p50_ms = s.ttft_ms.p50;
  f.tpot_p50_ms = s.tpot_ms.count ? s.tpot_ms.p50 : 0;
  f.tpot_p99_ms = s.tpot_ms.count ? s.tpot_ms.p99 : 0;
  f.decode_tokens_per_s = s.decode_tokens_per_s;
  f.kv_bytes_per_token = s.cache.bytes_per_token;
  f.kv_formula_bytes_per_token = s.cache.formula_bytes_per_token();
}

bool is_decoder_run(const PruneOptions& o, const torch::jit::Module& module) {
  return o.heads || o.decoder.given() || llm::takes_kv_cache(module);
}

void run_decoder(const PruneOptions& o, model::LoadedModel& source, Progress& progress, const RunContext& context,
                 PruneResult& r) {
  refuse_options(o);
  const std::string path = source.path.string();
  DecoderParts parts = find_decoder_parts(source.module);
  if (parts.attention.empty() && parts.mlp.empty())
    throw InputError(path, "is a decoder with no attention (q, k, v, o linears) or MLP (up, down linears) lite can cut",
                     "name the modules as docs/prune.md \"Decoders\" lists them");
  plan_decoder_cut(parts, o);
  r.decoder = DecoderPruneResult{};
  DecoderPruneResult& d = *r.decoder;
  for (const auto& p : parts.attention) d.attention.push_back(p.cut);
  for (const auto& p : parts.mlp) d.mlp.push_back(p.cut);
  fill_counts(d.before, parts, false);
  fill_counts(d.after, parts, true);
  d.before.parameters = count_unique_parameters(source.module);
  d.before.file_bytes = source.file_bytes;
  r.planned_parameters = planned_decoder_parameters(source.module, parts);
  torch::jit::Module original = deserialize(serialize(source.module));
  llm::Decoder reference(original, path);
  d.form = llm::form_name(reference.form());
  if (o.dry_run) return;
  const llm::GenerationPlan plan = timing_plan(o, reference, r);

  const std::string bytes = cut_decoder(source.module, parts, r.criterion);
  torch::jit::Module pruned_module = deserialize(bytes);
  llm::Decoder pruned(pruned_module, path + " (pruned)", reference.max_positions());
  check_decoder_runs(pruned);
  d.after.parameters = count_unique_parameters(pruned_module);
  if (d.after.parameters != r.planned_parameters)
    throw InternalError(fmt::format("the pruned decoder has {} parameters, the plan {}", d.after.parameters,
                                    r.planned_parameters));
  judge_quality(o, {reference, pruned}, progress, d);
  time_both(plan, {reference, pruned}, progress, r);
  if (d.after.kv_bytes_per_token != d.after.kv_formula_bytes_per_token)
    throw InternalError(fmt::format("the pruned decoder's cache measures {:.0f} bytes a token, its shapes say {:.0f}",
                                    d.after.kv_bytes_per_token, d.after.kv_formula_bytes_per_token));
  throw_if_interrupted();
  write_decoder_artifact(o, source, bytes, context, r);
  judge_gates(o, r);
  r.notes.push_back("both decoders were timed as loaded (not frozen), the original first");
}

}  // namespace lite::prune
