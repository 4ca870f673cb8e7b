// Interrupt handling: SIGINT and SIGTERM are recorded, not fatal, and map to exit codes 130 and 143; the
// watchdog ends a command that is blocked where nothing polls.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "../scratch_dir.hpp"

#include "lite/core/deadline.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

TEST_CASE("SIGINT and SIGTERM set the interrupt flag and the exit code tells them apart (130, 143)") {
  lite::install_interrupt_handler();
  lite::request_interrupt_for_testing(false);
  CHECK(!lite::interrupt_requested());
  CHECK_NOTHROW(lite::throw_if_interrupted());

  std::raise(SIGTERM);  // the handler records it; the process goes on
  CHECK(lite::interrupt_requested());
  CHECK_THROWS_AS(lite::throw_if_interrupted(), lite::Interrupted);
  CHECK(lite::interrupt_exit_code() == 143);
  lite::request_interrupt_for_testing(false);

  std::raise(SIGINT);
  CHECK(lite::interrupt_requested());
  CHECK(lite::interrupt_exit_code() == 130);
  CHECK(lite::interrupt_exit_code() == lite::exit_interrupted);
  lite::request_interrupt_for_testing(false);

  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

// The watchdog: a command blocked where nothing polls (here: opening a FIFO no one writes) still ends within the
// grace period of SIGTERM, with 143, and the temporary file of its write in flight is removed.
TEST_CASE("a signal ends a command blocked in a system call within the grace period and removes temporaries") {
  lite::test::ScratchDir dir;
  const auto fifo = dir.path / "no-writer";
  const auto temporary = dir.file(".out.tmp-1", "half written");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    lite::install_interrupt_handler();
    lite::start_interrupt_watchdog(0.5);
    lite::TemporaryFileGuard in_flight(temporary);
    ::open(fifo.c_str(), O_RDONLY);  // blocks: SA_RESTART resumes it after the handler
    ::_exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto sent = std::chrono::steady_clock::now();
  ::kill(child, SIGTERM);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 143);
  CHECK(waited < 2.0);
  CHECK_FALSE(std::filesystem::exists(temporary));
}

// Runs `body` in a child process; returns its exit status (waitpid's) and how long it ran.
template <class Body>
std::pair<int, double> in_child(Body body) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return {status, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

TEST_CASE("a stall deadline ends work still running past its bound, worded by the CLI, temporaries removed") {
  lite::test::ScratchDir dir;
  const auto temporary = dir.file(".out.tmp-2", "half written");
  const auto [status, ran_s] = in_child([&] {
    lite::set_deadline_wording([](const std::string& problem) { return "lite test: error: " + problem; });
    lite::TemporaryFileGuard in_flight(temporary);
    const lite::StallDeadline stall(0.2, "{budget_s}: still running", 2);
    std::this_thread::sleep_for(std::chrono::seconds(5));  // a forward that does not return in time
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(ran_s < 3.0);
  CHECK_FALSE(std::filesystem::exists(temporary));
}

TEST_CASE("a stall deadline that goes in time ends nothing, and a later one is armed afresh") {
  const auto [status, ran_s] = in_child([] {
    for (int i = 0; i < 3; ++i) {
      const lite::StallDeadline stall(0.3, "{budget_s}: still running", 2);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // past every bound, with none armed
    ::_exit(7);
  });
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK(ran_s >= 0.8);
}
