#include "terminal_progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "flag_wording.hpp"

namespace lite::cli {

void TerminalProgress::begin(std::string_view phase, uint64_t total) {
  phase_ = phase;
  total_ = total;
  done_ = 0;
  draw(true);
}

void TerminalProgress::advance(uint64_t steps) {
  done_ += steps;
  draw(false);
}

void TerminalProgress::end() {
  phase_.clear();
  clear();
}

void TerminalProgress::announce(std::string_view text) {
  const std::string line = word_options(std::string(text));  // the library names options by key: {budget_s}
  clear();
  std::fprintf(stderr, "%s\n", line.c_str());
  if (!phase_.empty()) draw(true);
}

void TerminalProgress::show(const std::string& line, bool force) {
  auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void TerminalProgress::clear() {
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void TerminalProgress::draw(bool force) {
  const std::string done = std::to_string(done_), total = std::to_string(total_);
  if (style_ == Style::count) {
    show(done_ == 0 ? phase_ : phase_ + " " + done + (total_ ? "/" + total : ""), force);
  } else if (total_ > 0) {
    const int width = 30;
    const double frac = std::min(1.0, double(done_) / double(total_));
    const int filled = static_cast<int>(frac * width);
    char percent[8];
    std::snprintf(percent, sizeof percent, "%3.0f%%", frac * 100);
    show(phase_ + " [" + std::string(filled, '#') + std::string(width - filled, '.') + "] " + percent + " (" + done +
             "/" + total + ")",
         force);
  } else {
    show(phase_ + " ... " + done, force);
  }
}

bool progress_wanted(const OutputOptions& o) { return !o.quiet && resolve_format(o) == report::Format::text; }

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) != 0; }

std::unique_ptr<Progress> make_progress(const OutputOptions& o) {
  if (stderr_is_terminal() && progress_wanted(o)) return std::make_unique<TerminalProgress>();
  return std::make_unique<NullProgress>();
}

}  // namespace lite::cli
