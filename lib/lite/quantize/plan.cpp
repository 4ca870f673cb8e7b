#include "lite/quantize/plan.hpp"


#include <algorithm>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::quantize {

size_t Plan::quantized_layers() const {
  return static_cast<size_t>(
      std::count_if(layers.begin(), layers.end(), [](const LayerPlan& l) { return l.quantized; }));
}

std::vector<std::string> Plan::float_layers() const {
  std::vector<std::string> names;
  for (const auto& l : layers)
    if (!l.quantized) names.push_back(l.layer.name);
  return names;
}

void to_json(nlohmann::json& j, const LayerPlan& l) {
  j = nlohmann::json{{"layer", l.layer},   {"quantized", l.quantized},       {"scheme", l.scheme},
                     {"reason", l.reason}, {"bytes_before", l.bytes_before}, {"bytes_after", l.bytes_after}};
}

void to_json(nlohmann::json& j, const FloatRegion& r) {
  j = nlohmann::json{{"module", r.module}, {"construct", r.construct}};
}

void to_json(nlohmann::json& j, const Plan& p) {
  j = nlohmann::json{{"mode", p.mode},
                     {"engine", p.engine},
                     {"layers", p.layers},
                     {"quantized_layers", p.quantized_layers()},
                     {"file_bytes_before", p.file_bytes_before},
                     {"weight_bytes_before", p.weight_bytes_before},
                     {"weight_bytes_after", p.weight_bytes_after},
                     {"expected_file_bytes", p.expected_file_bytes},
                     {"float_regions", p.float_regions}};
}

void apply_float_regions(Plan& plan, const std::vector<FloatRegion>& regions) {
  for (const auto& region : regions) {
    if (std::none_of(plan.float_regions.begin(), plan.float_regions.end(),
                     [&](const FloatRegion& r) { return r.module == region.module; }))
      plan.float_regions.push_back(region);
    for (auto& lp : plan.layers) {
      const auto& name = lp.layer.name;
      bool inside = region.module.empty() || name == region.module || name.rfind(region.module + ".", 0) == 0;
      // A region is graph mode's: attention's projections, dynamic int8 after it (no observer), still convert.
      if (!inside || !lp.quantized || lp.layer.in_multihead_attention) continue;
      lp.quantized = false;
      lp.scheme = "float";
      lp.reason = "in " + region.module + ": " + region.construct;
      plan.weight_bytes_after += lp.bytes_before - lp.bytes_after;
      lp.bytes_after = lp.bytes_before;
      uint64_t saved = plan.weight_bytes_before - std::min(plan.weight_bytes_before, plan.weight_bytes_after);
      plan.expected_file_bytes =
          plan.file_bytes_before > saved ? plan.file_bytes_before - saved : plan.weight_bytes_after;
    }
  }
}

namespace {
std::string first_match(const std::vector<std::string>& patterns, const std::string& name) {
  for (const auto& p : patterns)
    if (glob_match(p, name)) return p;
  return {};
}
}  // namespace

void check_layer_globs(const std::vector<LayerInfo>& layers, const std::vector<std::string>& skip,
                       const std::vector<std::string>& only) {
  std::vector<std::string> names;
  for (const auto& l : layers) names.push_back(l.name);
  auto check = [&](const char* flag, const std::vector<std::string>& patterns) {
    for (const auto& p : patterns) {
      bool any = std::any_of(names.begin(), names.end(), [&](const std::string& n) { return glob_match(p, n); });
      if (!any)
        throw UsageError(describe_problem(flag, "'" + p + "' matches no layer", "layers: " + join(names, ", ")));
    }
  };
  check("{skip}", skip);
  check("{only}", only);
}

Plan make_plan(const std::vector<LayerInfo>& layers, const ModeEntry& mode, const std::string& engine,
               const std::vector<std::string>& skip, const std::vector<std::string>& only,
               const std::set<std::string>& keep_float, uint64_t file_bytes) {
  if (!mode.scheme) throw InternalError("make_plan needs a concrete mode, not auto");
  Plan plan;
  plan.mode = mode.name;
  plan.engine = engine;
  plan.file_bytes_before = file_bytes;
  bool any_supported = false;
  for (const auto& layer : layers) {
    LayerPlan lp;
    lp.layer = layer;
    lp.bytes_before = layer.float_bytes();
    std::string scheme = mode.scheme->layer_scheme(layer);
    const std::string unsupported = scheme.empty() ? std::string() : mode.scheme->unsupported_reason(layer);
    any_supported = any_supported || (!scheme.empty() && unsupported.empty());
    if (scheme.empty()) {
      lp.reason = std::string(mode.name) + " mode leaves " + layer.kind + " layers in float";
    } else if (!unsupported.empty()) {
      lp.reason = unsupported;
    } else if (!only.empty() && first_match(only, layer.name).empty()) {
      lp.reason = "not in {only}";
    } else if (auto p = first_match(skip, layer.name); !p.empty()) {
      lp.reason = "{skip} " + p;
    } else if (keep_float.count(layer.name)) {
      lp.reason = "sensitive: kept float to meet {tolerance}";
    } else {
      lp.quantized = true;
      lp.scheme = scheme;
    }
    if (!lp.quantized) lp.scheme = "float";
    lp.bytes_after = lp.quantized ? mode.scheme->layer_bytes(layer) : lp.bytes_before;
    plan.weight_bytes_before += lp.bytes_before;
    plan.weight_bytes_after += lp.bytes_after;
    plan.layers.push_back(lp);
  }
  // Layers the scheme itself would rather keep in float (too small to pay for an int8 call), unless
  // --only names them or nothing would be left to quantize.
  std::vector<LayerPlan*> small;
  for (auto& lp : plan.layers)
    if (lp.quantized && only.empty() && !mode.scheme->keep_float_reason(lp.layer).empty()) small.push_back(&lp);
  if (!small.empty() && small.size() < plan.quantized_layers()) {
    for (auto* lp : small) {
      lp->quantized = false;
      lp->reason = mode.scheme->keep_float_reason(lp->layer);
      lp->scheme = "float";
      plan.weight_bytes_after += lp->bytes_before - lp->bytes_after;
      lp->bytes_after = lp->bytes_before;
    }
  }
  if (!any_supported) {
    std::vector<std::string> kinds;
    for (const auto& l : layers) kinds.push_back(l.name + " (" + l.kind + ")");
    throw InputError("{mode}",
                     std::string(mode.name) + " mode has nothing to quantize in this model" +
                         (kinds.empty() ? std::string(" (no convolution or linear layers)") : ": " + join(kinds, ", ")),
                     "choose another {mode}");
  }
  uint64_t saved = plan.weight_bytes_before - std::min(plan.weight_bytes_before, plan.weight_bytes_after);
  plan.expected_file_bytes = file_bytes > saved ? file_bytes - saved : plan.weight_bytes_after;
  return plan;
}

}  // namespace lite::quantize
