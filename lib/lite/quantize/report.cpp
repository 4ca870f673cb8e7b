// QuantizeResult -> JSON and -> Report (tables, findings, notes) for the printers.
#include <fmt/format.h>

#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/quantize/choice.hpp"
#include "lite/quantize/decoder_report.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::quantize {

void to_json(nlohmann::json& j, const Latency& l) {
  j = nlohmann::json{{"batch", l.batch},
                     {"median_ms", l.median_ms},
                     {"p90_ms", l.p90_ms},
                     {"iterations", l.iterations},
                     {"samples_ms", l.samples_ms}};
}

void to_json(nlohmann::json& j, const Speed& s) {
  j = nlohmann::json{{"candidate", s.candidate}, {"frozen_float", s.frozen_float}, {"ratio", s.ratio},
                     {"ratio_low", s.ratio_low}, {"ratio_high", s.ratio_high},     {"slower", s.slower},
                     {"implausible", s.implausible}};
}

void to_json(nlohmann::json& j, const Quality& q) {
  j = nlohmann::json{
      {"metric", q.metric},
      {"data", q.data},
      {"samples", q.samples},
      {"available_samples", q.available_samples},
      {"stopped_early", q.stopped_early},
      {"float_percent", q.float_value},
      {"percent", q.value},
      {"drop_points", q.drop},
      {"drop_interval_95", {q.drop_low, q.drop_high}},
      {"agreement", q.agreement}};
}

void to_json(nlohmann::json& j, const Candidate& c) {
  j = nlohmann::json{
      {"mode", c.mode}, {"built", c.built}, {"problem", c.problem}, {"chosen", c.chosen}, {"build_s", c.build_s}};
  if (c.built) {
    j["plan"] = c.plan;
    j["file_bytes"] = c.file_bytes;
    j["quality"] = c.quality;
    j["speed"] = c.speed;
    j["meets_tolerance"] = c.meets_tolerance;
    j["evaluated"] = c.evaluated;
    if (c.search) j["tolerance_search"] = *c.search;
    j["build_steps_s"] = c.build_steps_s;
  }
}

void to_json(nlohmann::json& j, const CalibrationInfo& c) {
  j = nlohmann::json{{"method", c.method}, {"source", c.source},         {"samples", c.samples},
                     {"reused", c.reused}, {"stats_file", c.stats_file}, {"observed_values", c.observed_values}};
}

void to_json(nlohmann::json& j, const UncalibratedProbe& p) {
  j = nlohmann::json{{"mode", p.mode},
                     {"calib_samples", p.calib_samples},
                     {"speed", p.speed},
                     {"speed_score", p.speed_score},
                     {"speedup", p.speed_score > 0 ? 1 / p.speed_score : 0.0},
                     {"chosen_speed_score", p.chosen_score},
                     {"pays", p.pays},
                     {"problem", p.problem},
                     {"use", "speed only: calibrated on random inputs, never judged, chosen or written"}};
}

void to_json(nlohmann::json& j, const TimeSpent& t) {
  j = nlohmann::json{{"stage", t.stage}, {"mode", t.mode}, {"seconds", t.seconds}};
}

void to_json(nlohmann::json& j, const QuantizeResult& r) {
  j = nlohmann::json{{"model", r.model},
                     {"model_bytes", r.model_bytes},
                     {"requested_mode", r.requested_mode},
                     {"mode", r.mode},
                     {"engine", r.engine},
                     {"consumer_engine_setting", "torch.backends.quantized.engine = '" + r.engine + "'"},
                     {"threads", r.threads},
                     {"dry_run", r.dry_run},
                     {"layers", r.layers},
                     {"float_only_layers", r.float_only_layers},
                     {"guessed_inputs", r.guessed_inputs},
                     {"plans", r.plans},
                     {"candidates", r.candidates},
                     {"calibration", r.calibration ? nlohmann::json(*r.calibration) : nlohmann::json(nullptr)},
                     {"float_latency", r.float_latency},
                     {"output", r.output},
                     {"output_bytes", r.output_bytes},
                     {"tolerance_points", r.tolerance},
                     {"tolerance_given", r.tolerance_given},
                     {"tolerance_met", r.tolerance_met},
                     {"slower_than_frozen_float", r.slower},
                     {"allow_slower", r.allow_slower},
                     {"machine_load", r.load},
                     {"allow_noisy", r.allow_noisy},
                     {"exit_status", r.gates.passed() ? 0 : 1},
                     {"gates", r.gates},
                     {"notes", r.notes},
                     {"wall_s", r.wall_s},
                     {"time", r.time},
                     {"budget_s", r.budget_s ? nlohmann::json(*r.budget_s) : nlohmann::json(nullptr)},
                     {"agreement_floor_points", r.agreement_floor},
                     {"agreement_floor_applied", r.agreement_floor_applied}};
  j["uncalibrated_probe"] = r.uncalibrated ? nlohmann::json(*r.uncalibrated) : nlohmann::json(nullptr);
  if (r.decoder) j["decoder"] = *r.decoder;
}

