// man(7) pages from the flag catalog: lite(1) lists the subcommands, lite-<verb>(1) holds a verb's description and
// every flag as `lite VERB --help` words it, grouped as there, with the exit codes every verb shares.
#include <string>

#include "docgen.hpp"
#include "lite/core/version.hpp"

namespace lite::cli::docgen {

namespace {

// Text as roff: backslashes and hyphens escaped, a line never starting with a control character.
std::string roff(const std::string& text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
    line_start = c == '\n';
  }
  return out;
}

std::string header(const std::string& name, const std::string& summary) {
  std::string upper;
  for (char c : name) upper += char(std::toupper(static_cast<unsigned char>(c)));
  return ".TH " + upper + " 1 \"\" \"lite " + lite::version() + "\" \"lite manual\"\n.SH NAME\n" + roff(name) +
         " \\- " + roff(summary) + "\n";
}

const char* kExitStatus =
    ".SH EXIT STATUS\n"
    ".TP\n0\nsuccess\n"
    ".TP\n1\na gate or check failed (results and artifacts are still written)\n"
    ".TP\n2\nusage error or bad input (nothing is written)\n"
    ".TP\n3\ninternal error in lite or libtorch\n"
    ".TP\n130\ninterrupted (SIGINT); nothing is written\n"
    ".TP\n143\nterminated (SIGTERM); nothing is written\n";

std::string flag_item(const nlohmann::json& f) {
  std::string names;
  for (const auto& n : f["names"]) names += (names.empty() ? "" : ", ") + std::string("\\fB") + roff(n) + "\\fR";
  if (f["takes_value"].get<bool>()) names += " \\fI" + roff(f["metavar"].get<std::string>()) + "\\fR";
  if (f["repeats"].get<bool>()) names += " ...";
  std::string help = roff(f["help"].get<std::string>());
  if (!f["values"].empty()) {
    std::string values;
    for (const auto& v : f["values"]) values += (values.empty() ? "" : ", ") + roff(v.get<std::string>());
    help += "\n.br\nValues: " + values;
  }
  return ".TP\n" + names + "\n" + help + "\n";
}

}  // namespace

std::string man_page(const nlohmann::json& verb) {
  const std::string name = verb["name"];
  std::string page = header("lite-" + name, verb["summary"]);
  std::string positionals;
  for (const auto& p : verb["positionals"]) positionals += " \\fI" + roff(p["positional"].get<std::string>()) + "\\fR";
  page += ".SH SYNOPSIS\n\\fBlite " + roff(name) + "\\fR [\\fIOPTIONS\\fR]" + positionals + "\n";
  page += ".SH DESCRIPTION\n" + roff(verb["description"].get<std::string>()) + "\n";
  if (!verb["positionals"].empty()) {
    page += ".SH ARGUMENTS\n";
    for (const auto& p : verb["positionals"])
      page += ".TP\n\\fI" + roff(p["positional"].get<std::string>()) + "\\fR\n" + roff(p["help"].get<std::string>()) +
              "\n";
  }
  page += ".SH OPTIONS\n";
  std::string group;
  for (const auto& f : verb["flags"]) {
    if (f["group"] != group && f["group"] != "Options") page += ".SS " + roff(f["group"].get<std::string>()) + "\n";
    group = f["group"];
    page += flag_item(f);
  }
  page += kExitStatus;
  page += ".SH SEE ALSO\n\\fBlite\\fR(1); docs/" + roff(name) + ".md in lite's source for the reference with "
          "examples\n";
  return page;
}

std::string man_page_of_lite(const nlohmann::json& catalog) {
  std::string page = header("lite", "make a model lighter and size the cache in front of it");
  page += ".SH SYNOPSIS\n\\fBlite\\fR \\fISUBCOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n\\fBlite\\fR \\-\\-help | "
          "\\-\\-version\n";
  page += ".SH DESCRIPTION\nlite prunes, quantizes and distills TorchScript models and proves what it bought "
          "(size, latency, accuracy before and after), and replays request traces through cache policies and sizes "
          "to size the cache in front of a model. Every artifact is a TorchScript file stock PyTorch loads.\n";
  page += ".SH SUBCOMMANDS\n";
  std::string see_also;
  for (const auto& v : catalog["verbs"]) {
    const std::string name = v["name"];
    page += ".TP\n\\fBlite " + roff(name) + "\\fR\n" + roff(v["summary"].get<std::string>()) + "; see \\fBlite\\-" +
            roff(name) + "\\fR(1)\n";
    see_also += (see_also.empty() ? "" : ", ") + std::string("\\fBlite\\-") + roff(name) + "\\fR(1)";
  }
  page += kExitStatus;
  page += ".SH SEE ALSO\n" + see_also + "\n";
  return page;
}

}  // namespace lite::cli::docgen
