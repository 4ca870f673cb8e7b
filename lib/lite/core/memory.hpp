#pragma once
// Resident memory of this process, for "peak RSS during the run" figures.
#include <cstdint>

namespace lite {

uint64_t current_rss_bytes();
// High-water mark of resident memory (VmHWM) since process start or the last reset.
uint64_t peak_rss_bytes();
// Resets the high-water mark to the current RSS (Linux >= 4.0, /proc/self/clear_refs); returns false
// when the kernel does not allow it, in which case peak_rss_bytes() stays the process-lifetime peak.
bool reset_peak_rss();

}  // namespace lite
