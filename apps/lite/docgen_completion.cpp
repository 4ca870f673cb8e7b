// Shell completions from the flag catalog: subcommands, every flag of each, the values of an enumerated flag
// (modes, policies, criteria, ...), file names where a flag or an argument names a file. One function per shell;
// each script completes what `lite VERB --help` lists and nothing else.
#include <string>

#include "docgen.hpp"

namespace lite::cli::docgen {

namespace {

const char* kGenerated = "generated from lite's flag definitions by `lite --generate-docs`; do not edit";

// The first line of a flag's help, at most 70 characters: what a completion menu shows beside the name.
std::string brief(const nlohmann::json& item, const char* key = "help") {
  std::string text = item[key].get<std::string>();
  text = text.substr(0, text.find('\n'));
  if (text.size() > 70) text = text.substr(0, 67) + "...";
  return text;
}

std::string quoted(const std::string& text) {  // single quotes for bash and zsh ('\'' for a quote)
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string words(const nlohmann::json& list) {
  std::string out;
  for (const auto& w : list) out += (out.empty() ? "" : " ") + w.get<std::string>();
  return out;
}

bool has_path_positional(const nlohmann::json& verb) {
  for (const auto& p : verb["positionals"])
    if (p["path"].get<bool>()) return true;
  return false;
}

std::string bash_value_cases(const nlohmann::json& verb) {
  std::string out;
  for (const auto& f : verb["flags"]) {
    if (!f["takes_value"].get<bool>()) continue;
    std::string patterns;
    for (const auto& n : f["names"]) patterns += (patterns.empty() ? "" : "|") + quoted(verb["name"].get<std::string>() + " " + n.get<std::string>());
    std::string action = "return ;;";  // a number or a free-form value: nothing to offer
    if (!f["values"].empty())
      action = "COMPREPLY=($(compgen -W " + quoted(words(f["values"])) + " -- \"$cur\")); return ;;";
    else if (f["path"].get<bool>())
      action = "COMPREPLY=($(compgen -f -- \"$cur\")); return ;;";
    out += "    " + patterns + ") " + action + "\n";
  }
  return out;
}

std::string zsh_spec(const nlohmann::json& f, const std::string& name) {
  std::string desc = brief(f);
  std::string escaped;
  for (char c : desc) {
    if (c == '[' || c == ']' || c == ':' || c == '\\') escaped += '\\';
    escaped += c;
  }
  std::string spec = (f["repeats"].get<bool>() ? "*" : "") + name + "[" + escaped + "]";
  if (f["takes_value"].get<bool>()) {
    if (!f["values"].empty()) spec += ":value:(" + words(f["values"]) + ")";
    else if (f["path"].get<bool>()) spec += ":file:_files";
    else spec += ":" + f["metavar"].get<std::string>() + ": ";
  }
  return spec;
}

std::string fish_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_flag(const std::string& verb, const nlohmann::json& f) {
  std::string line = "complete -c lite -n " + fish_quoted("__fish_seen_subcommand_from " + verb);
  for (const auto& n : f["names"]) {
    const std::string name = n;
    line += name.rfind("--", 0) == 0 ? " -l " + name.substr(2) : " -s " + name.substr(1);
  }
  if (f["takes_value"].get<bool>()) {
    line += " -r";
    if (!f["values"].empty()) line += " -f -a " + fish_quoted(words(f["values"]));
    else if (f["path"].get<bool>()) line += " -F";
    else line += " -f";
  }
  return line + " -d " + fish_quoted(brief(f)) + "\n";
}

}  // namespace

std::string bash_completion(const nlohmann::json& catalog) {
  std::string verbs, value_cases, flag_cases;
  for (const auto& v : catalog["verbs"]) {
    const std::string name = v["name"];
    verbs += (verbs.empty() ? "" : " ") + name;
    value_cases += bash_value_cases(v);
    std::string flags;
    for (const auto& f : v["flags"]) flags += (flags.empty() ? "" : " ") + words(f["names"]);
    flag_cases += "    " + name + ") flags=" + quoted(flags + " --help") + " ;;\n";
  }
  return "# bash completion for lite, " + std::string(kGenerated) + ".\n"
         "_lite() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} flags=''\n"
         "  if (( COMP_CWORD == 1 )); then\n"
         "    COMPREPLY=($(compgen -W " + quoted(verbs + " --help --version") + " -- \"$cur\")); return\n"
         "  fi\n"
         "  case \"${COMP_WORDS[1]} $prev\" in\n" + value_cases +
         "  esac\n"
         "  case ${COMP_WORDS[1]} in\n" + flag_cases +
         "  esac\n"
         "  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
         "  else COMPREPLY=($(compgen -f -- \"$cur\")); fi\n"
         "}\n"
         "complete -o filenames -F _lite lite\n";
}

std::string zsh_completion(const nlohmann::json& catalog) {
  std::string verbs, cases;
  for (const auto& v : catalog["verbs"]) {
    const std::string name = v["name"];
    verbs += "    " + quoted(name + ":" + brief(v, "summary")) + "\n";
    std::string specs;
    for (const auto& f : v["flags"])
      for (const auto& n : f["names"]) specs += " \\\n        " + quoted(zsh_spec(f, n));
    if (has_path_positional(v)) specs += " \\\n        '*:file:_files'";
    cases += "    " + name + ") _arguments -s" + specs + " ;;\n";
  }
  return "#compdef lite\n# zsh completion for lite, " + std::string(kGenerated) + ".\n"
         "_lite() {\n"
         "  local -a verbs\n"
         "  verbs=(\n" + verbs + "  )\n"
         "  if (( CURRENT == 2 )); then\n"
         "    _describe -t commands 'lite subcommand' verbs\n"
         "    return\n"
         "  fi\n"
         "  local verb=$words[2]\n"
         "  shift words\n"
         "  (( CURRENT-- ))\n"
         "  case $verb in\n" + cases +
         "  esac\n"
         "}\n"
         "_lite \"$@\"\n";
}

std::string fish_completion(const nlohmann::json& catalog) {
  std::string out = "# fish completion for lite, " + std::string(kGenerated) + ".\ncomplete -c lite -f\n";
  for (const auto& v : catalog["verbs"])
    out += "complete -c lite -n __fish_use_subcommand -a " + v["name"].get<std::string>() + " -d " +
           fish_quoted(brief(v, "summary")) + "\n";
  for (const auto& v : catalog["verbs"]) {
    const std::string name = v["name"];
    for (const auto& f : v["flags"]) out += fish_flag(name, f);
    if (has_path_positional(v))
      out += "complete -c lite -n " + fish_quoted("__fish_seen_subcommand_from " + name) + " -F\n";
  }
  return out;
}

}  // namespace lite::cli::docgen
