// lite prune's result as JSON and as a report: the before/after table (parameters, MACs, file and zstd
// bytes, accuracy or agreement, latency of both models frozen), the per-group plan (channels before and
// after, or the op that stopped a group), and per-layer sparsity for unstructured pruning.
#include <fmt/format.h>

#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/prune/decoder_report.hpp"
#include "lite/prune/prune.hpp"

namespace lite::prune {

void to_json(nlohmann::json& j, const GroupPlan& g) {
  j = {{"name", g.name},         {"layers", g.layers},   {"channels", g.channels}, {"kept", g.kept},
       {"ratio", g.ratio},       {"tensors", g.tensors}, {"prunable", g.prunable}, {"skipped", g.skipped},
       {"multiple_of", g.multiple_of}, {"blocks", g.blocks}};
}

void to_json(nlohmann::json& j, const LayerSparsity& l) {
  j = {{"name", l.name}, {"elements", l.elements}, {"zeros", l.zeros}, {"sparsity", l.sparsity}, {"excluded", l.excluded}};
}

void to_json(nlohmann::json& j, const Latency& l) {
  j = {{"batch", l.batch},       {"original_frozen_ms", l.original_ms}, {"pruned_frozen_ms", l.pruned_ms},
       {"ratio", l.ratio},       {"ratio_low", l.ratio_low},            {"ratio_high", l.ratio_high},
       {"speedup", l.ratio > 0 ? 1.0 / l.ratio : 0.0}, {"implausible", l.implausible}};
}

void to_json(nlohmann::json& j, const Quality& q) {
  j = {{"metric", q.metric}, {"data", q.data},   {"samples", q.samples},    {"before", q.before},
       {"after", q.after},   {"drop", q.drop},   {"agreement", q.agreement}};
}

void to_json(nlohmann::json& j, const Figures& f) {
  j = {{"parameters", f.parameters}, {"macs", f.macs}, {"file_bytes", f.file_bytes}, {"zstd_bytes", f.zstd_bytes}};
}

void to_json(nlohmann::json& j, const SensitivityPoint& p) {
  j = {{"group", p.group}, {"channels", p.channels}, {"ratio", p.ratio}, {"kept", p.kept}, {"value", p.value}, {"drop", p.drop}};
}

void to_json(nlohmann::json& j, const PruneResult& r) {
  j = {{"model", r.model},
       {"output", r.output},
       {"method", r.method},
       {"criterion", r.criterion},
       {"dry_run", r.dry_run},
       {"global", r.global},
       {"threads", r.threads},
       {"groups", r.groups},
       {"layers", r.layers},
       {"planned_parameters", r.planned_parameters},
       {"gates", r.gates},
       {"agreement_floor_points", r.agreement_floor},
       {"guessed_inputs", r.guessed_inputs},
       {"sensitivity", r.sensitivity},
       {"sensitivity_csv", r.sensitivity_csv},
       {"sensitivity_svg", r.sensitivity_svg},
       {"suggested_ratios", r.suggested},
       {"notes", r.notes},
       {"wall_s", r.wall_s}};
  if (r.decoder) {
    j["decoder"] = *r.decoder;
    j["machine_load"] = r.load;
  }
  if (r.measured) {
    j["before"] = r.before;
    j["after"] = r.after;
    j["latency"] = r.latency;
    j["machine_load"] = r.load;
    j["quality"] = r.quality;
    j["tolerance"] = r.tolerance_given ? nlohmann::json(r.tolerance) : nlohmann::json();
  }
}

namespace {

std::string ratio_cell(double after, double before) {
  return before > 0 ? fmt::format("{:.3f}x", after / before) : "-";
}

report::Table summary_table(const PruneResult& r) {
  report::Table t;
  t.title = fmt::format("lite prune {} -> {} ({}, {}, {} thread{}{})", r.model, r.output, r.method, r.criterion,
                        r.threads, r.threads == 1 ? "" : "s",
                        r.guessed_inputs.empty() ? "" : ", input " + r.guessed_inputs + " guessed: see the notes");
  t.columns = {"", "original", "pruned", "pruned / original"};
  t.rows.push_back({"parameters", format_count(r.before.parameters), format_count(r.after.parameters),
                    ratio_cell(double(r.after.parameters), double(r.before.parameters))});
  t.rows.push_back({"MACs (batch 1)", format_count(r.before.macs), format_count(r.after.macs),
                    ratio_cell(double(r.after.macs), double(r.before.macs))});
  t.rows.push_back({"file size", format_bytes(double(r.before.file_bytes)), format_bytes(double(r.after.file_bytes)),
                    ratio_cell(double(r.after.file_bytes), double(r.before.file_bytes))});
  t.rows.push_back({"file size, zstd -3", format_bytes(double(r.before.zstd_bytes)),
                    format_bytes(double(r.after.zstd_bytes)),
                    ratio_cell(double(r.after.zstd_bytes), double(r.before.zstd_bytes))});
  for (const auto& l : r.latency)
    t.rows.push_back({fmt::format("latency batch {} (median ms, both frozen)", l.batch), format_ms(l.original_ms),
                      format_ms(l.pruned_ms),
                      l.implausible
                          ? fmt::format("{:.3f}x [{:.2f}-{:.2f}]{}", l.ratio, l.ratio_low, l.ratio_high,
                                        measure::untrusted_mark(r.load.oversubscribed(), true))
                          : fmt::format("{:.3f}x [{:.2f}-{:.2f}] ({:.2f}x faster){}", l.ratio, l.ratio_low,
                                        l.ratio_high, l.ratio > 0 ? 1 / l.ratio : 0,
                                        measure::untrusted_mark(r.load.oversubscribed(), false))});
  const Quality& q = r.quality;
  t.rows.push_back({fmt::format("{} ({} samples)", q.metric, q.samples), fmt::format("{:.2f}%", q.before),
                    fmt::format("{:.2f}%", q.after), fmt::format("{:+.2f} points", -q.drop)});
  t.rows.push_back({"agreement with the original: top-1 / max abs error", "",
                    fmt::format("{:.2f}% / {:.3g}", 100 * q.agreement.top1_agreement, q.agreement.max_abs_error), ""});
  return t;
}

report::Table group_table(const PruneResult& r) {
  report::Table t;
  t.title = fmt::format("channel groups ({}{})", r.global ? "global ranking" : "per group", r.dry_run ? ", planned" : "");
  t.columns = {"group", "layers", "channels", "kept", "removed", "status"};
  t.left_aligned_columns = 2;
  for (const auto& g : r.groups) {
    std::string layers = g.layers.size() <= 3 ? join(g.layers, ", ")
                                              : fmt::format("{}, ... ({} layers)", g.layers.front(), g.layers.size());
    t.rows.push_back({g.name, layers, std::to_string(g.channels), std::to_string(g.kept),
                      fmt::format("{:.0f}%", 100.0 * double(g.channels - g.kept) / double(std::max<int64_t>(g.channels, 1))),
                      g.prunable ? "pruned" : "left alone: " + g.skipped});
  }
  return t;
}

report::Table layer_table(const PruneResult& r) {
  report::Table t;
  t.title = "per-layer sparsity";
  t.columns = {"layer", "weights", "zeros", "sparsity"};
  for (const auto& l : r.layers)
    t.rows.push_back({l.name + (l.excluded ? " (excluded)" : ""), format_count(uint64_t(l.elements)),
                      format_count(uint64_t(l.zeros)), fmt::format("{:.2f}%", 100 * l.sparsity)});
  return t;
}

}  // namespace

report::Report to_report(const PruneResult& r) {
  report::Report rep = torch_verb_report("prune", r);
  if (r.decoder) {
    rep.findings = r.findings;
    rep.notes = r.notes;
    add_decoder_views(r, rep);
    if (r.dry_run)
      rep.notes.push_back(fmt::format("dry run: {} parameters planned; nothing was measured or written",
                                      format_count(r.planned_parameters)));
    return rep;
  }
  if (r.measured) rep.tables.push_back(summary_table(r));
  if (!r.sensitivity.empty()) {
    report::Table t;
    t.title = fmt::format("sensitivity: {} with each group pruned alone ({:.2f}% unpruned, {}); {} and {}",
                          r.quality.metric, r.quality.before, r.quality.data, r.sensitivity_csv, r.sensitivity_svg);
    t.columns = {"group", "channels", "ratio", "kept", r.quality.metric, "drop (points)"};
    for (const auto& p : r.sensitivity)
      t.rows.push_back({p.group, std::to_string(p.channels), fmt::format("{:.2f}", p.ratio), std::to_string(p.kept),
                        fmt::format("{:.2f}%", p.value), fmt::format("{:.2f}", p.drop)});
    rep.tables.push_back(t);
  }
  if (r.method == "unstructured")
    rep.tables.push_back(layer_table(r));
  else if (r.sensitivity.empty() || r.measured)
    rep.tables.push_back(group_table(r));
  rep.findings = r.findings;
  rep.notes = r.notes;
  if (r.dry_run)
    rep.notes.push_back(fmt::format("dry run: {} parameters planned; nothing was measured or written",
                                    format_count(r.planned_parameters)));
  if (r.tolerance_given && r.measured && !r.gates.passed())
    rep.findings.push_back({"warning", fmt::format("{} dropped {:.2f} points", r.quality.metric, r.quality.drop),
                            fmt::format("tolerance {:.2f} points", r.tolerance),
                            "lower {ratio}, or {exclude} the layers that matter most"});
  return rep;
}

}  // namespace lite::prune
