// Min-max calibration: the range is exactly what the calibration data reached. Nothing is clipped, so
// one outlier in the calibration set widens the step for every other value.
#include "lite/quantize/calibration.hpp"

namespace lite::quantize {

Range minmax_range(const ObservedStats& s) { return {s.min, s.max}; }

}  // namespace lite::quantize
