// JSON and table views of a ProfileResult.
#include <fmt/format.h>

#include "lite/core/text.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/profile/decoder_report.hpp"
#include "lite/profile/profile.hpp"

namespace lite::profile {

void summary_to_json(nlohmann::json& j, const stats::Summary& s) {
  j = nlohmann::json{{"count", s.count}, {"min", s.min}, {"mean", s.mean}, {"std", s.stddev}, {"cv", s.cv},
                     {"p50", s.p50},     {"p90", s.p90}, {"p95", s.p95},   {"p99", s.p99},    {"p999", s.p999},
                     {"max", s.max}};
}

namespace {
nlohmann::json summary_json(const stats::Summary& s) {
  nlohmann::json j;
  summary_to_json(j, s);
  return j;
}

std::string shapes_text(const std::vector<model::InputSpec>& specs) {
  std::vector<std::string> parts;
  for (const auto& s : specs) parts.push_back(model::to_string(s));
  return join(parts, ", ");
}

std::string macs_text(uint64_t macs) {
  if (macs >= 1000000000ULL) return fmt::format("{:.2f} G", macs / 1e9);
  if (macs >= 1000000ULL) return fmt::format("{:.2f} M", macs / 1e6);
  if (macs >= 1000ULL) return fmt::format("{:.1f} K", macs / 1e3);
  return std::to_string(macs);
}

std::string pct(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }
}  // namespace

void to_json(nlohmann::json& j, const OpStat& o) {
  j = nlohmann::json{{"name", o.name}, {"calls", o.calls}, {"self_ms", o.self_ms}, {"total_ms", o.total_ms},
                     {"share", o.share}};
}

void to_json(nlohmann::json& j, const OpProfile& o) {
  j = nlohmann::json{{"iterations", o.iterations}, {"forward_ms", o.forward_ms}, {"by_op", o.by_op},
                     {"by_module", o.by_module}};
}

void to_json(nlohmann::json& j, const LoadRun& r) {
  j = nlohmann::json{{"offered_qps", r.offered_qps},         {"achieved_qps", r.achieved_qps},
                     {"requests", r.requests},               {"utilization", r.utilization},
                     {"waited_fraction", r.waited_fraction}, {"latency_ms", summary_json(r.latency_ms)},
                     {"queue_ms", summary_json(r.queue_ms)}, {"saturated", r.saturated}};
}

void to_json(nlohmann::json& j, const ModelProfile& m) {
  j = nlohmann::json{
      {"model",
       {{"path", m.path},
        {"sha256", m.sha256},
        {"file_bytes", m.facts.file_bytes},
        {"parameters", m.facts.parameters},
        {"tensor_bytes", m.facts.tensor_bytes},
        {"elements_by_dtype", m.facts.elements_by_dtype},
        {"total_macs", m.facts.total_macs},
        {"frozen", m.frozen}}},
      {"layers", m.facts.layers},
      {"cold_start", {{"load_ms", m.load_ms}, {"first_inference_ms", m.first_inference_ms}}},
      {"latency_ms", summary_json(m.latency_ms)},
      {"throughput_samples_per_s", m.throughput},
      {"page_faults_per_call", m.page_faults_per_call},
      {"memory",
       {{"peak_rss_bytes", m.peak_rss_bytes},
        {"rss_before_load_bytes", m.rss_before_load_bytes},
        {"model_file_bytes", m.facts.file_bytes},
        {"parameters", m.facts.parameters}}},
      {"samples_ms", m.samples_ms},
      {"warmup_samples_ms", m.warmup_samples_ms}};
  if (m.accuracy) j["accuracy"] = *m.accuracy;
  if (m.ops) j["ops"] = *m.ops;
  if (!m.load.empty()) j["load"] = m.load;
  if (m.shape_change)
    j["shape_change"] = {{"new_shape", m.shape_change->new_shape},
                         {"first_calls_ms", m.shape_change->first_calls_ms},
                         {"expected_ms", m.shape_change->expected_ms}};
}

void to_json(nlohmann::json& j, const ProfileResult& r) {
  if (r.decoder) {
    j = decoder_json(r);
    return;
  }
  j = nlohmann::json{{"inputs", r.inputs},
                     {"inputs_guessed", r.inputs_guessed},
                     {"batch", r.batch},
                     {"threads", r.threads},
                     {"timing", r.timing},
                     {"percentile_method", "linear interpolation between closest ranks (Hyndman-Fan type 7)"},
                     {"machine_load", r.load},
                     {"notes", r.notes}};
  if (r.models.size() == 1) {
    j.update(nlohmann::json(r.models[0]));
  } else {
    j["models"] = r.models;
  }
  if (r.comparison) {
    const auto& c = *r.comparison;
    j["comparison"] = {{"speedup_b_over_a", c.speedup.estimate},
                       {"speedup_ci_low", c.speedup.low},
                       {"speedup_ci_high", c.speedup.high},
                       {"confidence", c.speedup.confidence},
                       {"speedup_method", "ratio of medians A/B, percentile bootstrap (2000 resamples)"},
                       {"speedup_implausible", c.implausible},
                       {"speedup_trusted", !c.implausible && !r.load.oversubscribed()},
                       {"agreement", c.agreement},
                       {"agreement_data", c.agreement_data}};
  }
}

namespace {

using M = ModelProfile;

// Rows of the per-model tables: one cell per model and, comparing two, the B/A ratio.
struct Rows {
  const ProfileResult& r;
  bool compare = r.models.size() == 2;

