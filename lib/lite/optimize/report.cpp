// lite optimize's result as JSON and as a report: the search in numbers (proposed, screened out, measured, where
// the time went), one row per variant (what it is, its size, quality, latency, cache, verdict), the frontier with
// the choice marked, why each family lost, and the nearest misses when nothing met the target.
#include <fmt/format.h>

#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/optimize/decoder_search_report.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/optimize.hpp"
#include "lite/optimize/verb.hpp"

namespace lite::optimize {

std::string VariantSpec::label() const { return prune_family() + " + " + mode; }

std::string VariantSpec::prune_family() const {
  if (by_sensitivity) return std::string("prune by sensitivity") + (recovered ? " (recovered)" : "");
  if (prune_ratio <= 0) return "no pruning";
  return fmt::format("prune {:g}{}", prune_ratio, recovered ? " (recovered)" : "");
}

void to_json(nlohmann::json& j, const VariantSpec& s) {
  j = {{"prune_ratio", s.prune_ratio}, {"by_sensitivity", s.by_sensitivity}, {"recovered", s.recovered},
       {"mode", s.mode},          {"label", s.label()}};
}

void to_json(nlohmann::json& j, const Quality& q) {
  j = {{"metric", q.metric}, {"samples", q.samples},   {"reference", q.reference}, {"value", q.value},
       {"drop", q.drop},     {"drop_low", q.drop_low}, {"drop_high", q.drop_high}};
}

void from_json(const nlohmann::json& j, Quality& q) {
  q.metric = j.at("metric").get<std::string>();
  q.samples = j.at("samples").get<int64_t>();
  q.reference = j.at("reference").get<double>();
  q.value = j.at("value").get<double>();
  q.drop = j.at("drop").get<double>();
  q.drop_low = j.at("drop_low").get<double>();
  q.drop_high = j.at("drop_high").get<double>();
}

void to_json(nlohmann::json& j, const Latency& l) {
  j = {{"calls", l.calls},
       {"mean_ms", l.mean_ms},
       {"p50_ms", l.p50_ms},
       {"p99_ms", l.p99_ms},
       {"p99_low_ms", l.p99_low_ms},
       {"p99_high_ms", l.p99_high_ms},
       {"original_p50_ms", l.original_p50_ms},
       {"window_scale", l.window_scale},
       {"speedup", l.speedup},
       {"speedup_low", l.speedup_low},
       {"speedup_high", l.speedup_high},
       {"note", l.note}};
}

void from_json(const nlohmann::json& j, Latency& l) {
  l.calls = j.at("calls").get<int64_t>();
  l.mean_ms = j.at("mean_ms").get<double>();
  l.p50_ms = j.at("p50_ms").get<double>();
  l.p99_ms = j.at("p99_ms").get<double>();
  l.p99_low_ms = j.value("p99_low_ms", l.p99_ms);
  l.p99_high_ms = j.value("p99_high_ms", l.p99_ms);
  l.original_p50_ms = j.at("original_p50_ms").get<double>();
  l.window_scale = j.value("window_scale", 1.0);
  l.speedup = j.at("speedup").get<double>();
  l.speedup_low = j.at("speedup_low").get<double>();
  l.speedup_high = j.at("speedup_high").get<double>();
  l.note = j.value("note", "");
}

void to_json(nlohmann::json& j, const CacheFit& c) {
  j = {{"reached", c.reached}, {"policy", c.policy},   {"size", c.size},     {"size_text", c.size_text},
       {"hit_ratio", c.hit_ratio}, {"mean_ms", c.mean_ms}, {"p50_ms", c.p50_ms}, {"p99_ms", c.p99_ms},
       {"best_ms", c.best_ms}};
}

namespace {
template <class T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}
}  // namespace

void to_json(nlohmann::json& j, const Variant& v) {
  j = {{"spec", v.spec},
       {"key", v.key},
       {"artifact", v.artifact},
       {"layer_ratios", v.layer_ratios},
       {"file_bytes", v.file_bytes},
       {"status", v.status},
       {"reason", v.reason},
       {"screen_quality", optional_json(v.screen_quality)},
       {"screen_latency", optional_json(v.screen_latency)},
       {"quality", optional_json(v.quality)},
       {"latency", optional_json(v.latency)},
       {"cache", optional_json(v.cache)},
       {"peak_rss_bytes", v.peak_rss_bytes},
       {"rss_before_bytes", v.rss_before_bytes},
       {"reused", v.reused},
       {"build_s", v.build_s},
       {"screen_s", v.screen_s},
       {"measure_s", v.measure_s},
       {"meets_accuracy", v.meets_accuracy},
       {"meets_latency_alone", v.meets_latency_alone},
       {"feasible", v.feasible},
       {"cost", v.cost},
       {"on_frontier", v.on_frontier},
       {"chosen", v.chosen},
       {"verdict", v.verdict}};
}

