#pragma once
// lite prune's options: what to remove (a channel ratio per group, or a weight sparsity), how to rank
// (criterion), what to protect, what to measure. Torch-free, so the CLI binds flags straight onto these
// fields and recipes read the same keys through from_json. validate() holds every value rule, keyed by the
// option's snake_case key (the CLI words it as a flag).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/llm/decoder_knobs.hpp"
#include "lite/measure/timing_options.hpp"
#include "lite/model/eval_data.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::prune {

// A ratio for the channel groups whose layers match a shell glob ("layer4.*=0.3"). The last matching
// entry wins; groups matching none get PruneOptions::ratio.
struct LayerRatio {
  std::string glob;
  double ratio = 0;
};

// eval, labels, eval_batch and inputs are the shared evaluation-data fragment (model/eval_data.hpp).
struct PruneOptions : model::EvalData {
  std::filesystem::path model;
  std::filesystem::path output;        // empty: MODEL.pruned.pt beside the model
  std::optional<double> ratio;         // fraction of each group's channels to remove, in [0, 1) (a decoder: MLP width)
  std::optional<double> heads;         // a decoder: fraction of each attention's KV heads removed, each with its query group
  std::vector<LayerRatio> layer_ratios;
  bool global = false;                 // rank channels across groups instead of per group
  double global_floor = 0.1;           // with global: every group keeps at least this fraction
  std::string criterion = "l1";        // see criteria(): l1, l2, bn-scale, taylor
  std::optional<std::filesystem::path> data;  // samples for taylor (gradients); labels used when present
  int64_t data_samples = 256;
  std::vector<std::string> exclude;    // globs over layer names whose channels are kept
  int64_t round_to = 1;                // kept channel counts are multiples of this (where possible)
  bool structured = false;             // asked for by name (--structured, the default method): refused with unstructured
  bool unstructured = false;           // zero single weights instead of removing channels
  std::optional<double> sparsity;      // unstructured: fraction of each layer's weights set to zero
  std::optional<double> tolerance;     // points of accuracy (or agreement) the result may lose
  double agreement_floor = 5.0;        // without a tolerance: points of top-1 agreement the result may lose
  bool sensitivity = false;            // prune each group alone at each ratio; CSV + SVG, no model
  std::vector<double> sensitivity_ratios = {0.1, 0.3, 0.5};
  bool dry_run = false;
  std::vector<int64_t> batches = {1, 32};  // latency is measured at these batch sizes
  llm::DecoderKnobs decoder = {};     // a decoder's prompt and generation lengths (docs/llm.md)
  measure::TimingKnobs timing{/*warmup=*/3, /*iterations=*/{}, /*duration_s=*/1.0};
};

void to_json(nlohmann::json& j, const LayerRatio& r);
void from_json(const nlohmann::json& j, LayerRatio& r);
void to_json(nlohmann::json& j, const PruneOptions& o);
void from_json(const nlohmann::json& j, PruneOptions& o);

// Throws lite::OptionError(key, problem, fix) for the first value rule broken, including the file rule
// (core/file_roles.hpp) over every file the command reads and writes.
void validate(const PruneOptions& o);

// The artifact's path: output, else MODEL.pruned.pt (MODEL.sparse.pt for unstructured) beside the model.
std::filesystem::path output_path(const PruneOptions& o);
// The sensitivity analysis' CSV and SVG, beside the artifact's path.
std::filesystem::path sensitivity_path(const PruneOptions& o, const char* extension);

// "layer4.*=0.3" -> {"layer4.*", 0.3}; "0.5" -> {"", 0.5}. Throws OptionError("ratio", ...) otherwise.
LayerRatio parse_ratio(const std::string& text);

}  // namespace lite::prune
