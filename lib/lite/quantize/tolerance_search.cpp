// The torch side of the tolerance search (the search itself is tolerance.cpp's, torch-free): the quantized layers
// ranked by sensitivity, each quantized alone with every other layer float and scored by the KL divergence of its
// outputs from the float model's; then each configuration the search asks for built and judged, keeping only the
// best trial so far so the chosen one needs no second build.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

namespace {

// Layers ordered by how much quantizing each one alone moves the output (KL divergence against the
// float model on the quality data), most sensitive first.
std::vector<std::string> rank_sensitivity(Context& c, const ModeEntry& mode, const Plan& plan, nlohmann::json& record) {
  std::vector<std::pair<double, std::string>> scored;
  std::vector<std::string> quantized;
  std::vector<LayerInfo> layers;
  std::set<std::string> all;
  for (const auto& l : plan.layers) {
    if (l.quantized) quantized.push_back(l.layer.name);
    layers.push_back(l.layer);
    all.insert(l.layer.name);
  }
  ProgressPhase phase(c.progress, "sensitivity", quantized.size());
  std::vector<std::string> unranked;
  for (const auto& name : quantized) {
    if (c.budget_spent()) {  // rank what was measured; the rest follow in model order
      unranked.push_back(name);
      continue;
    }
    std::set<std::string> keep = all;  // every other layer in float
    keep.erase(name);
    Plan p = make_plan(layers, mode, plan.engine, {}, {}, keep, plan.file_bytes_before);
    Built b = build(c, mode, p);
    Quality q = measure_quality(c, b.module, no_progress(), "");
    scored.emplace_back(q.agreement.kl_divergence, name);
    record[name] = {{"kl_divergence", q.agreement.kl_divergence}, {"drop_points", q.drop}};
    phase.advance();
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> order;
  for (const auto& s : scored) order.push_back(s.second);
  if (!unranked.empty())
    c.note(fmt::format("{}: {} of {} layers were not ranked by sensitivity: the {{budget_s}} was spent", mode.name,
                       unranked.size(), quantized.size()));
  order.insert(order.end(), unranked.begin(), unranked.end());
  return order;
}

}  // namespace

// Keeps the most sensitive layers in float until the drop fits the tolerance (tolerance.hpp's search) and
// replaces the candidate's plan, module and quality with the configuration the search chose.
void search_tolerance(Context& c, const ModeEntry& mode, double tolerance, const std::vector<LayerInfo>& layers,
                      const std::string& engine, Candidate& cand, Built& b) {
  nlohmann::json sensitivity = nlohmann::json::object();
  auto order = rank_sensitivity(c, mode, cand.plan, sensitivity);
  // The search returns the fitting configuration with the fewest float layers, else the one with the
  // smallest drop (fewest float layers on ties). Only the trial that is best by that rule so far is kept,
  // so the one returned needs no second build and measurement.
  struct Trial {
    std::vector<std::string> keep;
    Plan plan;
    Built built;
    Quality quality;
  };
  std::optional<Trial> best;
  auto better = [&](const Trial& x, const Trial& y) {
    bool x_fits = x.quality.drop <= tolerance, y_fits = y.quality.drop <= tolerance;
    if (x_fits != y_fits) return x_fits;
    if (!x_fits && x.quality.drop != y.quality.drop) return x.quality.drop < y.quality.drop;
    return x.keep.size() < y.keep.size();
  };
  auto make = [&](const std::vector<std::string>& keep) {
    return make_plan(layers, mode, engine, c.o.skip, c.o.only, {keep.begin(), keep.end()}, c.source.file_bytes);
  };
  ProgressPhase searching(c.progress, "tolerance search", 0);
  auto search = search_float_layers(order, tolerance, [&](const std::vector<std::string>& keep) {
    searching.advance();
    if (keep.empty()) return cand.quality.drop;
    Trial trial{keep, make(keep), {}, {}};
    trial.built = build(c, mode, trial.plan);
    apply_float_regions(trial.plan, trial.built.float_regions);
    trial.quality = measure_quality(c, trial.built.module, no_progress(), "");
    double drop = trial.quality.drop;
    if (!best || better(trial, *best)) best = std::move(trial);
    return drop;
  });
  cand.search = search;
  if (!search.float_layers.empty()) {
    if (!best || best->keep != search.float_layers) {  // not expected: build the choice again
      best = Trial{search.float_layers, make(search.float_layers), {}, {}};
      best->built = build(c, mode, best->plan);
      apply_float_regions(best->plan, best->built.float_regions);
      best->quality = measure_quality(c, best->built.module, c.progress, "");
    }
    cand.plan = std::move(best->plan);
    b = std::move(best->built);
    cand.quality = best->quality;
  }
  b.details["sensitivity"] = sensitivity;
}

}  // namespace lite::quantize
