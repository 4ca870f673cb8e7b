#pragma once
// Reading back the JSON the cache wire formats write (record_store.cpp's --results-dir records, prefix_wire.cpp's
// rows between MPI ranks): an optional figure is written as absent or null.
#include <optional>

#include <nlohmann/json.hpp>

namespace lite::cache {

// j[key] as a double; nullopt when the key is absent or null.
inline std::optional<double> optional_double(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

}  // namespace lite::cache
