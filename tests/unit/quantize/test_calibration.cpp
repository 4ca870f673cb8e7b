// Calibration methods on hand-made data: exact ranges and qparams where they are known in closed form,
// and the clipping each method must (or must not) do on outliers and long tails.
#include <doctest/doctest.h>

#include <cmath>

#include "lite/core/error.hpp"
#include "lite/quantize/calibration.hpp"

using namespace lite::quantize;

namespace {

ObservedStats observe(const std::vector<float>& v) {
  ObservedStats s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  s.histogram = Histogram::of(v);
  return s;
}

// Deterministic exponential sample (quantiles of Exp(1)): a long right tail.
std::vector<float> exponential(int n) {
  std::vector<float> v;
  for (int k = 0; k < n; ++k) v.push_back(static_cast<float>(-std::log(1.0 - (k + 0.5) / n)));
  return v;
}

// Deterministic Laplace sample (quantiles of Laplace(0, 1)): symmetric, long tails on both sides.
std::vector<float> laplace(int n) {
  std::vector<float> v;
  for (int k = 0; k < n; ++k) {
    double u = (k + 0.5) / n - 0.5;
    v.push_back(static_cast<float>(u < 0 ? std::log(1 + 2 * u) : -std::log(1 - 2 * u)));
  }
  return v;
}

}  // namespace

TEST_CASE("affine qparams match PyTorch's observers") {
  // [0, 1]: scale 1/255, zero point 0.
  QParams q = affine_qparams({0, 1});
  CHECK(q.scale == doctest::Approx(1.0 / 255).epsilon(1e-6));
  CHECK(q.zero_point == 0);
  // [-1, 3]: scale 4/255, zero point round(1 / (4/255)) = round(63.75) = 64.
  q = affine_qparams({-1, 3});
  CHECK(q.scale == doctest::Approx(4.0 / 255).epsilon(1e-6));
  CHECK(q.zero_point == 64);
  // A range that excludes zero is widened to hold it: [2, 5] quantizes like [0, 5].
  q = affine_qparams({2, 5});
  CHECK(q.scale == doctest::Approx(5.0 / 255).epsilon(1e-6));
  CHECK(q.zero_point == 0);
  // Symmetric: 1 / (2/255 in float32) = 127.49999..., zero point 127, as torch's MinMaxObserver gives.
  CHECK(affine_qparams({-1, 1}).zero_point == 127);
  // All zeros: the smallest scale, no division by zero.
  q = affine_qparams({0, 0});
  CHECK(q.scale > 0);
  CHECK(q.zero_point == 0);
}

TEST_CASE("histogram bins follow torch.histc") {
  Histogram h = Histogram::of({0.f, 0.25f, 0.5f, 1.0f}, 4);
  CHECK(h.lo == 0);
  CHECK(h.hi == 1);
  CHECK(h.counts == std::vector<double>{1, 1, 1, 1});  // the maximum goes to the last bin
  Histogram neg = Histogram::of({-2.f, 2.f}, 4);       // zero inside the range
  CHECK(neg.lo == -2);
  CHECK(neg.hi == 2);
  CHECK(neg.total() == 2);
  Histogram positive = Histogram::of({3.f, 4.f}, 4);  // the range is widened to hold zero
  CHECK(positive.lo == 0);
  CHECK(positive.hi == 4);
}

TEST_CASE("min-max keeps the observed range exactly") {
  ObservedStats s = observe({-1.f, 0.f, 0.5f, 3.f});
  Range r = minmax_range(s);
  CHECK(r.lo == -1);
  CHECK(r.hi == 3);
  QParams q = affine_qparams(r);
  CHECK(q.scale == doctest::Approx(4.0 / 255).epsilon(1e-6));
  CHECK(q.zero_point == 64);
}

TEST_CASE("percentile clips a rare outlier that min-max keeps") {
  std::vector<float> v;
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<float>(i) / 20000.f);  // uniform [0, 1)
  v.push_back(1000.f);                                                           // one outlier
  ObservedStats s = observe(v);
  CHECK(minmax_range(s).hi == 1000);
  Range r = percentile_range(s);
  CHECK(r.lo == 0);
  CHECK(r.hi < 2);  // within a histogram bin (1000/2048) of the 99.99% quantile, ~1.0
  CHECK(r.hi > 0.9);
}

TEST_CASE("entropy and mse clip a long tail but keep most of it") {
  ObservedStats s = observe(exponential(100000));
  const double max = s.max;  // ln(200000) ~ 12.2
  CHECK(max == doctest::Approx(12.2).epsilon(0.01));
  for (auto method : {entropy_range, mse_range}) {
    Range r = method(s);
    CHECK(r.lo == s.min);  // the smallest value, 5e-6
    CHECK(r.hi < max);     // clips the sparse tail
    CHECK(r.hi > 3);       // but keeps the bulk (95% of the mass is below 3)
  }
}

