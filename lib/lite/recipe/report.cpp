// lite run's report: the versioned JSON document (the recipe, every step's own report, the evaluation, every
// gate's value and bound, the environment) with a gate table and a step table for people, and the markdown
// summary a CI job publishes (verdict first, then the gates, the steps and where it was measured).
#include <fmt/format.h>

#include <sstream>

#include "lite/core/text.hpp"
#include "lite/recipe/report_internal.hpp"
#include "lite/recipe/runner.hpp"
#include "lite/recipe/runner_internal.hpp"

namespace lite::recipe {

namespace {

std::string format_value(double v, const std::string& unit) {
  if (unit == "points") return fmt::format("{:.2f} points", v);
  if (unit == "%") return fmt::format("{:.2f}%", v);
  if (unit == "x") return fmt::format("{:.2f}x", v);
  if (unit == "ms") return format_ms(v) + " ms";
  if (unit == "bytes") return format_bytes(v);
  return fmt::format("{:.4f}", v);
}

std::string artifact_name(const std::string& path) {
  return path.empty() ? "-" : std::filesystem::path(path).filename().string();
}

std::string verdict(const RunResult& r) {
  return r.gates.passed() ? "PASSED" : "FAILED (" + join(r.gates.failed, ", ") + ")";
}

}  // namespace

namespace detail {

std::string measured_text(const GateResult& g) {
  if (g.comparison.empty()) return "failed";
  return g.value ? format_value(*g.value, g.unit) : "not measured";
}

std::string bound_text(const GateResult& g) {
  return g.comparison.empty() ? "" : g.comparison + " " + format_value(g.bound, g.unit);
}

}  // namespace detail

using detail::bound_text;
using detail::measured_text;

void to_json(nlohmann::json& j, const GateResult& g) {
  j = {{"gate", g.name},
       {"comparison", g.comparison},
       {"bound", g.bound},
       {"value", g.value ? nlohmann::json(*g.value) : nlohmann::json()},
       {"unit", g.unit},
       {"passed", g.passed},
       {"detail", g.detail}};
}

namespace detail {
double DecoderEvaluation::quality_loss_pct() const {
  if (real_tokens && original.perplexity && final_model.perplexity && *original.perplexity > 0)
    return 100 * (*final_model.perplexity / *original.perplexity - 1);
  return 100 * (1 - final_model.agreement);
}

void to_json(nlohmann::json& j, const DecoderEvaluation& e) {
  j = {{"kind", "decoder"},
       {"quality_data", e.quality_data},
       {"real_tokens", e.real_tokens},
       {"scored_tokens", e.scored_tokens},
       {"quality_loss_pct", e.quality_loss_pct()},
       {"prompt_tokens", e.prompt_tokens},
       {"generated_tokens", e.generated_tokens},
       {"threads", e.threads},
       {"original", e.original},
       {"final", e.final_model},
       {"decode_speedup", e.original.decode_tokens_per_s > 0
                              ? nlohmann::json(e.final_model.decode_tokens_per_s / e.original.decode_tokens_per_s)
                              : nlohmann::json(nullptr)},
       {"load", e.load},
       {"notes", e.notes}};
}
}  // namespace detail

void to_json(nlohmann::json& j, const StepRecord& s) {
  j = {{"step", s.key_path}, {"verb", s.verb},     {"options", s.options},         {"artifact", s.artifact},
       {"gates", s.gates},   {"seconds", s.seconds}, {"report_file", s.report_file}, {"report", s.report}};
}

report::Report to_report(const RunResult& r) {
  report::Report rep;
  rep.command = "run";
  rep.environment = r.environment;
  rep.result = {{"recipe", r.recipe.document},
                {"recipe_file", r.recipe.file.string()},
                {"recipe_name", r.recipe.name},
                {"recipe_schema_version", r.recipe.schema_version},
                {"passed", r.gates.passed()},
                {"failed_gates", r.gates.failed},
                {"gates", r.gates_checked},
                {"steps", r.steps},
                {"evaluation", r.evaluation},
                {"output", r.wrote_artifact ? nlohmann::json(r.output.string()) : nlohmann::json()},
                {"work_dir", r.work_dir.string()},
                {"wall_s", r.wall_s}};

  report::Table gates;
  gates.title = fmt::format("lite run {}: {}", r.recipe.name, verdict(r));
  gates.columns = {"gate", "measured", "bound", "result", "on"};
  gates.left_aligned_columns = 1;
  for (const auto& g : r.gates_checked)
    gates.rows.push_back({g.name, measured_text(g), bound_text(g), g.passed ? "pass" : "FAIL", g.detail});
  if (gates.rows.empty()) gates.rows.push_back({"(no gates)", "", "", "pass", "the recipe sets no gates"});
  rep.tables.push_back(gates);

  report::Table steps;
  steps.title = "Steps";
  steps.columns = {"step", "artifact", "own gates", "seconds"};
  steps.left_aligned_columns = 3;
  for (const auto& s : r.steps)
    steps.rows.push_back({s.key_path, artifact_name(s.artifact),
                          s.gates.passed() ? "passed" : "failed: " + join(s.gates.failed, ", "),
                          fmt::format("{:.1f}", s.seconds)});
  rep.tables.push_back(steps);

  rep.findings = r.findings;
  rep.notes = r.notes;
  if (r.wrote_artifact)
    rep.notes.push_back(fmt::format("final artifact: {} (its lite.json records the recipe and the gates: {})",
                                    r.output.string(), r.gates.passed() ? "passed" : "failed"));
  rep.notes.push_back("intermediate artifacts and step reports: " + r.work_dir.string());
  rep.result["notes"] = rep.notes;  // as every verb's --json carries the notes its text report prints
  return rep;
}

std::string to_markdown(const RunResult& r) {
  std::ostringstream md;
  md << fmt::format("## lite run `{}`: {}\n\n", r.recipe.name, r.gates.passed() ? "✅ PASSED" : "❌ FAILED");
  if (!r.recipe.description.empty()) md << r.recipe.description << "\n\n";
  md << "| gate | measured | bound | result | on |\n|---|---:|---:|---|---|\n";
  for (const auto& g : r.gates_checked)
    md << fmt::format("| {} | {} | {} | {} | {} |\n", g.name, measured_text(g), bound_text(g),
                      g.passed ? "pass" : "**FAIL**", g.detail);
  if (r.gates_checked.empty()) md << "| (no gates) | | | pass | |\n";
  md << "\n| step | artifact | own gates | seconds |\n|---|---|---|---:|\n";
  for (const auto& s : r.steps)
    md << fmt::format("| {} | {} | {} | {:.1f} |\n", s.key_path, artifact_name(s.artifact),
                      s.gates.passed() ? "passed" : "failed: " + join(s.gates.failed, ", "), s.seconds);
  const Environment& e = r.environment;
  md << fmt::format("\nMeasured with lite {} (commit {}), libtorch {}, {} threads, quantized engine {}, on {} ({} cores).\n",
                    e.lite_version, e.git_commit, e.libtorch_version, e.intra_op_threads, e.quantized_engine,
                    e.cpu_model, e.logical_cores);
  if (r.wrote_artifact) md << fmt::format("Final artifact: `{}`.\n", r.output.string());
  return md.str();
}

}  // namespace lite::recipe
