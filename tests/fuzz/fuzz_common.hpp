#pragma once
// Shared by the fuzz targets: the rule every parser must keep under hostile input. A parser may reject input
// only with lite::UsageError or lite::InputError (exit 2 in the CLI); anything else (lite::InternalError, a
// std::exception from the standard library, a crash, a sanitizer report) is a bug and must crash the target
// so that libFuzzer (or the corpus replay test) reports it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "lite/core/error.hpp"

namespace fuzz {

// Runs f(); a usage or input error is an accepted outcome, anything else escapes (and crashes the target).
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const lite::UsageError&) {
  } catch (const lite::InputError&) {
  }
}

// An invariant a successful parse must satisfy; aborts (a crash libFuzzer keeps) when it does not.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant violated: %s\n", what);
    std::abort();
  }
}

// The first byte as option bits, the rest as the input proper (so one corpus file carries both).
struct Split {
  uint8_t flags = 0;
  std::string_view rest;
};
inline Split split_flags(const uint8_t* data, size_t size) {
  if (size == 0) return {};
  return {data[0], std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

}  // namespace fuzz
