#pragma once
// The tolerance search: keep the most sensitive layers in float until the accuracy drop fits the
// tolerance. Torch-free; the caller supplies the layers ordered by sensitivity (most sensitive first)
// and a function that builds and evaluates the model with a given set of float layers.
//
// The search first tries everything quantized, then keeps the k most sensitive layers in float for
// k = 1, 2, 4, 8, ... until the drop fits, then bisects between the last k that failed and the first
// that fit, so it needs O(log n) evaluations. It never keeps every layer in float (that is the float
// model): if only that would fit, the tolerance is not met and the best configuration tried is
// returned.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::quantize {

struct SearchStep {
  std::vector<std::string> float_layers;
  double drop = 0;  // points lost against the float model
  bool meets = false;
};

struct SearchResult {
  std::vector<std::string> float_layers;  // the configuration chosen
  double drop = 0;
  bool met = false;
  std::vector<SearchStep> steps;  // every configuration evaluated, in order
};

void to_json(nlohmann::json& j, const SearchStep& s);
void to_json(nlohmann::json& j, const SearchResult& r);

SearchResult search_float_layers(const std::vector<std::string>& by_sensitivity, double tolerance,
                                 const std::function<double(const std::vector<std::string>&)>& drop_of);

}  // namespace lite::quantize
