#pragma once
// The flags of every verb as data, read off the same CLI11 definitions that `lite VERB --help` prints: what the man
// pages and the shell completions are generated from (docgen_*.cpp), so --help, man page and completion cannot
// drift. `lite --flag-catalog` (and lite-torch's) prints the verbs its executable runs as JSON; `lite
// --generate-docs DIR` merges both and writes the files the build installs.
//
// Two facts --help cannot show are recorded when a flag is bound: the values an enumerated flag takes
// (with_values: modes, policies, criteria, ...), and that a flag names a file (takes_path; also inferred from a
// TEXT flag whose description names a file, a folder or a path).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace lite::cli {

CLI::Option* with_values(CLI::Option* option, std::vector<std::string> values);
// The names of a table's entries, for with_values: names_of(quantize::modes(), [](auto& m) { return m.name; }).
template <class Table, class Name>
std::vector<std::string> names_of(const Table& table, Name name) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.emplace_back(name(entry));
  return out;
}
CLI::Option* takes_path(CLI::Option* option);

// {"verbs": [{"name", "summary", "description", "usage", "positionals": [FLAG], "flags": [FLAG]}]}, FLAG being
// {"names": ["-o", "--output"], "metavar": "TEXT", "help": <as --help words it>, "group", "values": [...],
// "takes_value": bool, "repeats": bool, "path": bool}. `app` is the top-level app with every local verb set up.
nlohmann::json flag_catalog(const CLI::App& app);

}  // namespace lite::cli
