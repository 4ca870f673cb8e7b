// Interrupt handling: SIGINT and SIGTERM are recorded, not fatal, and map to exit codes 130 and 143.
#include <doctest/doctest.h>

#include <csignal>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

TEST_CASE("SIGINT and SIGTERM set the interrupt flag; the exit code tells them apart (130, 143)") {
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
