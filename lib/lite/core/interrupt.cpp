// The signal handler records which signal arrived (sig_atomic_t: the only thing a handler may safely write) and
// wakes the watchdog through a pipe (write(2) is async-signal-safe); everything else happens in the polling
// code, the CLI, and the watchdog thread.
#include "lite/core/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

#include "lite/core/error.hpp"

namespace lite {

namespace {
volatile std::sig_atomic_t g_signal = 0;  // 0 = none, else the first SIGINT/SIGTERM received
int g_wake_pipe[2] = {-1, -1};            // the handler writes one byte; the watchdog reads it
std::atomic<void (*)()> g_forced_exit_hook{nullptr};
std::atomic<double> g_grace_s{1.0};

// Paths of temporary files in flight, fixed storage so the watchdog reads them without allocating.
constexpr int kTemporarySlots = 32;
constexpr size_t kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kTemporarySlots> g_temporary_paths{};
enum SlotState : int { slot_free, slot_claimed, slot_ready };
std::array<std::atomic<int>, kTemporarySlots> g_temporary_state{};

extern "C" void on_interrupt(int signal) {
  if (g_signal) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_signal = signal;
  if (g_wake_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(g_wake_pipe[1], &byte, 1);
  }
}

void write_stderr(const char* text) { [[maybe_unused]] ssize_t n = ::write(2, text, std::strlen(text)); }

}  // namespace

void end_process_now(const char* line, int exit_code) {
  for (int i = 0; i < kTemporarySlots; ++i)
    if (g_temporary_state[size_t(i)].load(std::memory_order_acquire) == slot_ready)
      ::unlink(g_temporary_paths[size_t(i)].data());
  if (auto hook = g_forced_exit_hook.load()) hook();
  write_stderr(line);
  ::_exit(exit_code);
}

namespace {

void watch() {
  char byte = 0;
  while (::read(g_wake_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(g_grace_s.load()));
  // The normal path would have exited by now.
  end_process_now("\nlite: interrupted while blocked; stopped without waiting; nothing was written\n", interrupt_exit_code());
}
}  // namespace

void install_interrupt_handler() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void start_interrupt_watchdog(double grace_s) {
  g_grace_s = grace_s;
  static std::once_flag once;
  std::call_once(once, [] {
    if (::pipe2(g_wake_pipe, O_CLOEXEC) != 0) return;  // no watchdog: the polling path still works
    std::thread(watch).detach();
  });
}

void on_forced_exit(void (*hook)()) { g_forced_exit_hook = hook; }

void arm_hard_deadline(double seconds, std::string line, int exit_code) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::thread([seconds, exit_code, text = std::move(line) + "\n"] {
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      end_process_now(text.c_str(), exit_code);
    }).detach();
  });
}

bool interrupt_requested() { return g_signal != 0; }

void throw_if_interrupted() {
  if (g_signal) throw Interrupted();
}

int interrupt_exit_code() { return g_signal == SIGTERM ? 128 + SIGTERM : int(exit_interrupted); }

void request_interrupt_for_testing(bool value) { g_signal = value ? SIGINT : 0; }

TemporaryFileGuard::TemporaryFileGuard(const std::filesystem::path& path) {
  const std::string& text = path.native();
  if (text.size() >= kPathBytes) return;
  for (int i = 0; i < kTemporarySlots; ++i) {
    int expected = slot_free;
    // Claim the slot, fill it, then publish it: the watchdog reads only whole paths.
    if (!g_temporary_state[size_t(i)].compare_exchange_strong(expected, slot_claimed)) continue;
    std::memcpy(g_temporary_paths[size_t(i)].data(), text.c_str(), text.size() + 1);
    g_temporary_state[size_t(i)].store(slot_ready, std::memory_order_release);
    slot_ = i;
    return;
  }
}

TemporaryFileGuard::~TemporaryFileGuard() {
  if (slot_ >= 0) g_temporary_state[size_t(slot_)].store(slot_free, std::memory_order_release);
}

}  // namespace lite
