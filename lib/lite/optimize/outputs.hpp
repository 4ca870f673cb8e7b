#pragma once
// What lite optimize hands back beside the artifact: a lite run recipe that rebuilds the chosen configuration
// and gates it on the same target (emit_recipe.cpp), and an SVG of the measured variants (frontier_plot.cpp).
// Torch-free.
#include <string>

#include <nlohmann/json.hpp>

#include "lite/optimize/optimize.hpp"

namespace lite::optimize {

// The recipe for result.variants[*result.chosen]; absolute paths, so it runs from any folder.
nlohmann::json emitted_recipe(const OptimizeResult& result, const OptimizeOptions& o);

// The recipe for a decoder search's chosen pair (result.decoder): its weight mode as a quantize step, a cache-sim step
// on the trace at its policy and size with its fitted prefill cost, the TTFT target and quality budget as gates.
nlohmann::json emitted_decoder_recipe(const OptimizeResult& result, const OptimizeOptions& o);

// Served latency (the target's figure) against accuracy drop, one point per fully measured variant, its area
// growing with the cache it needs; the frontier joined, the choice marked, the target and budget drawn.
std::string frontier_svg(const OptimizeResult& result);

}  // namespace lite::optimize
