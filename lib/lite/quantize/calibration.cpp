#include "lite/quantize/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::quantize {

double Histogram::total() const {
  double t = 0;
  for (double c : counts) t += c;
  return t;
}

Histogram Histogram::of(const std::vector<float>& values, int bins) {
  Histogram h;
  float mn = 0, mx = 0;
  for (float v : values) {
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  h.lo = mn;
  h.hi = mx > mn ? mx : mn + 1;  // all zeros: one unit-wide range, like the observer
  h.counts.assign(static_cast<size_t>(bins), 0.0);
  // The bin rule of torch.histc: floor((x - lo) * bins / (hi - lo)), the maximum in the last bin.
  for (float v : values) {
    auto b = static_cast<int64_t>((double(v) - h.lo) * bins / (h.hi - h.lo));
    b = std::clamp<int64_t>(b, 0, bins - 1);
    h.counts[static_cast<size_t>(b)] += 1;
  }
  return h;
}

QParams affine_qparams(const Range& range, int64_t qmin, int64_t qmax) {
  // float32 arithmetic, as torch.ao.quantization's _calculate_qparams does it.
  float min_neg = std::min(static_cast<float>(range.lo), 0.0f);
  float max_pos = std::max(static_cast<float>(range.hi), 0.0f);
  float scale = (max_pos - min_neg) / static_cast<float>(qmax - qmin);
  scale = std::max(scale, std::numeric_limits<float>::epsilon());
  auto zp = qmin - static_cast<int64_t>(std::nearbyint(min_neg / scale));
  return {static_cast<double>(scale), std::clamp(zp, qmin, qmax)};
}

const std::vector<CalibMethodEntry>& calib_methods() {
  static const std::vector<CalibMethodEntry> table = {
      {"minmax", "observed minimum and maximum; one pass, no clipping", false, minmax_range},
      {"percentile", "0.01% and 99.99% quantiles; clips rare outliers", true, percentile_range},
      {"entropy", "clipping with the least KL divergence (TensorRT's)", true, entropy_range},
      {"mse", "clipping with the least expected squared error (PyTorch's)", true, mse_range},
  };
  return table;
}

std::vector<std::string> calib_method_names() {
  std::vector<std::string> names;
  for (const auto& m : calib_methods()) names.push_back(m.name);
  return names;
}

const CalibMethodEntry& find_calib_method(const std::string& name) {
  return find_named(calib_methods(), name, "calib_method", "calibration method",
                    [](const CalibMethodEntry& m) { return std::vector<std::string>{m.name}; });
}

std::vector<Window> shrink_windows(const Histogram& h, int min_bins, int steps) {
  std::vector<Window> windows;
  const int bins = static_cast<int>(h.counts.size());
  if (bins == 0 || !(h.hi > h.lo)) return windows;
  const double zero = -h.lo / h.bin_width();  // position of 0 in bins
  for (int k = steps; k >= 1; --k) {
    double t = double(k) / double(steps);
    Window w{static_cast<int>(std::lround(zero * (1 - t))), static_cast<int>(std::lround(zero + (bins - zero) * t))};
    w.first = std::clamp(w.first, 0, bins);
    w.last = std::clamp(w.last, 0, bins);
    if (w.last - w.first < min_bins) continue;
    if (!windows.empty() && windows.back().first == w.first && windows.back().last == w.last) continue;
    windows.push_back(w);
  }
  return windows;
}

Range window_range(const Histogram& h, const Window& w) {
  return {h.lo + w.first * h.bin_width(), h.lo + w.last * h.bin_width()};
}

bool CalibrationStats::has_histograms() const {
  for (const auto& [k, v] : values)
    if (v.histogram.counts.empty()) return false;
  return !values.empty();
}

void to_json(nlohmann::json& j, const Histogram& h) {
  // Counts are whole numbers; written as integers they keep the file small.
  std::vector<int64_t> counts;
  counts.reserve(h.counts.size());
  for (double c : h.counts) counts.push_back(static_cast<int64_t>(std::llround(c)));
  j = nlohmann::json{{"lo", h.lo}, {"hi", h.hi}, {"counts", counts}};
}

void from_json(const nlohmann::json& j, Histogram& h) {
  h.lo = j.at("lo").get<double>();
  h.hi = j.at("hi").get<double>();
  h.counts.clear();
  for (const auto& c : j.at("counts")) h.counts.push_back(c.get<double>());
}

void to_json(nlohmann::json& j, const ObservedStats& s) {
  j = nlohmann::json{{"min", s.min}, {"max", s.max}};
  if (!s.histogram.counts.empty()) j["histogram"] = s.histogram;
}

void from_json(const nlohmann::json& j, ObservedStats& s) {
  s.min = j.at("min").get<double>();
  s.max = j.at("max").get<double>();
  if (j.contains("histogram")) s.histogram = j.at("histogram").get<Histogram>();
}

nlohmann::json calibration_document(const CalibrationStats& stats, const CalibMethodEntry& method) {
  nlohmann::json values = nlohmann::json::object();
  for (const auto& [key, s] : stats.values) {
    nlohmann::json v = s;
    Range r = method.range(s);
    QParams q = affine_qparams(r);
    v["range"] = {r.lo, r.hi};
    v["scale"] = q.scale;
    v["zero_point"] = q.zero_point;
    values[key] = v;
  }
  return {{"format", "lite-calibration"},       {"version", 1},
          {"model_sha256", stats.model_sha256}, {"source", stats.source},
          {"samples", stats.samples},           {"method", method.name},
          {"histogram_bins", kHistogramBins},   {"values", values}};
}

CalibrationStats parse_calibration_document(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object() || j.value("format", "") != "lite-calibration")
    throw InputError(file, "is not a lite calibration file (no \"format\": \"lite-calibration\")",
                     "pass the .calib.json that an earlier lite quantize run wrote");
  CalibrationStats s;
  try {
    s.model_sha256 = j.value("model_sha256", "");
    s.source = j.value("source", "");
    s.samples = j.value("samples", int64_t{0});
    for (const auto& [key, v] : j.at("values").items()) {
      ObservedStats o = v.get<ObservedStats>();
      if (!std::isfinite(o.min) || !std::isfinite(o.max) || o.min > o.max)
        throw InputError(file, "value '" + key + "' has an invalid range", "recalibrate with {calib}");
      s.values[key] = o;
    }
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, std::string("malformed calibration file: ") + e.what(), "recalibrate with {calib}");
  }
  if (s.values.empty()) throw InputError(file, "holds no calibrated values", "recalibrate with {calib}");
  return s;
}

}  // namespace lite::quantize