namespace {

std::string ratio_text(double r) { return fmt::format("{:.2f}x", r); }

std::string shape_text(const std::vector<int64_t>& s) {
  std::vector<std::string> parts;
  for (auto d : s) parts.push_back(std::to_string(d));
  return join(parts, "x");
}

const Candidate* chosen_of(const QuantizeResult& r) {
  for (const auto& c : r.candidates)
    if (c.chosen) return &c;
  return nullptr;
}

// The plan's layers, then the layers no mode but bf16 reaches (their bytes count in the totals, unchanged).
report::Table layer_table(const Plan& p, const std::vector<FloatOnlyLayer>& float_only, const std::string& title) {
  report::Table t;
  t.title = title;
  t.columns = {"layer", "kind", "weight", "scheme", "note", "bytes before", "bytes after"};
  t.left_aligned_columns = 5;
  for (const auto& l : p.layers)
    t.rows.push_back({l.layer.name, l.layer.kind, shape_text(l.layer.weight_shape), l.scheme, l.reason,
                      format_bytes(double(l.bytes_before)), format_bytes(double(l.bytes_after))});
  uint64_t float_only_bytes = 0, after = 0;
  size_t converted = 0;
  for (const auto& l : float_only) {
    // bf16 converts embedding tables with the whole graph; recurrent ops run float32 there (scheme_bf16.cpp)
    const bool embedding = l.kind == "Embedding", bf16 = p.mode == "bf16" && embedding;
    const bool int8 = l.dynamic_int8 && (p.mode == "dynamic" || (p.mode == "static" && embedding));
    const uint64_t bytes_after = bf16 ? l.bytes / 2 : int8 ? l.bytes / 4 : l.bytes;
    const char* int8_scheme = embedding ? "int8 weight-only (per row)" : "int8 dynamic (per-channel weights)";
    t.rows.push_back({l.name, l.kind, shape_text(l.weight_shape),
                      bf16 ? "bfloat16 (whole graph)" : int8 ? int8_scheme : "float",
                      bf16 || int8 ? "" : l.reason, format_bytes(double(l.bytes)), format_bytes(double(bytes_after))});
    float_only_bytes += l.bytes;
    after += bytes_after;
    converted += (int8 || bf16) ? 1 : 0;
  }
  t.rows.push_back({"total", "", "",
                    fmt::format("{} of {} layers quantized", p.quantized_layers() + converted,
                                p.layers.size() + float_only.size()),
                    fmt::format("expected file {} -> {}", format_bytes(double(p.file_bytes_before)),
                                format_bytes(double(p.expected_file_bytes - std::min(p.expected_file_bytes,
                                                                                     float_only_bytes - after)))),
                    format_bytes(double(p.weight_bytes_before + float_only_bytes)),
                    format_bytes(double(p.weight_bytes_after + after))});
  return t;
}

std::string quality_cell(const Quality& q) { return fmt::format("{:.2f}%", q.value); }

// "0.42 [0.00, 3.10]": the drop in points and its 95% interval.
std::string drop_cell(const Quality& q) { return fmt::format("{:.2f} [{:.2f}, {:.2f}]", q.drop, q.drop_low, q.drop_high); }

// "64 samples", or "32 of 64 samples" when fewer were judged than the data holds.
std::string samples_words(const Quality& q) {
  if (q.available_samples > q.samples) return fmt::format("{} of {} samples", q.samples, q.available_samples);
  return fmt::format("{} samples", q.samples);
}

// What the uncalibrated probe measured, when it pays: "static int8 timed 2.41x faster uncalibrated".
std::string probe_pays_words(const UncalibratedProbe& p) {
  return fmt::format("{} int8 timed {:.2f}x faster than frozen float uncalibrated", p.mode, 1 / p.speed_score);
}

bool probe_pays(const QuantizeResult& r) { return r.uncalibrated && r.uncalibrated->pays; }

// The headline table: the chosen candidate against the float model as given and the frozen float model. When only
// a mode that needs calibration data would pay, the title says so (static_probe.cpp).
report::Table summary_table(const QuantizeResult& r, const Candidate& chosen) {
  report::Table t;
  t.title = fmt::format("lite quantize {} -> {} ({} mode, {} engine, {} thread{}{}){}", r.model, r.output, r.mode,
                        r.engine, r.threads, r.threads == 1 ? "" : "s",
                        r.guessed_inputs.empty() ? "" : ", input " + r.guessed_inputs + " guessed: see the notes",
                        probe_pays(r) ? "; " + probe_pays_words(*r.uncalibrated) + ": pass {calib} FILE" : "");
  t.columns = {"", "float (as given)", "frozen float", r.mode, "vs frozen float"};
  t.rows.push_back(
      {"file size", format_bytes(double(r.model_bytes)), "-", format_bytes(double(r.output_bytes)),
       ratio_text(double(r.output_bytes) / double(std::max<uint64_t>(r.model_bytes, 1))) + " of the input"});
  for (size_t i = 0; i < chosen.speed.candidate.size(); ++i) {
    const auto& q = chosen.speed.candidate[i];
    t.rows.push_back({fmt::format("latency batch {} (median ms)", q.batch),
                      i < r.float_latency.size() ? format_ms(r.float_latency[i].median_ms) : "-",
                      format_ms(chosen.speed.frozen_float[i].median_ms), format_ms(q.median_ms),
                      fmt::format("{} [{:.2f}-{:.2f}]{}", ratio_text(chosen.speed.ratio[i]), chosen.speed.ratio_low[i],
                                  chosen.speed.ratio_high[i],
                                  measure::untrusted_mark(r.load.oversubscribed(),
                                                          i < chosen.speed.implausible.size() &&
                                                              chosen.speed.implausible[i]))});
  }
  const Quality& q = chosen.quality;
  t.rows.push_back({fmt::format("{} ({})", q.metric, samples_words(q)), fmt::format("{:.2f}%", q.float_value),
                    fmt::format("{:.2f}%", q.float_value), quality_cell(q),
                    fmt::format("{:+.2f} points (drop {:.2f} to {:.2f}, 95%)", -q.drop, q.drop_low, q.drop_high)});
  t.rows.push_back({"agreement with float: top-1 / KL / max abs error", "", "",
                    fmt::format("{:.2f}% / {:.2g} / {:.3g}", 100 * q.agreement.top1_agreement,
                                q.agreement.kl_divergence, q.agreement.max_abs_error),
                    ""});
  return t;
}

// Every mode tried (auto): size, latency per batch, quality, and why it was or was not chosen.
report::Table candidates_table(const QuantizeResult& r) {
  report::Table t;
  t.title =
      fmt::format("candidates (tolerance {:.2f} points{})", r.tolerance, r.tolerance_given ? "" : ", the auto default");
  t.columns = {"mode", "size"};
  // The candidate timed at the most batch sizes (one found slower at the first may stop there).
  const Candidate* any = nullptr;
  for (const auto& c : r.candidates)
    if (c.built && (!any || c.speed.candidate.size() > any->speed.candidate.size())) any = &c;
  if (any)
    for (const auto& l : any->speed.candidate) t.columns.push_back(fmt::format("b{} ms (vs frozen)", l.batch));
  t.columns.insert(t.columns.end(), {"quality", "samples", "drop [95%]", "status"});
  for (const auto& c : r.candidates) {
    std::vector<std::string> row = {c.mode};
    if (!c.built) {
      row.push_back("-");
      if (any)
        for (size_t i = 0; i < any->speed.candidate.size(); ++i) row.push_back("-");
      row.insert(row.end(), {"-", "-", "-", c.problem});
    } else {
      row.push_back(format_bytes(double(c.file_bytes)));
      for (size_t i = 0; i < c.speed.candidate.size(); ++i)
        row.push_back(fmt::format("{} ({})", format_ms(c.speed.candidate[i].median_ms), ratio_text(c.speed.ratio[i])));
      for (size_t i = c.speed.candidate.size(); i < any->speed.candidate.size(); ++i) row.push_back("not timed");
      std::string status = c.chosen ? "chosen" : "";
      auto add = [&](const std::string& s) { status += (status.empty() ? "" : ", ") + s; };
      if (!c.evaluated)
        add("not evaluated");
      else if (c.quality.stopped_early)
        add("over tolerance (stopped early)");
      else if (!c.meets_tolerance)
        add("over tolerance");
      if (c.speed.slower) add("slower than frozen float");
      if (c.search && !c.search->float_layers.empty())
        add(fmt::format("{} layer(s) kept float", c.search->float_layers.size()));
      if (c.evaluated)
        row.insert(row.end(), {quality_cell(c.quality), std::to_string(c.quality.samples), drop_cell(c.quality), status});
      else
        row.insert(row.end(), {"-", "-", "-", status});
    }
    t.rows.push_back(row);
  }
  return t;
}

// Where the time went: one row per stage and mode, with its share of the wall time.
report::Table time_table(const QuantizeResult& r) {
  report::Table t;
  t.title = r.budget_s ? fmt::format("time: {:.1f} s of a {:.0f} s budget", r.wall_s, *r.budget_s)
                       : fmt::format("time: {:.1f} s", r.wall_s);
  t.columns = {"stage", "mode", "seconds", "share"};
  t.left_aligned_columns = 2;
  for (const auto& s : r.time)
    t.rows.push_back({s.stage, s.mode.empty() ? "-" : s.mode, fmt::format("{:.2f}", s.seconds),
                      fmt::format("{:.0f}%", r.wall_s > 0 ? 100 * s.seconds / r.wall_s : 0)});
  return t;
}

report::Table search_table(const SearchResult& search) {
  report::Table t;
  t.title = "tolerance search (layers kept float, most sensitive first)";
  t.columns = {"step", "float layers", "drop (points)", "meets"};
  t.left_aligned_columns = 2;
  int i = 0;
  for (const auto& s : search.steps)
    t.rows.push_back({std::to_string(++i), s.float_layers.empty() ? "(none)" : join(s.float_layers, ", "),
                      fmt::format("{:.2f}", s.drop), s.meets ? "yes" : "no"});
  return t;
}

// The finding of the uncalibrated probe when it pays: the speedup only calibration data can buy.
void add_probe_finding(const QuantizeResult& r, report::Report& rep) {
  if (!probe_pays(r)) return;
  const UncalibratedProbe& p = *r.uncalibrated;
  rep.findings.push_back(
      {"info",
       fmt::format("{} (on {} random inputs; a speed-only figure: its accuracy is unknown, it was not chosen), "
                   "while the chosen {} takes {:.2f}x frozen float's latency; it needs calibration data, which this "
                   "run lacks",
                   probe_pays_words(p), p.calib_samples, r.mode, p.chosen_score),
       fmt::format("a speed score at most {:.2f} of frozen float's and of the chosen mode's", kWorthProbing),
       "pass {calib} FILE (a few hundred samples shaped like the model input) so that auto builds, judges and can "
       "choose static int8"});
}

// Advice for a chosen mode slower than frozen float: static int8 when it needs calibration data (with the figure
// the uncalibrated probe measured), else another mode or the frozen float model.
std::string faster_advice(const QuantizeResult& r) {
  bool static_needs_calib = false;
  for (const auto& c : r.candidates)
    static_needs_calib =
        static_needs_calib || (c.mode == "static" && !c.built && c.problem.find("{calib}") != std::string::npos);
  if (!static_needs_calib)
    return "use {mode} static or auto, deploy the frozen float model, or pass {allow_slower}";
  if (probe_pays(r))
    return "pass {calib} FILE so that static int8 (" + probe_pays_words(*r.uncalibrated) +
           ") is tried, deploy the frozen float model, or pass {allow_slower}";
  if (r.uncalibrated && r.uncalibrated->problem.empty())
    return "deploy the frozen float model, or pass {allow_slower} (static int8, timed uncalibrated, is no faster "
           "either)";
  return "pass {calib} FILE so that static int8 (the mode that may be faster here) is tried, deploy the frozen "
         "float model, or pass {allow_slower}";
}

// Findings: what was seen, the threshold, what to try.
void add_findings(const QuantizeResult& r, const Candidate* chosen, report::Report& rep) {
  add_probe_finding(r, rep);
  const std::string faster = faster_advice(r);
  if (chosen && chosen->speed.slower) {
    for (size_t i = 0; i < chosen->speed.ratio.size(); ++i) {
      if (chosen->speed.ratio_low[i] <= 1.0) continue;
      rep.findings.push_back(
          {r.allow_slower ? "info" : "warning",
           fmt::format(
               "the {} model is slower than the frozen float model at batch {}: {} (95% interval {:.2f}-{:.2f})",
               r.mode, chosen->speed.candidate[i].batch, ratio_text(chosen->speed.ratio[i]), chosen->speed.ratio_low[i],
               chosen->speed.ratio_high[i]),
           "1.00x, the frozen float model", r.allow_slower ? "accepted with {allow_slower}" : faster});
    }
  }
  if (!r.tolerance_met && chosen)
    rep.findings.push_back({"warning",
                            fmt::format("{} drops {:.2f} points of {} on {}", r.mode, chosen->quality.drop,
                                        chosen->quality.metric, chosen->quality.data),
                            fmt::format("{{tolerance}} {:.2f} points", r.tolerance),
                            "a larger {tolerance}, more or better {calib} data, another {calib_method}, or {skip} "
                            "the layers the sensitivity table names"});
  rep.findings.insert(rep.findings.end(), r.findings.begin(), r.findings.end());
}

void add_notes(const QuantizeResult& r, report::Report& rep) {
  if (r.mode == "static" || r.mode == "dynamic")
    rep.notes.push_back(fmt::format(
        "the artifact holds {} packed int8 weights: select the same engine before loading it, "
        "torch.backends.quantized.engine = '{}' (Python) or at::globalContext().setQEngine(at::QEngine::{}) (C++)",
        r.engine, r.engine,
        r.engine == "onednn"    ? "ONEDNN"
        : r.engine == "qnnpack" ? "QNNPACK"
                                : "FBGEMM"));
  if (r.calibration) {
    rep.notes.push_back(fmt::format("calibration: {} over {} samples of {}{}", r.calibration->method,
                                    r.calibration->samples, r.calibration->source,
                                    r.calibration->reused ? " (reused, no pass over data)" : ""));
    if (!r.calibration->stats_file.empty())
      rep.notes.push_back("calibration statistics written to " + r.calibration->stats_file +
                          " (pass it back with {calib_stats} to skip calibration)");
  }
  for (const auto& c : r.candidates)
    if (!c.built && !c.problem.empty() && r.candidates.size() > 1)
      rep.notes.push_back(fmt::format("{}: not used ({})", c.mode, c.problem));
  if (const auto& p = r.uncalibrated; p && !p->pays)
    rep.notes.push_back(
        p->problem.empty()
            ? fmt::format("{} int8, which needs {{calib}}, timed uncalibrated on {} random inputs (speed only): "
                          "{:.2f}x of frozen float's latency against {:.2f}x for the chosen {}, not a clear gain",
                          p->mode, p->calib_samples, p->speed_score, p->chosen_score, r.mode)
            : fmt::format("{} int8 could not be timed uncalibrated: {}", p->mode, p->problem));
  rep.notes.insert(rep.notes.end(), r.notes.begin(), r.notes.end());
  // What fp16 can buy depends on this machine, so the note is decided here, from the detected CPU flags.
  for (const auto& c : r.candidates)
    if (c.built && c.mode == "fp16")
      rep.notes.push_back(has_cpu_feature(rep.environment, "avx512_fp16")
                              ? "fp16: this machine's CPU has AVX512-FP16, but libtorch 1.13 has no float16 "
                                "convolution or linear kernels for CPUs, so fp16 computes in float32: it buys size, "
                                "not speed"
                              : "fp16: this machine's CPU has no AVX512-FP16 (and libtorch 1.13 no float16 CPU "
                                "kernels), so fp16 computes in float32: it buys size, not speed; bf16 computes in "
                                "half precision");
  if (!r.output.empty())
    rep.notes.push_back(fmt::format("wrote {} ({})", r.output, format_bytes(double(r.output_bytes))));
}

}  // namespace

