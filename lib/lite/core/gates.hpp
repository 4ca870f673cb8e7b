#pragma once
// How every verb's result says a check failed: the names of the gates that failed (for example "speed",
// "tolerance", "target_hit_ratio"). The CLI exits 1 when any failed; the result and the artifact are still
// written, and the report says which gate and by how much.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lite {

struct Gates {
  std::vector<std::string> failed;
  bool passed() const { return failed.empty(); }
  void fail(const std::string& gate) {
    for (const auto& g : failed)
      if (g == gate) return;
    failed.push_back(gate);
  }
};

inline void to_json(nlohmann::json& j, const Gates& g) { j = {{"passed", g.passed()}, {"failed", g.failed}}; }

}  // namespace lite
