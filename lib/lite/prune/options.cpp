// lite prune's options: JSON in and out through OptionReader, and every value rule in validate(),
// keyed by option key so recipes and the CLI report the same problem.
#include "lite/prune/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/core/atomic_file.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::prune {

void to_json(nlohmann::json& j, const LayerRatio& r) { j = {{"glob", r.glob}, {"ratio", r.ratio}}; }

void from_json(const nlohmann::json& j, LayerRatio& r) {
  OptionReader in(j);
  in.read("glob", r.glob).read("ratio", r.ratio);
  in.finish();
}

// The one field list of PruneOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void prune_fields(Fields& f, O& o) {
  model::eval_data_fields(f, o)
      .field("model", o.model)
      .field("output", o.output)
      .field("ratio", o.ratio)
      .field("heads", o.heads)
      .field("layer_ratios", o.layer_ratios)
      .field("global", o.global)
      .field("global_floor", o.global_floor)
      .field("criterion", o.criterion)
      .field("data", o.data)
      .field("data_samples", o.data_samples)
      .field("exclude", o.exclude)
      .field("round_to", o.round_to)
      .field("structured", o.structured)
      .field("unstructured", o.unstructured)
      .field("sparsity", o.sparsity)
      .field("tolerance", o.tolerance)
      .field("agreement_floor", o.agreement_floor)
      .field("sensitivity", o.sensitivity)
      .field("sensitivity_ratios", o.sensitivity_ratios)
      .field("dry_run", o.dry_run)
      .field("batches", o.batches);
  llm::decoder_knob_fields(f, o.decoder);
  measure::timing_knob_fields(f, o.timing);
}

void to_json(nlohmann::json& j, const PruneOptions& o) {
  OptionWriter w(j);
  prune_fields(w, o);
}

void from_json(const nlohmann::json& j, PruneOptions& o) {
  OptionReader r(j);
  prune_fields(r, o);
  r.finish();
}

namespace {

// A fraction removed: 0 keeps everything, 1 would remove a whole layer.
void check_fraction(const std::string& key, double value) {
  if (!(std::isfinite(value) && value >= 0 && value < 1))
    throw OptionError(key, fmt::format("must be in [0, 1), got {}", value),
                      "give the fraction to remove, e.g. 0.5 (1 would remove every channel)");
}

}  // namespace

LayerRatio parse_ratio(const std::string& text) {
  LayerRatio r;
  std::string number = text;
  auto eq = text.rfind('=');
  if (eq != std::string::npos) {
    r.glob = trim(text.substr(0, eq));
    number = text.substr(eq + 1);
    if (r.glob.empty()) throw OptionError("ratio", "'" + text + "' has no layer glob before '='", "write GLOB=R, e.g. 'layer4.*=0.3'");
  }
  const std::optional<double> ratio = parse_decimal(number);  // decimal only: std::stod read "0x0.8" as 0.5
  if (!ratio) throw OptionError("ratio", "'" + text + "' is not a number or GLOB=NUMBER", "e.g. 0.5 or 'layer4.*=0.3'");
  r.ratio = *ratio;
  return r;
}

std::filesystem::path output_path(const PruneOptions& o) {
  if (!o.output.empty()) return o.output;
  const bool unstructured = o.unstructured || o.sparsity.has_value();
  return derive_output_path(o.model, unstructured ? "sparse" : "pruned");
}

std::filesystem::path sensitivity_path(const PruneOptions& o, const char* extension) {
  return output_path(o).replace_extension(extension);
}

namespace {
// What the run writes: the sensitivity CSV and SVG when it analyses (--sensitivity, or --tolerance without a
// ratio), the artifact unless it only analyses; nothing in a dry run.
void check_files(const PruneOptions& o) {
  FileRoles roles;
  roles.reads("{model}", o.model)
      .reads_optional("{data}", o.data);
  model::add_reads(roles, o);
  const bool analyses = o.sensitivity || (o.tolerance && !o.ratio && o.layer_ratios.empty());
  if (!o.dry_run && analyses) {
    roles.writes("output", sensitivity_path(o, ".sensitivity.csv"), "the sensitivity CSV");
    roles.writes("output", sensitivity_path(o, ".sensitivity.svg"), "the sensitivity SVG");
  }
  if (!o.dry_run && !o.sensitivity) roles.writes("output", output_path(o));
  roles.check();
}
}  // namespace