void to_json(nlohmann::json& j, const OptimizeResult& r) {
  nlohmann::json time = nlohmann::json::array();
  for (const auto& t : r.time) time.push_back({{"stage", t.stage}, {"seconds", t.seconds}});
  j = {{"model", r.model},
       {"model_sha256", r.model_sha256},
       {"model_bytes", r.model_bytes},
       {"input", r.input},
       {"target", {{"key", r.target.key}, {"value", r.target.value}, {"batch", r.target.batch},
                   {"text", r.target.describe()}}},
       {"accuracy_budget", r.accuracy_budget},
       {"metric", r.metric},
       {"eval", r.eval_source},
       {"original_quality", optional_json(r.original_quality)},
       {"original_latency", optional_json(r.original_latency)},
       {"objective", r.objective},
       {"variants", r.variants},
       {"search", {{"proposed", r.proposed}, {"screened_out", r.screened_out}, {"skipped", r.skipped},
                   {"failed", r.failed}, {"measured", r.measured}, {"reused", r.reused},
                   {"budget_exhausted", r.budget_exhausted}}},
       {"chosen", r.chosen ? nlohmann::json(r.variants[*r.chosen].spec) : nlohmann::json()},
       {"family_verdicts", r.family_verdicts},
       {"nearest_misses", r.nearest_misses},
       {"output", r.output},
       {"emitted_recipe", r.emitted_recipe},
       {"plot", r.plot},
       {"work_dir", r.work_dir},
       {"cache_unit", r.cache_unit},
       {"time", time},
       {"wall_s", r.wall_s},
       {"gates", r.gates},
       {"machine_load", r.machine_load},
       {"notes", r.notes},
       {"decoder", r.decoder ? nlohmann::json(*r.decoder) : nlohmann::json(nullptr)}};
}

