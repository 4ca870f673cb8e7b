// The shared name lookup of plug-in tables (see registry.hpp).
#include "lite/core/registry.hpp"

#include <cctype>

#include "lite/core/text.hpp"

namespace lite {

std::string normalize_name(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (c == '-' || c == '_' || c == ' ' || c == '\t') continue;
    out.push_back(char(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

int find_name_index(const std::vector<std::vector<std::string>>& names, std::string_view name) {
  const std::string wanted = normalize_name(name);
  if (wanted.empty()) return -1;
  for (size_t i = 0; i < names.size(); ++i)
    for (const auto& n : names[i])
      if (normalize_name(n) == wanted) return int(i);
  return -1;
}

void throw_unknown_name(const std::string& key, std::string_view kind, std::string_view name,
                        const std::vector<std::string>& canonical, const std::string& fix) {
  std::string problem = "unknown " + std::string(kind) + " '" + std::string(name) + "'";
  if (auto m = closest_match(name, canonical)) problem += "; did you mean '" + *m + "'?";
  std::string known = "known: " + join(canonical, ", ");
  throw OptionError(key, problem, fix.empty() ? known : known + "; " + fix);
}

}  // namespace lite