report::Report to_report(const QuantizeResult& r) {
  report::Report rep = torch_verb_report("quantize", r);
  if (r.decoder) {
    add_decoder_views(r, rep);
    if (!r.time.empty()) rep.tables.push_back(time_table(r));
    return rep;
  }

  if (r.dry_run) {
    for (const auto& p : r.plans)
      rep.tables.push_back(
          layer_table(p, r.float_only_layers, fmt::format("plan: {} ({} engine), {}", p.mode, p.engine, r.model)));
    for (const auto& c : r.candidates)
      if (!c.problem.empty()) rep.notes.push_back(fmt::format("{}: not tried ({})", c.mode, c.problem));
    rep.notes.push_back("dry run: nothing was calibrated, measured or written");
    return rep;
  }
  const Candidate* chosen = chosen_of(r);
  if (chosen) rep.tables.push_back(summary_table(r, *chosen));
  if (r.candidates.size() > 1) rep.tables.push_back(candidates_table(r));
  if (chosen) {
    rep.tables.push_back(layer_table(chosen->plan, r.float_only_layers, fmt::format("layers ({})", r.mode)));
    if (chosen->search) rep.tables.push_back(search_table(*chosen->search));
  }
  if (!r.time.empty()) rep.tables.push_back(time_table(r));
  add_findings(r, chosen, rep);
  add_notes(r, rep);
  return rep;
}

}  // namespace lite::quantize