namespace {

std::string served_column(const Target& t) {
  if (t.key == "target_throughput") return "samples/s";
  if (t.key == "target_speedup") return "speedup";
  return t.key == "target_p50_ms" ? "p50 ms served" : "p99 ms served";
}

std::string quality_cell(const Variant& v) {
  const auto& q = v.quality ? v.quality : v.screen_quality;
  if (!q) return "-";
  return fmt::format("{:.2f} ({:+.2f}){}", q->value, -q->drop, v.quality ? "" : "*");
}

std::string latency_cell(const std::optional<Latency>& l, double Latency::*field) {
  return l ? fmt::format("{:.3f}", (*l).*field) : "-";
}

std::string cache_cell(const Variant& v, const std::string& unit) {
  if (v.meets_latency_alone && v.status == "measured") return "none needed";
  if (!v.cache) return "-";
  if (!v.cache->reached) return "none reaches it";
  return fmt::format("{} {}", v.cache->policy, unit == "bytes" ? format_bytes(double(v.cache->size))
                                                               : fmt::format("{} obj", v.cache->size));
}

std::string verdict_cell(const Variant& v) {
  if (v.chosen) return "CHOSEN";
  if (v.status != "measured") return v.status;
  if (!v.meets_accuracy) return "over the accuracy budget";
  if (!v.feasible) return "misses the target";
  return v.on_frontier ? "meets it (frontier)" : "meets it (dominated)";
}

std::string served_words(const Variant& v, const Target& t) {
  const double figure = served_figure(v, t);
  if (t.key == "target_throughput") return fmt::format("{:.0f} samples/s", figure);
  if (t.key == "target_speedup") return fmt::format("{:.2f}x the frozen original", figure);
  return fmt::format("{} {:.3g} ms{}", t.key == "target_p50_ms" ? "p50" : "p99", figure,
                     cache_size_needed(v) ? " per request" : "");
}

report::Table variants_table(const OptimizeResult& r) {
  report::Table t;
  t.title = fmt::format("Variants ({}; * = screened on a subset only)", r.metric);
  t.columns = {"variant", "size", r.metric == "top-1 accuracy" ? "accuracy %" : "agreement %", "p50 ms", "p99 ms",
               "speedup", "peak RSS", "cache", "verdict"};
  // Before: the original as given (its file), timed in its fastest float form in memory, the baseline of every
  // speedup below.
  if (r.original_latency && r.original_quality)
    t.rows.push_back({"original (baseline)", format_bytes(double(r.model_bytes)),
                      fmt::format("{:.2f}", r.original_quality->value), latency_cell(r.original_latency, &Latency::p50_ms),
                      latency_cell(r.original_latency, &Latency::p99_ms), "1.00x", "-", "-", "-"});
  for (const Variant& v : r.variants) {
    const auto& l = v.latency ? v.latency : v.screen_latency;
    t.rows.push_back({v.spec.label() + (v.reused ? " (reused)" : ""), v.file_bytes ? format_bytes(double(v.file_bytes)) : "-",
                      quality_cell(v), latency_cell(l, &Latency::p50_ms), latency_cell(l, &Latency::p99_ms),
                      l ? fmt::format("{:.2f}x", l->speedup) : "-",
                      v.peak_rss_bytes ? format_bytes(double(v.peak_rss_bytes)) : "-",
                      cache_cell(v, r.cache_unit), verdict_cell(v)});
  }
  return t;
}

// The Pareto frontier over the four things traded: accuracy lost, the served latency figure, cache, artifact size.
report::Table frontier_table(const OptimizeResult& r) {
  report::Table t;
  t.title = "Frontier (no variant is at least as good in all four and better in one)";
  t.columns = {"variant", "points lost", served_column(r.target), "p99 95% interval", "cache", "size", ""};
  for (const Variant& v : r.variants) {
    if (!v.on_frontier) continue;
    t.rows.push_back({v.spec.label(), fmt::format("{:.2f}", v.quality->drop),
                      fmt::format("{:.3g}", served_figure(v, r.target)),
                      fmt::format("[{:.3g}, {:.3g}] ms", v.latency->p99_low_ms, v.latency->p99_high_ms),
                      cache_size_needed(v) ? cache_cell(v, r.cache_unit) : "none",
                      format_bytes(double(v.file_bytes)), v.chosen ? "<- chosen" : ""});
  }
  return t;
}

report::Table search_table(const OptimizeResult& r) {
  report::Table t;
  t.title = "Search";
  t.columns = {"what", "value"};
  t.left_aligned_columns = 2;
  t.rows = {{"target", r.target.describe()},
            {"accuracy budget", fmt::format("{:g} points of {} on {}", r.accuracy_budget, r.metric, r.eval_source)},
            {"objective", r.objective},
            {"variants proposed", std::to_string(r.proposed)},
            {"screened out", std::to_string(r.screened_out)},
            {"skipped", std::to_string(r.skipped)},
            {"failed to build", std::to_string(r.failed)},
            {"measured fully", std::to_string(r.measured)},
            {"reused from the work folder", std::to_string(r.reused)}};
  for (const auto& s : r.time) t.rows.push_back({"time: " + s.stage, fmt::format("{:.1f} s", s.seconds)});
  t.rows.push_back({"wall time", fmt::format("{:.1f} s", r.wall_s)});
  return t;
}

}  // namespace

report::Report to_report(const OptimizeResult& r) {
  report::Report rep = torch_verb_report(verb().name, r);
  if (r.decoder) {
    add_decoder_search_views(r, rep);
    for (const auto& n : r.notes) rep.notes.push_back(n);
    return rep;
  }
  rep.tables.push_back(search_table(r));
  rep.tables.push_back(variants_table(r));
  if (r.measured > 0) rep.tables.push_back(frontier_table(r));
  if (r.chosen) {
    const Variant& v = r.variants[*r.chosen];
    rep.notes.push_back(fmt::format(
        "chosen: {} ({}{}); {}; {:.2f} points of {} lost; artifact {}", v.spec.label(),
        format_bytes(double(v.file_bytes)),
        cache_size_needed(v) ? fmt::format(", behind a {} cache of {}", v.cache->policy,
                                           r.cache_unit == "bytes" ? format_bytes(double(v.cache->size))
                                                                   : fmt::format("{} objects", v.cache->size))
                             : "",
        served_words(v, r.target), v.quality->drop, r.metric, r.output));
  }
  for (const auto& line : r.family_verdicts) rep.notes.push_back("lost: " + line);
  for (const auto& f : r.findings) rep.findings.push_back(f);
  for (const auto& line : r.nearest_misses)
    rep.findings.push_back({"warning", "nearest miss: " + line, r.target.describe(),
                            std::string("relax the target or the budget, widen the search ({prune_ratios}, {modes})") +
                                (r.cache_searched ? ", or give the cache more sizes ({cache_sizes})"
                                                  : ", or add a cache ({trace})")});
  for (const auto& n : r.notes) rep.notes.push_back(n);
  return rep;
}

}  // namespace lite::optimize
