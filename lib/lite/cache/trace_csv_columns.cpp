// --csv-columns: "time=2,key=5,size=4,cost=6[,delimiter=tab]" -> CsvColumns (1-based columns, 0 = absent).
// Kept apart from the csv reader: it is a flag parser (UsageError naming the flag), fuzzed on its own.
#include <fmt/format.h>

#include <charconv>

#include "lite/cache/cache_sim.hpp"
#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

CsvColumns parse_csv_columns(const std::string& spec) {
  CsvColumns c;
  c.explicit_columns = true;
  const std::vector<std::string> known = {"key", "time", "size", "cost", "delimiter"};
  for (const std::string& raw : split(spec, ',')) {
    std::string item = trim(raw);
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string::npos)
      throw OptionError("csv_columns", fmt::format("'{}' is not NAME=COLUMN", item), "write e.g. key=5,size=4,time=2,cost=6");
    std::string name = to_lower(trim(item.substr(0, eq)));
    std::string value = trim(item.substr(eq + 1));
    if (name == "obj-id" || name == "obj_id" || name == "id" || name == "obj-id-col") name = "key";
    if (name == "delimiter" || name == "sep") {
      if (value == "tab" || value == "\\t") c.delimiter = '\t';
      else if (value == "comma" || value.empty()) c.delimiter = ',';
      else if (value == "space") c.delimiter = ' ';
      else if (value.size() == 1) c.delimiter = value[0];
      else throw OptionError("csv_columns", fmt::format("delimiter '{}' is not one character", value),
                             "give one character, or tab, comma or space");
      continue;
    }
    int* target = name == "key" ? &c.key : name == "time" ? &c.time : name == "size" ? &c.size
                                          : name == "cost" ? &c.cost : nullptr;
    if (!target) throw_unknown_name("csv_columns", "column", name, known);
    int col = 0;
    auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), col);
    if (ec != std::errc() || p != value.data() + value.size() || col < 1)
      throw OptionError("csv_columns", fmt::format("{}={} is not a column number", name, value),
                        fmt::format("write {}=N, where 1 is the first column", name));
    *target = col;
  }
  if (c.key == 0) throw OptionError("csv_columns", "no key column given", "say which column holds the key, e.g. key=1");
  return c;
}

}  // namespace lite::cache
