#pragma once
// Progress reporting without printing from the library: long loops report to a Progress sink that the
// CLI provides (a terminal bar on a TTY, nothing in --json mode or when stderr is not a terminal).
#include <cstdint>
#include <string_view>

namespace lite {

class Progress {
 public:
  virtual ~Progress() = default;
  // Starts a phase of `total` steps (0 when the total is unknown).
  virtual void begin(std::string_view phase, uint64_t total) = 0;
  virtual void advance(uint64_t steps = 1) = 0;
  virtual void end() = 0;
  // One line saying what the command is about to measure and about how long it will take: printed above the bar
  // on a terminal, dropped everywhere else (--json, a pipe).
  virtual void announce(std::string_view) {}
};

// A sink that ignores everything.
class NullProgress final : public Progress {
 public:
  void begin(std::string_view, uint64_t) override {}
  void advance(uint64_t) override {}
  void end() override {}
};

// A shared NullProgress; the default for library callers.
Progress& no_progress();

// Scoped phase: begin on construction, end on destruction (also when an exception unwinds).
class ProgressPhase {
 public:
  ProgressPhase(Progress& p, std::string_view phase, uint64_t total) : p_(p) { p_.begin(phase, total); }
  ~ProgressPhase() { p_.end(); }
  void advance(uint64_t steps = 1) { p_.advance(steps); }
  ProgressPhase(const ProgressPhase&) = delete;
  ProgressPhase& operator=(const ProgressPhase&) = delete;

 private:
  Progress& p_;
};

}  // namespace lite