void validate(const PruneOptions& o) {
  if (o.structured && (o.unstructured || o.sparsity))
    throw OptionError("structured", "contradicts {unstructured} and {sparsity}", "give one of the two");
  if (o.model.empty()) throw OptionError("model", "is required", "pass the TorchScript model file");
  if (o.ratio) check_fraction("ratio", *o.ratio);
  for (const auto& r : o.layer_ratios) {
    if (r.glob.empty()) throw OptionError("layer_ratios", "an entry has an empty glob", "write GLOB=R");
    check_fraction("ratio", r.ratio);
  }
  if (o.sparsity) check_fraction("sparsity", *o.sparsity);
  if (o.heads) check_fraction("heads", *o.heads);
  llm::validate(o.decoder);
  if (o.unstructured && !o.sparsity)
    throw OptionError("sparsity", "unstructured pruning needs the fraction of weights to zero", "pass e.g. {sparsity} 0.5");
  bool unstructured = o.unstructured || o.sparsity.has_value();
  if (unstructured && (o.ratio || !o.layer_ratios.empty()))
    throw OptionError("ratio", "removes channels (structured) while sparsity zeroes weights (unstructured)",
                      "give one of the two");
  if (unstructured && (o.heads || o.decoder.given()))
    throw OptionError(o.heads ? "heads" : "sparsity", "removes whole heads of a decoder while sparsity zeroes weights",
                      "give one of the two");
  if (!unstructured && !o.ratio && !o.heads && o.layer_ratios.empty() && !o.sensitivity && !o.tolerance)
    throw OptionError("ratio", "is required: how much to prune", "pass {ratio} 0.5 (channels), {heads} 0.25 (a decoder's KV heads), {sparsity} 0.5 (weights), or {tolerance} POINTS to let the sensitivity "
                      "analysis choose per-group ratios");
  option_rules::in_range("global_floor", o.global_floor, 0.0, 1.0);  // checked with or without --global: never ignored
  if (o.round_to < 1) throw OptionError("round_to", "must be at least 1", "e.g. 8 keeps channel counts at multiples of 8");
  static const std::vector<std::string> criteria = {"l1", "l2", "bnscale", "taylor"};
  if (!unstructured) {
    std::string c = to_lower(o.criterion);
    c.erase(std::remove(c.begin(), c.end(), '-'), c.end());
    if (c == "taylor" && !o.data)
      throw OptionError("data", "is required by the taylor criterion (it ranks channels by gradient x weight)",
                        "pass {data} FILE with samples shaped like the model input, or use {criterion} l1");
  }
  for (auto b : o.batches)
    for (const auto& spec : o.inputs) model::check_input_size(spec, b);
  if (o.data_samples < 1) throw OptionError("data_samples", "must be at least 1", "give 1 or more");
  model::validate(o);
  if (o.tolerance) option_rules::in_range("tolerance", *o.tolerance, 0, 100, "points of top-1 the result may lose");
  option_rules::in_range("agreement_floor", o.agreement_floor, 0, 100, "points of top-1 agreement with the original");
  if (o.sensitivity && unstructured)
    throw OptionError("sensitivity", "analyses channel groups (structured pruning)", "drop {sparsity}/{unstructured}");
  if (o.sensitivity_ratios.empty()) throw OptionError("sensitivity_ratios", "needs at least one ratio", "give e.g. 0.25,0.5");
  for (double r : o.sensitivity_ratios)
    if (!(std::isfinite(r) && r > 0 && r < 1))
      throw OptionError("sensitivity_ratios", fmt::format("ratios must be in (0, 1), got {}", r), "e.g. 0.1,0.3,0.5");
  measure::check_batch_sizes("batches", o.batches);
  measure::validate(o.timing);
  check_files(o);
}

}  // namespace lite::prune
