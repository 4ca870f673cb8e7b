// The recipe lite optimize emits (outputs.hpp): the choice's levers as lite run steps (prune, quantize; for a
// cache, a profile of the final model and a cache-sim step at the chosen policy and size, paid by that profile),
// and the same target and accuracy budget as gates, so a CI job keeps checking the choice after a retrain.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "lite/cache/verb.hpp"
#include "lite/distill/verb.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/outputs.hpp"
#include "lite/profile/verb.hpp"
#include "lite/prune/verb.hpp"
#include "lite/quantize/verb.hpp"

namespace lite::optimize {

namespace fs = std::filesystem;

namespace {

std::string absolute_path(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

// The verbs time their result briefly in a recipe; the recipe's own evaluation times the final artifact.
nlohmann::json timing_keys(const OptimizeOptions& o) {
  nlohmann::json keys = {{"threads", o.threads}, {"batches", {o.batch}}, {"duration_s", 0.5}};
  // As text ("1x3x224x224"), the form both prune's and quantize's "inputs" read.
  std::vector<std::string> shapes;
  for (const auto& spec : o.inputs) shapes.push_back(model::to_string(spec));
  if (!shapes.empty()) keys["inputs"] = shapes;
  return keys;
}

nlohmann::json gates(const OptimizeResult& r, const OptimizeOptions& o, const Variant& v, bool labelled) {
  nlohmann::json g = nlohmann::json::object();
  if (labelled)
    g["max_accuracy_drop"] = r.accuracy_budget;
  else
    g["min_agreement"] = 100.0 - r.accuracy_budget;
  const bool cached = cache_size_needed(v) > 0;
  if (cached && r.target.key == "target_p99_ms") g["max_cache_p99_ms"] = r.target.value;
  // The simulation is deterministic: the chosen size's hit ratio (rounded down) holds until the trace changes.
  if (cached) g["min_hit_ratio"] = std::floor(v.cache->hit_ratio * 1000) / 1000;
  if (!cached && r.target.key == "target_p99_ms") g["max_p99_ms"] = r.target.value;
  if (r.target.key == "target_speedup") g["min_speedup"] = r.target.value;
  return g;
}

}  // namespace

nlohmann::json emitted_recipe(const OptimizeResult& r, const OptimizeOptions& o) {
  const Variant& v = r.variants.at(*r.chosen);
  nlohmann::json data = nlohmann::json::object();
  if (o.eval) data["eval"] = absolute_path(*o.eval);
  if (o.labels) data["eval_labels"] = absolute_path(*o.labels);
  const std::optional<fs::path> calib = o.calib ? o.calib : o.eval;
  if (calib && v.spec.mode == "static") data["calib"] = absolute_path(*calib);
  if (o.trace) data["trace"] = absolute_path(*o.trace);
  if (v.spec.recovered) {
    data["train"] = absolute_path(*o.data);
    if (o.data_labels) data["train_labels"] = absolute_path(*o.data_labels);
  }

  nlohmann::json steps = nlohmann::json::array();
  if (v.spec.pruned()) {
    // The sensitivity analysis' per-group ratios as chosen, so the rebuild does not depend on re-running it.
    nlohmann::json p = {{"agreement_floor", 100}};
    if (v.spec.by_sensitivity)
      p["layer_ratios"] = v.layer_ratios;
    else
      p["ratio"] = v.spec.prune_ratio;
    p.update(timing_keys(o));
    steps.push_back({{prune::verb().name, p}});
  }
  if (v.spec.recovered) {
    nlohmann::json d = {{"data", "@data.train"},   {"eval", "@data.train"},     {"eval_samples", 1024},
                        {"samples", o.recover_samples}, {"epochs", o.recover_epochs}, {"threads", o.threads},
                        {"latency_iterations", 0}};
    if (o.data_labels) d.update({{"labels", "@data.train_labels"}, {"eval_labels", "@data.train_labels"}});
    steps.push_back({{distill::verb().name, d}});
  }
  if (v.spec.mode != "float") {
    nlohmann::json q = {{"mode", v.spec.mode}, {"allow_slower", true}, {"agreement_floor", 100}};
    if (v.spec.mode == "static") q.update({{"calib", "@data.calib"}, {"calib_samples", o.calib_samples}});
    q.update(timing_keys(o));
    steps.push_back({{quantize::verb().name, q}});
  }
  const std::string final_model = steps.empty() ? "@model" : fmt::format("@steps[{}]", steps.size() - 1);
  const bool cached = cache_size_needed(v) > 0;
  if (steps.empty() || cached)
    steps.push_back({{profile::verb().name, {{"models", {final_model}}, {"threads", o.threads}, {"batch", o.batch},
                                  {"duration_s", 2.0}}}});
  if (cached) {
    steps.push_back({{cache::verb().name, {{"trace", "@data.trace"},
                                    {"format", o.trace_format},
                                    {"bytes", !o.cache_objects},
                                    {"policies", {v.cache->policy}},
                                    {"sizes", std::to_string(v.cache->size)},
                                    {"hit_latency_ms", *o.hit_latency_ms},
                                    {"miss_latency_from", {fmt::format("@steps[{}].report", steps.size() - 1)}}}}});
  }
  nlohmann::json evaluate = {{"threads", o.threads}, {"batch", o.batch}, {"duration_s", 2.0}};
  if (o.labels) evaluate["labels"] = absolute_path(*o.labels);
  nlohmann::json recipe = {
      {"lite_recipe", 1},
      {"name", "optimized"},
      {"description", fmt::format("lite optimize's choice for {}: {}{}, gated on the same target and accuracy budget",
                                  r.target.describe(), v.spec.label(),
                                  cached ? fmt::format(" behind a {} cache of {} {}", v.cache->policy, v.cache->size,
                                                       r.cache_unit)
                                         : "")},
      {"model", absolute_path(o.model)},
      {"steps", steps},
      {"evaluate", evaluate},
      {"gates", gates(r, o, v, r.metric == "top-1 accuracy")}};
  if (!data.empty()) recipe["data"] = data;
  return recipe;
}

}  // namespace lite::optimize