  std::vector<std::string> head() const {
    std::vector<std::string> h = {""};
    for (size_t i = 0; i < r.models.size(); ++i)
      h.push_back(compare ? std::string(i == 0 ? "A: " : "B: ") + r.models[i].path : r.models[i].path);
    if (compare) h.push_back("B/A");
    return h;
  }
  // value_of(model) -> (cell text, number for the ratio); `ratio`: whether B/A means anything for this row.
  template <class F>
  std::vector<std::string> row(const std::string& name, F value_of, bool ratio) const {
    std::vector<std::string> cells = {name};
    for (const auto& m : r.models) cells.push_back(value_of(m).first);
    if (compare) {
      double a = value_of(r.models[0]).second, b = value_of(r.models[1]).second;
      cells.push_back(ratio && a != 0 ? fmt::format("{:.2f}x", b / a) : "");
    }
    return cells;
  }
  std::vector<std::string> ms_row(const std::string& name, double stats::Summary::*field) const {
    return row(name, [field](const M& m) { return std::pair{format_ms(m.latency_ms.*field), m.latency_ms.*field}; }, true);
  }
};

report::Table model_table(const Rows& rows) {
  report::Table model{"Model", rows.head(), {}};
  model.rows.push_back(rows.row("size on disk", [](const M& m) { return std::pair{format_bytes(m.facts.file_bytes), double(m.facts.file_bytes)}; }, true));
  model.rows.push_back(rows.row("parameters", [](const M& m) { return std::pair{format_count(m.facts.parameters), double(m.facts.parameters)}; }, true));
  model.rows.push_back(rows.row("MACs per forward", [](const M& m) { return std::pair{macs_text(m.facts.total_macs), double(m.facts.total_macs)}; }, true));
  model.rows.push_back(rows.row("dtypes", [](const M& m) {
    std::vector<std::string> parts;
    for (const auto& [dtype, n] : m.facts.elements_by_dtype) parts.push_back(dtype);
    return std::pair{join(parts, ", "), 0.0};
  }, false));
  model.rows.push_back(rows.row("frozen graph", [](const M& m) { return std::pair{std::string(m.frozen ? "yes" : "no"), 0.0}; }, false));
  return model;
}

report::Table latency_table(const Rows& rows) {
  const ProfileResult& r = rows.r;
  report::Table lat{fmt::format("Latency (ms): input {}{}, {} intra-op thread{}, {} timed iterations{}", shapes_text(r.inputs),
                                r.inputs_guessed ? " (guessed: see the notes)" : "",
                                r.threads, r.threads == 1 ? "" : "s", r.models[0].latency_ms.count,
                                rows.compare ? ", A and B interleaved" : ""),
                    rows.head(), {}};
  lat.rows.push_back(rows.row("cold: load", [](const M& m) { return std::pair{format_ms(m.load_ms), m.load_ms}; }, true));
  lat.rows.push_back(rows.row("cold: first inference", [](const M& m) { return std::pair{format_ms(m.first_inference_ms), m.first_inference_ms}; }, true));
  lat.rows.push_back(rows.ms_row("min", &stats::Summary::min));
  lat.rows.push_back(rows.ms_row("mean", &stats::Summary::mean));
  lat.rows.push_back(rows.ms_row("std", &stats::Summary::stddev));
  lat.rows.push_back(rows.row("cv", [](const M& m) { return std::pair{fmt::format("{:.3f}", m.latency_ms.cv), m.latency_ms.cv}; }, true));
  lat.rows.push_back(rows.ms_row("p50", &stats::Summary::p50));
  lat.rows.push_back(rows.ms_row("p90", &stats::Summary::p90));
  lat.rows.push_back(rows.ms_row("p95", &stats::Summary::p95));
  lat.rows.push_back(rows.ms_row("p99", &stats::Summary::p99));
  lat.rows.push_back(rows.ms_row("p99.9", &stats::Summary::p999));
  lat.rows.push_back(rows.ms_row("max", &stats::Summary::max));
  lat.rows.push_back(rows.row("throughput (samples/s)", [](const M& m) { return std::pair{fmt::format("{:.1f}", m.throughput), m.throughput}; }, true));
  lat.rows.push_back(rows.row("page faults per call", [](const M& m) { return std::pair{fmt::format("{:.0f}", m.page_faults_per_call), m.page_faults_per_call}; }, true));
  // One process holds A and B, so its peak cannot be split between them: no B/A ratio.
  lat.rows.push_back(rows.row(rows.compare ? "peak RSS (process, A and B)" : "peak RSS",
                              [](const M& m) { return std::pair{format_bytes(m.peak_rss_bytes), double(m.peak_rss_bytes)}; }, !rows.compare));
  bool any_accuracy = false;
  for (const auto& m : r.models) any_accuracy = any_accuracy || m.accuracy.has_value();
  if (any_accuracy)
    lat.rows.push_back(rows.row("top-1 accuracy", [](const M& m) {
      return m.accuracy ? std::pair{fmt::format("{:.2f}% ({}/{})", m.accuracy->percent(), m.accuracy->correct, m.accuracy->total), m.accuracy->percent()}
                        : std::pair{std::string("-"), 0.0};
    }, false));
  return lat;
}

report::Table comparison_table(const ProfileResult& r, const Comparison& c) {
  report::Table cmp{"Comparison (B against A)", {"metric", "value"}, {}};
  // An implausible speedup is no gain; one timed on an oversubscribed machine is shown, marked untrusted.
  std::string verdict = c.implausible               ? "no gain shown"
                        : c.speedup.estimate >= 1 ? fmt::format("B is {:.2f}x faster", c.speedup.estimate)
                                                  : fmt::format("B is {:.2f}x slower", 1 / c.speedup.estimate);
  cmp.rows.push_back({"speedup (median A / median B)",
                      fmt::format("{:.3f}x  [{:.0f}% CI {:.3f}-{:.3f}]{}  {}", c.speedup.estimate, 100 * c.speedup.confidence,
                                  c.speedup.low, c.speedup.high,
                                  measure::untrusted_mark(r.load.oversubscribed(), c.implausible), verdict)});
  cmp.rows.push_back({"max abs error", fmt::format("{:.3g}", c.agreement.max_abs_error)});
  cmp.rows.push_back({"mean abs error", fmt::format("{:.3g}", c.agreement.mean_abs_error)});
  cmp.rows.push_back({"top-1 agreement", pct(c.agreement.top1_agreement)});
  cmp.rows.push_back({"KL(softmax A || softmax B)", fmt::format("{:.3g} nats", c.agreement.kl_divergence)});
  cmp.rows.push_back({"measured on", c.agreement_data});
  cmp.left_aligned_columns = 2;
  return cmp;
}

// A model's per-op profile (by operator and by module) and its load test, when they ran.
void add_model_tables(const M& m, const std::string& who, report::Report& rep) {
  if (m.ops) {
    for (int pass = 0; pass < 2; ++pass) {
      const auto& rows = pass == 0 ? m.ops->by_op : m.ops->by_module;
      report::Table t{fmt::format("Top {} by self time{} (per forward, {} profiled iterations, {} ms each with callbacks)",
                                  pass == 0 ? "operators" : "modules", who, m.ops->iterations, format_ms(m.ops->forward_ms)),
                      {pass == 0 ? "operator" : "module", "calls", "self ms", "total ms", "share"}, {}};
      for (const auto& s : rows)
        t.rows.push_back({s.name, std::to_string(s.calls), format_ms(s.self_ms), format_ms(s.total_ms), pct(s.share)});
      rep.tables.push_back(t);
    }
  }
  if (!m.load.empty()) {
    report::Table t{"Load test" + who + ": Poisson arrivals, one worker, latency includes queueing (ms)",
                    {"offered req/s", "achieved req/s", "p50", "p90", "p99", "p99.9", "mean queue", "utilization", "saturated"},
                    {}};
    for (const auto& l : m.load)
      t.rows.push_back({fmt::format("{:.0f}", l.offered_qps), fmt::format("{:.1f}", l.achieved_qps), format_ms(l.latency_ms.p50),
                        format_ms(l.latency_ms.p90), format_ms(l.latency_ms.p99), format_ms(l.latency_ms.p999),
                        format_ms(l.queue_ms.mean), pct(l.utilization), l.saturated ? "yes" : "no"});
    rep.tables.push_back(t);
  }
}

}  // namespace

report::Report to_report(const ProfileResult& r) {
  report::Report rep;
  rep.command = "profile";
  rep.environment = r.environment;
  rep.result = r;
  rep.findings = r.findings;
  if (r.decoder) {
    add_decoder_views(r, rep);
    return rep;
  }
  const Rows rows{r};
  rep.tables.push_back(model_table(rows));
  rep.tables.push_back(latency_table(rows));
  if (r.comparison) rep.tables.push_back(comparison_table(r, *r.comparison));
  for (size_t i = 0; i < r.models.size(); ++i)
    add_model_tables(r.models[i], rows.compare ? (i == 0 ? " of A" : " of B") : "", rep);
  rep.notes = r.notes;
  rep.notes.push_back("Percentiles: linear interpolation between closest ranks (type 7). Samples are single forward calls "
                      "under NoGradGuard, timed with steady_clock.");
  return rep;
}

}  // namespace lite::profile
