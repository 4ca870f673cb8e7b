#include "help_format.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace lite::cli {

namespace {

constexpr std::size_t kMinWidth = 40, kMaxWidth = 120, kNotTerminalWidth = 100;

std::size_t clamped(std::size_t width) { return std::clamp(width, kMinWidth, kMaxWidth); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  lines.push_back(text.substr(start));
  return lines;
}

// One line of text wrapped: its own indent on the first piece, `hang` on the rest.
void wrap_line(const std::string& line, std::size_t width, std::vector<std::string>& out) {
  const std::size_t indent = line.find_first_not_of(' ');
  if (indent == std::string::npos) {
    out.emplace_back();
    return;
  }
  const std::string hang(indent + (indent > 0 ? 2 : 0), ' ');
  std::string current = line.substr(0, indent);
  bool empty = true;  // no word on `current` yet
  std::size_t at = indent;
  while (at < line.size()) {
    const std::size_t word_end = std::min(line.find(' ', at), line.size());
    const std::string word = line.substr(at, word_end - at);
    at = line.find_first_not_of(' ', word_end);
    if (at == std::string::npos) at = line.size();
    if (word.empty()) continue;
    if (!empty && current.size() + 1 + word.size() > width) {
      out.push_back(current);
      current = hang;
      empty = true;
    }
    current += (empty ? "" : " ") + word;
    empty = false;
  }
  out.push_back(current);
}

std::string spaces(std::size_t n) { return std::string(n, ' '); }

// CLI11's Formatter with descriptions wrapped to `width_` and the captured default shown after the description.
class WrappingFormatter : public CLI::Formatter {
 public:
  explicit WrappingFormatter(std::size_t width) : width_(width) {
    column_width(std::min<std::size_t>(30, width * 3 / 10));  // the widest the name column gets
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    column_ = option_column(app);
    std::string text = CLI::Formatter::make_help(app, std::move(name), mode);
    // CLI11 puts two blank lines between option groups; one is enough.
    for (std::size_t at; (at = text.find("\n\n\n")) != std::string::npos;) text.erase(at, 1);
    return text;
  }

  std::string make_description(const CLI::App* app) const override { return paragraph(app->get_description()); }

  std::string make_footer(const CLI::App* app) const override { return paragraph(app->get_footer()); }

  // Subcommand names are short: their column is as wide as the longest needs, leaving the rest to the summary.
  std::string make_subcommand(const CLI::App* sub) const override {
    std::size_t longest = 0;
    for (const CLI::App* sibling : sub->get_parent()->get_subcommands({}))
      longest = std::max(longest, sibling->get_display_name(true).size());
    return two_columns("  " + sub->get_display_name(true), sub->get_description(),
                       std::min(get_column_width(), longest + 4));
  }

  std::string make_option(const CLI::Option* opt, bool is_positional) const override {
    return two_columns("  " + make_option_name(opt, is_positional) + make_option_opts(opt), make_option_desc(opt));
  }

  // "--no-calib-json{false}" is bound with CLI11's default-value syntax; the user types "--no-calib-json".
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    for (std::size_t open; (open = name.find('{')) != std::string::npos;) {
      const std::size_t close = name.find('}', open);
      name.erase(open, close == std::string::npos ? std::string::npos : close - open + 1);
    }
    return name;
  }

  // CLI11's " TYPE ..." without "=DEFAULT", "Excludes: ..." and the like: they go with the description
  // (make_option_desc), which has the room.
  std::string make_option_opts(const CLI::Option* opt) const override {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    std::string out;
    if (opt->get_type_size() != 0) {
      if (!opt->get_type_name().empty()) out += " " + get_label(opt->get_type_name());
      if (opt->get_expected_max() == CLI::detail::expected_max_vector_size)
        out += " ...";
      else if (opt->get_expected_min() > 1)
        out += " x " + std::to_string(opt->get_expected());
      if (opt->get_required()) out += " " + get_label("REQUIRED");
    }
    return out;
  }

  std::string make_option_desc(const CLI::Option* opt) const override { return option_help_text(opt); }

 private:
  std::string paragraph(const std::string& text) const {
    if (text.empty()) return {};
    std::string out;
    for (const auto& line : wrap_text(text, width_)) out += line + "\n";
    return out;
  }

  // `name` in the left column, `desc` wrapped in the right one; a name too wide for its column gets a line of its own.
  std::string two_columns(const std::string& name, const std::string& desc) const {
    return two_columns(name, desc, column_);
  }

  // The descriptions' column: just right of the longest option name that fits the widest column (a longer one
  // gets a line of its own), so that the descriptions get what is left.
  std::size_t option_column(const CLI::App* app) const {
    const std::size_t widest = get_column_width();
    std::size_t longest = 0;
    for (const CLI::Option* opt : app->get_options()) {
      const std::size_t name = 2 + make_option_name(opt, opt->get_positional()).size() + make_option_opts(opt).size();
      if (name + 2 <= widest) longest = std::max(longest, name);
    }
    return longest > 0 ? longest + 2 : widest;
  }
  std::string two_columns(const std::string& name, const std::string& desc, std::size_t column) const {
    std::string out = name;
    const auto lines = desc.empty() ? std::vector<std::string>{} : wrap_text(desc, width_ - column);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i == 0 && name.size() < column)
        out += spaces(column - name.size());
      else
        out += "\n" + spaces(column);
      out += lines[i];
    }
    return out + "\n";
  }

  std::size_t width_;
  mutable std::size_t column_ = 0;  // of the help being made (make_help)
};

}  // namespace

std::size_t help_width() {
  if (const char* columns = std::getenv("COLUMNS"); columns && *columns) {
    char* end = nullptr;
    const long n = std::strtol(columns, &end, 10);
    if (*end == '\0' && n > 0) return clamped(static_cast<std::size_t>(n));
  }
  winsize size{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return clamped(size.ws_col);
  return kNotTerminalWidth;
}

void configure_help(CLI::App& app, std::size_t width) {
  app.formatter(std::make_shared<WrappingFormatter>(clamped(width)));
  app.option_defaults()->always_capture_default();
}

std::string option_help_text(const CLI::Option* opt) {
  std::string desc = opt->get_description(), notes;
  const std::string value = opt->get_type_size() != 0 ? shown_default(opt->get_default_str()) : "";
  if (!value.empty()) notes += " (default " + value + ")";
  for (const CLI::Option* other : opt->get_excludes()) notes += " (not with " + other->get_name() + ")";
  for (const CLI::Option* other : opt->get_needs()) notes += " (needs " + other->get_name() + ")";
  if (!opt->get_envname().empty()) notes += " (from $" + opt->get_envname() + ")";
  std::size_t at = std::min(desc.find('\n'), desc.size());
  if (at > 0 && (desc[at - 1] == ':' || desc[at - 1] == '.')) --at;
  return desc.insert(at, notes);
}

CLI::Option* default_in_words(CLI::Option* option) { return option->default_str(""); }

std::vector<std::string> wrap_text(const std::string& text, std::size_t width) {
  std::vector<std::string> out;
  for (const auto& line : split_lines(text)) wrap_line(line, width, out);
  return out;
}

std::string shown_default(const std::string& captured) {
  if (captured.size() >= 2 && captured.front() == '[' && captured.back() == ']')
    return captured.substr(1, captured.size() - 2);
  return captured;
}

}  // namespace lite::cli
