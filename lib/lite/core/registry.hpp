#pragma once
// One lookup for every named plug-in table (eviction policies, trace formats, quantization modes,
// calibration methods, pruning criteria, recipe steps): names compare after one normalisation (lower
// case, '-', '_' and spaces dropped, so "S3-FIFO" = "s3fifo" and "weight_int8" = "weight-int8"), an
// entry may have aliases, and an unknown name is an OptionError naming the option key, the closest known
// name and the list. Tables stay plain vectors of structs; this only needs each entry's names.
#include <string>
#include <string_view>
#include <vector>

#include "lite/core/options.hpp"

namespace lite {

std::string normalize_name(std::string_view name);

// Index of the entry whose canonical name or alias matches `name` under normalize_name, or -1.
// names[i] lists entry i's names, canonical first.
int find_name_index(const std::vector<std::vector<std::string>>& names, std::string_view name);

// Throws OptionError(key, "unknown KIND 'NAME'; did you mean 'X'?", "known: a, b, c" + fix).
[[noreturn]] void throw_unknown_name(const std::string& key, std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& canonical, const std::string& fix = {});

// `names_of(entry)` returns std::vector<std::string>, canonical name first.
template <class Entry, class NamesOf>
const Entry& find_named(const std::vector<Entry>& table, std::string_view name, const std::string& key,
                        std::string_view kind, NamesOf names_of, const std::string& fix = {}) {
  std::vector<std::vector<std::string>> names;
  std::vector<std::string> canonical;
  names.reserve(table.size());
  for (const auto& entry : table) {
    names.push_back(names_of(entry));
    canonical.push_back(names.back().front());
  }
  int index = find_name_index(names, name);
  if (index < 0) throw_unknown_name(key, kind, name, canonical, fix);
  return table[size_t(index)];
}

}  // namespace lite
