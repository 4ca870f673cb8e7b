#pragma once
// Typed errors. The library never prints and never exits: it throws one of these, and the CLI maps
// the kind to an exit code (see README "Exit codes"). Messages are one line: what, where, and the fix.
#include <stdexcept>
#include <string>
#include <utility>

namespace lite {

enum class ErrorKind {
  usage,        // the command line is wrong (unknown flag value, missing flag): exit 2
  bad_input,    // a file or value the user gave is unusable (missing, malformed, wrong shape): exit 2
  interrupted,  // SIGINT/SIGTERM seen by a long-running loop: exit 130
  internal,     // a bug in lite or libtorch: exit 3
  run_failed,   // the run could not finish for a cause outside its inputs and outside lite (a data-parallel
                // peer was lost); the message says what was kept: exit 1
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// "FILE: PROBLEM; FIX" - the shape of every bad-input message.
std::string describe_problem(const std::string& file, const std::string& problem, const std::string& fix = {});

struct UsageError : Error {
  explicit UsageError(const std::string& message) : Error(ErrorKind::usage, message) {}
};

struct InputError : Error {
  explicit InputError(const std::string& message) : Error(ErrorKind::bad_input, message) {}
  InputError(const std::string& file, const std::string& problem, const std::string& fix = {})
      : Error(ErrorKind::bad_input, describe_problem(file, problem, fix)) {}
};

struct Interrupted : Error {
  // `outcome`: what the interrupted run left, as the CLI's "interrupted; OUTCOME" line says it.
  explicit Interrupted(std::string outcome = "nothing was written")
      : Error(ErrorKind::interrupted, "interrupted"), outcome_(std::move(outcome)) {}
  const std::string& outcome() const { return outcome_; }

 private:
  std::string outcome_;
};

struct InternalError : Error {
  explicit InternalError(const std::string& message) : Error(ErrorKind::internal, message) {}
};

// Exit codes of the lite CLI, documented in README.md.
enum ExitCode : int {
  exit_ok = 0,
  exit_check_failed = 1,  // a gate or check failed (e.g. slower or less accurate than allowed); results written
  exit_bad_input = 2,     // usage error or unusable input; nothing written
  exit_internal = 3,      // unexpected failure inside lite or libtorch
  exit_interrupted = 130,
};

int exit_code_for(ErrorKind kind);

// Collapses a multi-line message (libtorch's errors carry backtraces) to its first meaningful line.
std::string first_line(const std::string& message);

}  // namespace lite
