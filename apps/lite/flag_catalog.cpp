#include "flag_catalog.hpp"

#include <CLI/CLI.hpp>
#include <map>
#include <regex>

#include "help_format.hpp"
#include "lite/verbs/verbs.hpp"

namespace lite::cli {

namespace {

struct Extra {
  std::vector<std::string> values;
  bool path = false;
};

std::map<const CLI::Option*, Extra>& extras() {
  static std::map<const CLI::Option*, Extra> table;
  return table;
}

// A TEXT flag whose description names a file, a folder or a path completes file names.
bool names_a_file(const CLI::Option* o) {
  static const std::regex words(R"((\bfile\b|\bfiles\b|\bfolder\b|\bpath\b|\bFILE\b|\bDIR\b|\.pt\b|\.json\b|\bSVG\b))",
                                std::regex::icase);
  return o->get_type_name() == "TEXT" && std::regex_search(o->get_description(), words);
}

nlohmann::json describe(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const auto& s : o->get_snames()) names.push_back("-" + s);
  for (const auto& l : o->get_lnames()) names.push_back("--" + l);
  const Extra extra = extras().count(o) ? extras().at(o) : Extra{};
  const bool takes_value = !o->get_type_name().empty();  // a flag has no type name (CLI11 2.1 sizes flags 1 too)
  return {{"names", names},
          {"positional", o->get_positional() ? o->get_name(true) : ""},
          {"metavar", takes_value ? o->get_type_name() : ""},
          {"help", option_help_text(o)},
          {"group", o->get_group()},
          {"values", extra.values},
          {"takes_value", takes_value},
          {"repeats", o->get_expected_max() > 1},
          {"path", takes_value && (extra.path || names_a_file(o))}};
}

nlohmann::json describe(const CLI::App& verb) {
  nlohmann::json flags = nlohmann::json::array(), positionals = nlohmann::json::array();
  for (const CLI::Option* o : verb.get_options()) {
    if (o->get_group().empty() && !o->get_positional()) continue;  // hidden: an old spelling kept for a release
    if (o->get_positional())
      positionals.push_back(describe(o));
    else
      flags.push_back(describe(o));
  }
  const VerbDescriptor* descriptor = find_verb(verb.get_name());
  return {{"name", verb.get_name()}, {"summary", descriptor ? descriptor->summary : ""},
          {"description", verb.get_description()},
          {"positionals", positionals}, {"flags", flags}};
}

}  // namespace

CLI::Option* with_values(CLI::Option* option, std::vector<std::string> values) {
  extras()[option].values = std::move(values);
  return option;
}

CLI::Option* takes_path(CLI::Option* option) {
  extras()[option].path = true;
  return option;
}

nlohmann::json flag_catalog(const CLI::App& app) {
  nlohmann::json verbs = nlohmann::json::array();
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_options().empty() && sub->get_options().size() > 1) verbs.push_back(describe(*sub));
  return {{"verbs", verbs}};
}

}  // namespace lite::cli
