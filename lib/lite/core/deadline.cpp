// One watcher thread, started with the first guard, sleeps until the armed bound (or until a guard changes it)
// and ends the process when the bound passes with a guard still armed. The line is worded when the guard is
// made, in normal context, so the watcher only writes and exits.
#include "lite/core/deadline.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "lite/core/interrupt.hpp"

namespace lite {

namespace {

using Clock = std::chrono::steady_clock;

struct Watch {
  std::mutex mutex;
  std::condition_variable changed;
  bool armed = false;
  Clock::time_point until;
  std::string line;
  int exit_code = 2;
  std::function<std::string(const std::string&)> wording;
};

Watch& watch_state() {
  static Watch* w = new Watch();  // never destroyed: the detached watcher may outlive static destruction
  return *w;
}

void watcher() {
  Watch& w = watch_state();
  std::unique_lock<std::mutex> lock(w.mutex);
  for (;;) {
    if (!w.armed) {
      w.changed.wait(lock);
      continue;
    }
    if (w.changed.wait_until(lock, w.until) == std::cv_status::timeout && w.armed && Clock::now() >= w.until)
      end_process_now(w.line.c_str(), w.exit_code);
  }
}

}  // namespace

void set_deadline_wording(std::function<std::string(const std::string&)> wording) {
  Watch& w = watch_state();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.wording = std::move(wording);
}

StallDeadline::StallDeadline(double seconds, const std::string& problem, int exit_code) {
  if (!(seconds > 0)) return;
  Watch& w = watch_state();
  static std::once_flag started;
  std::call_once(started, [] { std::thread(watcher).detach(); });
  std::lock_guard<std::mutex> lock(w.mutex);
  w.line = (w.wording ? w.wording(problem) : "lite: error: " + problem) + "\n";
  w.exit_code = exit_code;
  w.until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  w.armed = armed_ = true;
  w.changed.notify_all();
}

StallDeadline::~StallDeadline() {
  if (!armed_) return;
  Watch& w = watch_state();
  std::lock_guard<std::mutex> lock(w.mutex);
  w.armed = false;
  w.changed.notify_all();
}

}  // namespace lite