TEST_CASE("entropy and mse keep a uniform distribution whole") {
  std::vector<float> v;
  for (int i = 0; i <= 10000; ++i) v.push_back(static_cast<float>(i) / 10000.f);
  ObservedStats s = observe(v);
  CHECK(mse_range(s).hi == doctest::Approx(1.0).epsilon(0.01));
  CHECK(entropy_range(s).hi > 0.95);
}

TEST_CASE("symmetric data gets a symmetric range from every method") {
  ObservedStats s = observe(laplace(100000));
  for (const auto& m : calib_methods()) {
    CAPTURE(m.name);
    Range r = m.range(s);
    CHECK(r.lo < 0);
    CHECK(r.hi > 0);
    CHECK(-r.lo == doctest::Approx(r.hi).epsilon(0.02));
    CHECK(affine_qparams(r).zero_point == doctest::Approx(127.5).epsilon(0.02));
  }
}

TEST_CASE("every calibration method returns a range inside the observed one") {
  for (const auto& data : {exponential(5000), laplace(5000), std::vector<float>{0.f, 0.f, 0.f}}) {
    ObservedStats s = observe(data);
    for (const auto& m : calib_methods()) {
      CAPTURE(m.name);
      Range r = m.range(s);
      CHECK(r.lo >= s.min);
      CHECK(r.hi <= s.max);
      CHECK(r.lo <= r.hi);
      CHECK(std::string(m.description).size() > 10);
    }
  }
}

TEST_CASE("the method table drives parsing and suggestions") {
  std::vector<std::string> names = calib_method_names();
  CHECK(names == std::vector<std::string>{"minmax", "percentile", "entropy", "mse"});
  for (const auto& n : names) CHECK(find_calib_method(n).name == n);
  try {
    find_calib_method("entropi");
    FAIL("expected a usage error");
  } catch (const lite::UsageError& e) {
    CHECK(std::string(e.what()).find("did you mean 'entropy'") != std::string::npos);
  }
  CHECK_FALSE(find_calib_method("minmax").needs_histogram);
  CHECK(find_calib_method("mse").needs_histogram);
}

TEST_CASE("statistics without a histogram get the min-max range from every method") {
  // A min-max run or a --calib-stats file records no histograms; the callers rely on this.
  ObservedStats s;
  s.min = -1.5;
  s.max = 7.25;
  for (const auto& m : calib_methods()) {
    CAPTURE(m.name);
    Range r = m.range(s);
    CHECK(r.lo == s.min);
    CHECK(r.hi == s.max);
  }
}

TEST_CASE("shrink windows run from the whole range towards zero") {
  Histogram h = Histogram::of(laplace(1000), 100);
  auto windows = shrink_windows(h, 10, 50);
  REQUIRE(!windows.empty());
  CHECK(windows.front().first == 0);
  CHECK(windows.front().last == 100);
  for (size_t i = 1; i < windows.size(); ++i) {
    CHECK(windows[i].last - windows[i].first <= windows[i - 1].last - windows[i - 1].first);
    CHECK(windows[i].last - windows[i].first >= 10);
  }
}

TEST_CASE("the calibration JSON round-trips and any method can be rerun from it") {
  CalibrationStats stats;
  stats.model_sha256 = "abc";
  stats.source = "calib.pt";
  stats.samples = 3;
  stats.values["features:x.1"] = observe(exponential(1000));
  stats.values[":input.1"] = observe(laplace(1000));
  auto doc = calibration_document(stats, find_calib_method("percentile"));
  CHECK(doc["format"] == "lite-calibration");
  CHECK(doc["method"] == "percentile");
  CHECK(doc["values"]["features:x.1"].contains("scale"));
  CalibrationStats back = parse_calibration_document(nlohmann::json::parse(doc.dump()), "calib.json");
  CHECK(back.samples == 3);
  CHECK(back.has_histograms());
  for (const auto& [key, s] : stats.values) {
    CAPTURE(key);
    for (const auto& m : calib_methods()) {
      Range a = m.range(s), b = m.range(back.values.at(key));
      CHECK(a.lo == doctest::Approx(b.lo));
      CHECK(a.hi == doctest::Approx(b.hi));
    }
  }
  CHECK_THROWS_AS(parse_calibration_document(nlohmann::json{{"format", "other"}}, "x.json"), lite::InputError);
  CHECK_THROWS_AS(parse_calibration_document(
                      nlohmann::json{{"format", "lite-calibration"}, {"values", nlohmann::json::object()}}, "x.json"),
                  lite::InputError);
}
