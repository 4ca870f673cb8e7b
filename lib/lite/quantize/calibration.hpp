#pragma once
// Calibration: from observed activation statistics to the range [lo, hi] an int8 tensor covers, and
// from that range to a scale and zero point. Torch-free so every method is tested on hand-made data.
//
// An activation observer records, over all calibration batches, the minimum and maximum of a value and
// then a histogram of its values over [min(0, min), max(0, max)] (kHistogramBins bins). Each method
// turns that record into a range; one file per method (calib_<name>.cpp), all listed in the table
// calib_methods() that drives --calib-method parsing, help and the tests.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite::quantize {

inline constexpr int kHistogramBins = 2048;

// Counts of values in equal-width bins over [lo, hi]; lo <= 0 <= hi (the range always holds zero, so
// that zero is exactly representable, as PyTorch requires of activation ranges).
struct Histogram {
  double lo = 0, hi = 0;
  std::vector<double> counts;

  double bin_width() const { return counts.empty() ? 0 : (hi - lo) / double(counts.size()); }
  double total() const;
  // Builds a histogram of `values` over [min(0, min), max(0, max)] (for tests and small tools).
  static Histogram of(const std::vector<float>& values, int bins = kHistogramBins);
};

// What calibration observed for one activation value.
struct ObservedStats {
  double min = 0, max = 0;
  Histogram histogram;  // empty counts when only min/max were recorded
};

struct Range {
  double lo = 0, hi = 0;
};

// Affine uint8 parameters, computed exactly as PyTorch's observers do (float32 arithmetic):
// scale = (max(hi,0) - min(lo,0)) / 255 (at least float32 epsilon), zero_point = -round(lo / scale).
struct QParams {
  double scale = 1;
  int64_t zero_point = 0;
};
QParams affine_qparams(const Range& range, int64_t qmin = 0, int64_t qmax = 255);

// A calibration method: turns observed statistics into the range to quantize. Statistics without a
// histogram (from a min-max run, or a calibration file that has none) get the min-max range.
struct CalibMethodEntry {
  const char* name;
  const char* description;
  bool needs_histogram;  // min-max needs one pass over the data; the others two
  Range (*range)(const ObservedStats&);
};

// The table: min-max, percentile, entropy (KL), mse.
const std::vector<CalibMethodEntry>& calib_methods();
std::vector<std::string> calib_method_names();
// Throws UsageError naming the known methods (and the closest one) for an unknown name.
const CalibMethodEntry& find_calib_method(const std::string& name);

// One file each (calib_<name>.cpp).
Range minmax_range(const ObservedStats& s);
Range percentile_range(const ObservedStats& s);  // 0.01% / 99.99% quantiles
Range entropy_range(const ObservedStats& s);     // smallest KL(P||Q) over clipping thresholds
Range mse_range(const ObservedStats& s);         // smallest expected squared error over thresholds

inline constexpr double kPercentile = 99.99;

// Candidate clipping ranges shared by entropy and mse: the observed range shrunk towards zero by a
// factor t in (0, 1], both ends alike, expressed in whole histogram bins [first, last).
struct Window {
  int first = 0, last = 0;  // bins [first, last)
};
std::vector<Window> shrink_windows(const Histogram& h, int min_bins, int steps);
Range window_range(const Histogram& h, const Window& w);

// Everything calibration observed, keyed by the observed value ("features:input.5"); written to and
// read from the calibration JSON (--calib-stats) so a later run can skip calibration.
struct CalibrationStats {
  std::string model_sha256;
  std::string source;  // the calibration data file
  int64_t samples = 0;
  std::map<std::string, ObservedStats> values;
  bool has_histograms() const;
};

void to_json(nlohmann::json& j, const Histogram& h);
void from_json(const nlohmann::json& j, Histogram& h);
void to_json(nlohmann::json& j, const ObservedStats& s);
void from_json(const nlohmann::json& j, ObservedStats& s);
// The calibration JSON document; `method` and the resulting ranges are added for the reader's benefit.
nlohmann::json calibration_document(const CalibrationStats& stats, const CalibMethodEntry& method);
// Parses a calibration JSON document; throws InputError naming `file` when it is not one.
CalibrationStats parse_calibration_document(const nlohmann::json& j, const std::string& file);

}  // namespace lite::quantize
