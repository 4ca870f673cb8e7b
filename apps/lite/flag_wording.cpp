#include "flag_wording.hpp"

#include <map>

#include "lite/core/options.hpp"

namespace lite::cli {

namespace {
std::map<std::string, std::string>& flag_names() {
  static std::map<std::string, std::string> names;
  return names;
}

std::map<std::string, std::vector<std::string>>& old_flags() {
  static std::map<std::string, std::vector<std::string>> names;
  return names;
}
}  // namespace

void name_flag(const std::string& key, const std::string& flag) { flag_names()[key] = flag; }

void note_renamed_flag(const std::string& key, const std::string& old_flag) { old_flags()[key].push_back(old_flag); }

const std::vector<std::string>& renamed_flags(const std::string& key) { return old_flags()[key]; }

std::string flag_for_key(const std::string& key) {
  if (auto it = flag_names().find(key); it != flag_names().end()) return it->second;
  if (key.empty() || key.find_first_of(".[") != std::string::npos) return key;
  std::string flag = "--" + key;
  for (char& c : flag)
    if (c == '_') c = '-';
  return flag;
}

std::string word_options(const std::string& text) { return render_option_refs(text, flag_for_key); }

}  // namespace lite::cli
