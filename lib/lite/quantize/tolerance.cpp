#include "lite/quantize/tolerance.hpp"

#include <map>

namespace lite::quantize {

void to_json(nlohmann::json& j, const SearchStep& s) {
  j = nlohmann::json{{"float_layers", s.float_layers}, {"drop_points", s.drop}, {"meets", s.meets}};
}

void to_json(nlohmann::json& j, const SearchResult& r) {
  j = nlohmann::json{{"float_layers", r.float_layers}, {"drop_points", r.drop}, {"met", r.met}, {"steps", r.steps}};
}

SearchResult search_float_layers(const std::vector<std::string>& by_sensitivity, double tolerance,
                                 const std::function<double(const std::vector<std::string>&)>& drop_of) {
  SearchResult result;
  std::map<size_t, double> drops;  // k most sensitive in float -> drop
  auto top = [&](size_t k) { return std::vector<std::string>(by_sensitivity.begin(), by_sensitivity.begin() + k); };
  auto eval = [&](size_t k) {
    auto it = drops.find(k);
    if (it != drops.end()) return it->second;
    double d = drop_of(top(k));
    drops[k] = d;
    result.steps.push_back({top(k), d, d <= tolerance});
    return d;
  };
  const size_t n = by_sensitivity.size();
  size_t fit = 0;
  bool found = eval(0) <= tolerance;
  if (!found && n > 1) {
    size_t failed = 0, k = 1;
    while (k < n) {
      if (eval(k) <= tolerance) {
        found = true;
        break;
      }
      failed = k;
      k = std::min(n - 1, k * 2);
      if (k == failed) break;
    }
    if (found) {
      // Smallest k in (failed, k] that fits, assuming more float layers never hurt.
      size_t lo = failed, hi = k;
      while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (eval(mid) <= tolerance)
          hi = mid;
        else
          lo = mid;
      }
      fit = hi;
    }
  }
  if (found) {
    result.met = true;
    result.float_layers = top(fit);
    result.drop = drops[fit];
  } else {
    // Best effort: the configuration with the smallest drop (fewest float layers on ties).
    size_t best = 0;
    for (const auto& [k, d] : drops)
      if (d < drops[best]) best = k;
    result.float_layers = top(best);
    result.drop = drops[best];
  }
  return result;
}

}  // namespace lite::quantize
