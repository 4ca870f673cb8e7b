#include "lite/core/memory.hpp"

#include <fstream>
#include <string>

namespace lite {

namespace {
uint64_t status_field_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  std::string key = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::stoull(line.substr(key.size()));
  }
  return 0;
}
}  // namespace

uint64_t current_rss_bytes() { return status_field_kib("VmRSS") * 1024; }
uint64_t peak_rss_bytes() { return status_field_kib("VmHWM") * 1024; }

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace lite
