#pragma once
// Elapsed time, on the one clock lite times its own work with: the monotonic steady_clock (never the wall clock,
// which jumps when NTP steps it and differs between hosts).
#include <chrono>

namespace lite {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point begin, Clock::time_point end) {
  return std::chrono::duration<double>(end - begin).count();
}
inline double seconds_since(Clock::time_point begin) { return seconds_between(begin, Clock::now()); }

}  // namespace lite
