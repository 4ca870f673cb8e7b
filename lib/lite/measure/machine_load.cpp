// The load check behind every reported speed (see machine_load.hpp for what is counted and why).
#include "lite/measure/machine_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "lite/core/error.hpp"

namespace lite::measure {

namespace {

constexpr const char* kTestVariable = "LITE_TEST_LOAD";

// procs_running of /proc/stat: every runnable thread on the machine, this one included; -1 when unreadable.
int procs_running() {
  std::ifstream in("/proc/stat");
  std::string key;
  long value = 0;
  while (in >> key) {
    if (key == "procs_running" && in >> value) return static_cast<int>(value);
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

// This process's runnable threads (state R), the calling thread included.
int own_runnable_threads() {
  int running = 0;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    // "tid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
    const auto close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++running;
  }
  return std::max(1, running);
}

int simulated_load(const char* text) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 0 || value > 1000000)
    throw InputError(kTestVariable, fmt::format("must be a whole number from 0 to 1000000, got '{}'", text),
                     "unset it (it simulates runnable threads of other processes for tests)");
  return static_cast<int>(value);
}

}  // namespace

std::string MachineLoad::describe() const {
  return fmt::format("{} intra-op thread{} + {} runnable thread{} of other processes {} {} core{}", intra_op_threads,
                     intra_op_threads == 1 ? "" : "s", other_runnable_threads, other_runnable_threads == 1 ? "" : "s",
                     oversubscribed() ? ">" : "<=", cores, cores == 1 ? "" : "s");
}

void to_json(nlohmann::json& j, const MachineLoad& l) {
  j = {{"cores", l.cores},
       {"intra_op_threads", l.intra_op_threads},
       {"other_runnable_threads", l.other_runnable_threads},
       {"samples", l.samples},
       {"source", l.source},
       {"oversubscribed", l.oversubscribed()}};
}

int other_runnable_threads(std::string* source) {
  if (const char* simulated = std::getenv(kTestVariable)) {
    if (source) *source = kTestVariable;
    return simulated_load(simulated);
  }
  std::array<int, 3> reads{};
  for (size_t i = 0; i < reads.size(); ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const int all = procs_running();
    if (all < 0) {
      if (source) source->clear();
      return 0;
    }
    reads[i] = std::max(0, all - own_runnable_threads());
  }
  std::sort(reads.begin(), reads.end());
  if (source) *source = "/proc/stat";
  return reads[1];
}

LoadWatch::LoadWatch(int intra_op_threads, int cores) {
  load_.intra_op_threads = intra_op_threads;
  load_.cores = cores > 0 ? cores : static_cast<int>(std::thread::hardware_concurrency());
  sample();
}

void LoadWatch::sample() {
  std::string source;
  const int others = other_runnable_threads(&source);
  load_.other_runnable_threads = std::max(load_.other_runnable_threads, others);
  if (!source.empty()) load_.source = source;
  ++load_.samples;
}

MachineLoad LoadWatch::result() {
  sample();
  return load_;
}

report::Finding oversubscription_finding(const MachineLoad& load, const std::string& what_was_timed,
                                         const std::string& consequence, bool allowed) {
  const int fitting = std::max(1, load.cores - load.other_runnable_threads);
  std::string advice = fitting < load.intra_op_threads
                           ? fmt::format("rerun on a quiet machine, or with {{threads}} {}", fitting)
                           : std::string("rerun on a quiet machine (stop the other load)");
  return {allowed ? "info" : "warning",
          fmt::format("{} ran on an oversubscribed machine: {} (read from {}); {}", what_was_timed, load.describe(),
                      load.source.empty() ? "nowhere" : load.source, consequence),
          "intra-op threads + runnable threads of other processes > cores",
          allowed ? "accepted with {allow_noisy}" : advice};
}

}  // namespace lite::measure
