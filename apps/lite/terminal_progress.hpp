#pragma once
// Progress on a terminal: a line on stderr redrawn in place, shown only when stderr is a terminal and the output
// is the text table (quiet with --json/--csv/--markdown, --quiet, or off a TTY).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "output.hpp"
#include "lite/core/progress.hpp"

namespace lite::cli {

// The progress line on a terminal's stderr, redrawn in place (at most every 100 ms unless forced). Style::bar
// (every verb): "PHASE [#####.....]  50% (5/10)", or "PHASE ... 5" with no total. Style::count (distill, whose
// own training line says the rest): "PHASE", then "PHASE 5/10". A verb with more to say shows its own lines.
class TerminalProgress : public Progress {
 public:
  enum class Style { bar, count };
  explicit TerminalProgress(Style style = Style::bar) : style_(style) {}
  void begin(std::string_view phase, uint64_t total) override;
  void advance(uint64_t steps = 1) override;
  void end() override;  // clears the line
  void announce(std::string_view line) override;  // its own line, above the bar
  void show(const std::string& line, bool force);
  void clear();

 private:
  void draw(bool force);

  Style style_;
  std::string phase_;
  uint64_t total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point last_draw_;
};

// Whether the output wants a progress display at all: the text table and no --quiet.
bool progress_wanted(const OutputOptions& options);
bool stderr_is_terminal();

// A progress bar on stderr when stderr is a terminal and the output is the text table; otherwise a
// sink that prints nothing.
std::unique_ptr<Progress> make_progress(const OutputOptions& options);

}  // namespace lite::cli
