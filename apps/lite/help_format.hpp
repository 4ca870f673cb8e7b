#pragma once
// How `lite --help` and `lite VERB --help` are laid out. CLI11 2.1 prints every description on one line however
// long, so this formatter wraps descriptions, the verb's paragraph and the subcommand list at the terminal's width
// (help_width), with a hanging indent for list items ("  static: ..."). Each option's default is the value its
// options struct holds, captured by CLI11 when the flag is bound (always_capture_default) and shown at the end of the
// description's first line as "(default VALUE)", so the help cannot drift from the code. A default that is not a plain
// value ("beside the model", "libtorch's default" for 0) is worded in the description instead, and default_in_words()
// keeps the bare value out of the help.
#include <cstddef>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace lite::cli {

// Columns the help is wrapped to: $COLUMNS when it is a number, else the width of the terminal on stdout, else
// 100 (a pipe, a file); kept within [60, 120], since prose wider than that is hard to read.
std::size_t help_width();

// Gives `app` the wrapping formatter and makes every option added to it (or to a subcommand added after this call)
// capture its bound variable's value as its shown default. Call before adding subcommands: they copy both.
void configure_help(CLI::App& app, std::size_t width = help_width());

// An option's description as --help prints it: with what CLI11 would print beside the name added at the end of its
// first line (before a closing ':' that opens a list): "(default VALUE)", "(not with --duration)", "(needs --x)".
// The man pages and completions (flag_catalog.hpp) print the same text.
std::string option_help_text(const CLI::Option* option);

// For an option whose description already words its default (the value alone would mislead: 0 for "all cores",
// -1 for "from $RANK"): the captured value is not shown. Returns `option`.
CLI::Option* default_in_words(CLI::Option* option);

// `text` wrapped to `width` columns: each line of it wrapped on its own, continuation lines indented like their line,
// two more when the line is itself indented (a list item). A word longer than the width stays whole.
std::vector<std::string> wrap_text(const std::string& text, std::size_t width);

// The shown form of a captured default: CLI11's "[1,64]" for a list becomes "1,64" (the way it is typed); "" (no
// default shown) for an empty string or list.
std::string shown_default(const std::string& captured);

}  // namespace lite::cli
