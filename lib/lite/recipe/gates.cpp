// lite run's gates: each bound the recipe sets, measured and compared. Model gates read the comparison of the final
// artifact with the frozen original (evaluate.cpp); the speedup is over the fastest float original (frozen and
// optimized for inference in memory, as every verb's speed figures); cache gates read the last cache-sim step at its largest
// simulated size (the size the recipe chose), taking the best deployable policy (Belady, an offline bound, is
// left out) and, with miss_latency_from, the best model variant; on a prefix trace, the token hit ratio and TTFT
// p99 at the largest capacity (the offline radix-reference left out). A gate that cannot be measured fails and says
// why. A step's own failed gate (quantize's tolerance, distill's NaN guard) fails the run too. A decoder's final
// artifact is judged in the decoder's terms instead (decoder_gates, evaluate_decoder.cpp).
#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/recipe/runner_internal.hpp"

namespace lite::recipe::detail {

namespace {

GateResult gate(const std::string& name, const char* comparison, double bound, const char* unit) {
  GateResult g;
  g.name = name;
  g.comparison = comparison;
  g.bound = bound;
  g.unit = unit;
  return g;
}

void measured(GateResult& g, std::optional<double> value, std::string detail) {
  g.value = value;
  g.detail = std::move(detail);
  if (value) g.passed = g.comparison == ">=" ? *value >= g.bound : *value <= g.bound;
}

// A gate that judges a speed (min_speedup, max_p99_ms) on a timing that cannot be trusted, taken on an
// oversubscribed machine or showing an implausible speedup, fails unless {allow_noisy}: a noisy machine must not
// pass (or fail) a CI gate by chance. The finding that names the load is added once, by check_gates.
void judge_trust(GateResult& g, const Measured& m, bool implausible) {
  if (!g.value || (!m.load.oversubscribed() && !implausible)) return;
  const std::string why = implausible ? "implausible: the baseline was probably disturbed"
                                      : "untrusted: timed on an oversubscribed machine (" + m.load.describe() + ")";
  if (m.allow_noisy) {
    g.detail += "; " + why + ", accepted with {allow_noisy}";
    return;
  }
  g.passed = false;
  g.detail += "; " + why + ": rerun on a quiet machine, or accept it with {allow_noisy}";
}

void size_gate(const GateBounds& b, const Measured& m, std::vector<GateResult>& out) {
  if (!b.max_size_bytes) return;
  auto g = gate("max_size", "<=", double(*b.max_size_bytes), "bytes");
  measured(g, m.final_bytes ? std::optional<double>(double(m.final_bytes)) : std::nullopt,
           fmt::format("the final model's file ({})", format_bytes(double(m.final_bytes))));
  out.push_back(g);
}

// A decoder's gates, in the terms lite quantize judges one by: quality lost (perplexity % on real tokens, else % of
// next tokens changed), next-token agreement, decode tokens/s over the frozen original's, time per output token.
void decoder_gates(const GateBounds& b, const Measured& m, std::vector<GateResult>& out) {
  const DecoderEvaluation& e = *m.decoder;
  const std::string on = fmt::format("{} prompt + {} generated tokens, {} thread(s)", e.prompt_tokens,
                                     e.generated_tokens, e.threads);
  if (b.max_accuracy_drop) {
    auto g = gate("max_accuracy_drop", "<=", *b.max_accuracy_drop, "%");
    measured(g, e.quality_loss_pct(),
             e.real_tokens ? fmt::format("perplexity {:.3f} -> {:.3f} on {}", e.original.perplexity.value_or(0),
                                         e.final_model.perplexity.value_or(0), e.quality_data)
                           : fmt::format("% of next tokens changed on {}", e.quality_data));
    out.push_back(g);
  }
  if (b.min_agreement) {
    auto g = gate("min_agreement", ">=", *b.min_agreement, "%");
    measured(g, 100 * e.final_model.agreement,
             fmt::format("next-token agreement with the original on {} positions of {}", e.scored_tokens,
                         e.quality_data));
    out.push_back(g);
  }
  if (b.min_speedup) {
    auto g = gate("min_speedup", ">=", *b.min_speedup, "x");
    if (e.original.decode_tokens_per_s > 0)
      measured(g, e.final_model.decode_tokens_per_s / e.original.decode_tokens_per_s,
               fmt::format("decode tokens/s {:.1f} -> {:.1f} over the frozen original, each the faster of two "
                           "rounds in turn, {}", e.original.decode_tokens_per_s, e.final_model.decode_tokens_per_s, on));
    else
      measured(g, std::nullopt, "the original decoded nothing");
    judge_trust(g, m, g.value && measure::implausible_speedup(*g.value));
    out.push_back(g);
  }
  if (b.max_p99_ms) {
    auto g = gate("max_p99_ms", "<=", *b.max_p99_ms, "ms");
    measured(g, e.final_model.tpot_p99_ms, fmt::format("p99 time per output token of the final decoder, {}", on));
    judge_trust(g, m, false);
    out.push_back(g);
  }
}

void model_gates(const GateBounds& b, const Measured& m, std::vector<GateResult>& out) {
  if (m.decoder) {
    decoder_gates(b, m, out);
    size_gate(b, m, out);
    return;
  }
  const profile::ProfileResult* e = m.evaluation ? &*m.evaluation : nullptr;
  const bool compared = e && e->models.size() == 2 && e->comparison;
  const std::string on = compared ? fmt::format("batch {}, {} thread(s)", e->batch, e->threads) : "";
  if (b.max_accuracy_drop) {
    auto g = gate("max_accuracy_drop", "<=", *b.max_accuracy_drop, "points");
    if (compared && e->models[0].accuracy && e->models[1].accuracy)
      measured(g, e->models[0].accuracy->percent() - e->models[1].accuracy->percent(),
               fmt::format("top-1 {:.2f}% -> {:.2f}% on {} samples", e->models[0].accuracy->percent(),
                           e->models[1].accuracy->percent(), e->models[1].accuracy->total));
    else
      measured(g, std::nullopt, "no accuracy: the evaluation data has no labels");
    out.push_back(g);
  }
  if (b.min_agreement) {
    auto g = gate("min_agreement", ">=", *b.min_agreement, "%");
    if (compared)
      measured(g, 100.0 * e->comparison->agreement.top1_agreement,
               fmt::format("top-1 agreement with the original on {}", e->comparison->agreement_data));
    else
      measured(g, std::nullopt, "no comparison was made");
    out.push_back(g);
  }
  if (b.min_speedup) {
    auto g = gate("min_speedup", ">=", *b.min_speedup, "x");
    if (compared && m.speedup)
      measured(g, m.speedup->estimate,
               fmt::format("over the original frozen + optimized in memory, 95% CI [{:.2f}, {:.2f}], {}; "
                           "{:.2f}x over the frozen file",
                           m.speedup->low, m.speedup->high, on, e->comparison->speedup.estimate));
    else if (compared)
      measured(g, e->comparison->speedup.estimate,
               fmt::format("over the frozen original, 95% CI [{:.2f}, {:.2f}], {}",
                           e->comparison->speedup.low, e->comparison->speedup.high, on));
    else
      measured(g, std::nullopt, "no comparison was made");
    judge_trust(g, m, g.value && measure::implausible_speedup(*g.value));
    out.push_back(g);
  }
  if (b.max_p99_ms) {
    auto g = gate("max_p99_ms", "<=", *b.max_p99_ms, "ms");
    if (compared)
      measured(g, e->models[1].latency_ms.p99,
               fmt::format("p99 of {} forwards of the final artifact, {}", e->models[1].latency_ms.count, on));
    else
      measured(g, std::nullopt, "no comparison was made");
    judge_trust(g, m, false);
    out.push_back(g);
  }
  size_gate(b, m, out);
}

// One deployable configuration at the largest size the cache-sim step simulated: what the cache gates read.
struct CacheChoice {
  double hit_ratio = 0;
  std::vector<std::pair<double, std::string>> p99_ms;  // a latency model's p99 (or a prefix study's TTFT p99), where
  std::string where;
};

bool deployable(const cache::SimRecord& r) { return to_lower(r.policy).rfind("belady", 0) != 0; }

// Object traces: each deployable policy at the largest size, with its model variants' p99s.
std::vector<CacheChoice> object_choices(const cache::CacheSimResult& c) {
  uint64_t largest = 0;
  for (const auto& r : c.records) largest = std::max(largest, r.size);
  std::vector<CacheChoice> out;
  for (const auto& r : c.records) {
    if (r.size != largest || !deployable(r)) continue;
    CacheChoice choice{1.0 - r.counters.miss_ratio(), {}, fmt::format("{} at size {}", r.policy, r.size_text)};
    if (r.latency) choice.p99_ms.emplace_back(r.latency->p99_ms, choice.where);
    for (const auto& [variant, figures] : r.variants)
      choice.p99_ms.emplace_back(figures.p99_ms, fmt::format("{} with {}", choice.where, variant));
    out.push_back(std::move(choice));
  }
  return out;
}

// Prefix traces: the token hit ratio and TTFT p99 of each online policy (the offline reference left out) at the
// largest capacity in tokens.
std::vector<CacheChoice> prefix_choices(const cache::prefix::PrefixResult& p) {
  uint64_t largest = 0;
  for (const auto& r : p.rows) largest = std::max(largest, r.capacity_tokens);
  std::vector<CacheChoice> out;
  for (const auto& r : p.rows) {
    if (r.capacity_tokens != largest || cache::prefix::is_offline_policy(r.policy)) continue;
    std::string what = r.policy + (r.kv_dtype.empty() ? "" : " " + r.kv_dtype) + (r.route.empty() ? "" : " / " + r.route);
    CacheChoice choice{r.token_hit_ratio(), {}, fmt::format("{} at {} tokens", what, format_count(r.capacity_tokens))};
    if (r.ttft_p99_ms) choice.p99_ms.emplace_back(*r.ttft_p99_ms, choice.where + ", TTFT");
    out.push_back(std::move(choice));
  }
  return out;
}

void cache_gates(const GateBounds& b, const Measured& m, std::vector<GateResult>& out) {
  if (!b.any_cache_gate()) return;
  std::vector<CacheChoice> choices;
  if (m.cache_sim) choices = m.cache_sim->prefix ? prefix_choices(*m.cache_sim->prefix) : object_choices(*m.cache_sim);
  if (b.min_hit_ratio) {
    auto g = gate("min_hit_ratio", ">=", *b.min_hit_ratio, "");
    const CacheChoice* best = nullptr;
    for (const auto& c : choices)
      if (!best || c.hit_ratio > best->hit_ratio) best = &c;
    if (best)
      measured(g, best->hit_ratio, fmt::format("{} ({})", best->where, m.cache_sim_step));
    else
      measured(g, std::nullopt, "the cache-sim step simulated no policy");
    out.push_back(g);
  }
  if (b.max_cache_p99_ms) {
    auto g = gate("max_cache_p99_ms", "<=", *b.max_cache_p99_ms, "ms");
    const std::pair<double, std::string>* best = nullptr;
    for (const auto& c : choices)
      for (const auto& p99 : c.p99_ms)
        if (!best || p99.first < best->first) best = &p99;
    measured(g, best ? std::optional<double>(best->first) : std::nullopt,
             best ? fmt::format("{} ({})", best->second, m.cache_sim_step)
                  : "the cache-sim step has no latency model: give it miss_latency_ms or miss_latency_from (a prefix "
                    "trace: a prefill cost model)");
    out.push_back(g);
  }
}

}  // namespace

void check_gates(RunResult& result, const Measured& m) {
  if ((m.evaluation || m.decoder) && m.load.oversubscribed())
    result.findings.push_back(measure::oversubscription_finding(
        m.load, "the evaluation of the final artifact",
        m.allow_noisy ? "its latencies and speedup are untrusted"
                      : "its latencies and speedup are untrusted, so min_speedup and max_p99_ms fail ({allow_noisy} "
                        "accepts them)",
        m.allow_noisy));
  const bool compared = m.evaluation && m.evaluation->comparison;
  std::optional<double> speedup = m.speedup    ? std::optional<double>(m.speedup->estimate)
                                  : compared ? std::optional<double>(m.evaluation->comparison->speedup.estimate)
                                             : std::nullopt;
  if (m.decoder && m.decoder->original.decode_tokens_per_s > 0)
    speedup = m.decoder->final_model.decode_tokens_per_s / m.decoder->original.decode_tokens_per_s;
  if (speedup && measure::implausible_speedup(*speedup))
    result.findings.push_back(
        measure::implausible_speedup_finding(*speedup, "the final artifact against the original"));
  auto& out = result.gates_checked;
  model_gates(result.recipe.gates, m, out);
  cache_gates(result.recipe.gates, m, out);
  for (const auto& step : result.steps)
    for (const auto& failed : step.gates.failed) {
      GateResult g;
      g.name = step.key_path + ": " + failed;
      g.detail = "the step's own gate (see its report)";
      out.push_back(g);
    }
  for (const auto& g : out)
    if (!g.passed) result.gates.fail(g.name);
}

}  // namespace lite::recipe::detail
