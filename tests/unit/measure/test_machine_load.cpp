// The shared load check (profile/machine_load.hpp) and the implausible-speedup rule (profile/speed_claim.hpp):
// torch-free, compiled in with their two source files.
#include <doctest/doctest.h>

#include <cstdlib>

#include "lite/core/error.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/measure/speed_claim.hpp"

using namespace lite;

namespace {
// Sets LITE_TEST_LOAD for one scope (unset afterwards: the real /proc reading is tested too).
struct SimulatedLoad {
  explicit SimulatedLoad(const char* value) { setenv("LITE_TEST_LOAD", value, 1); }
  ~SimulatedLoad() { unsetenv("LITE_TEST_LOAD"); }
  SimulatedLoad(const SimulatedLoad&) = delete;
  SimulatedLoad& operator=(const SimulatedLoad&) = delete;
};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("load: LITE_TEST_LOAD replaces the reading, and only it") {
  std::string source;
  {
    SimulatedLoad load("7");
    CHECK(measure::other_runnable_threads(&source) == 7);
    CHECK(source == "LITE_TEST_LOAD");
  }
  const int real = measure::other_runnable_threads(&source);
  CHECK(source == "/proc/stat");
  CHECK(real >= 0);
}

TEST_CASE("load: a LITE_TEST_LOAD that is not a whole number is refused, naming the variable") {
  for (const char* bad : {"", "x", "-1", "2.5", "3 ", "1000001"}) {
    SimulatedLoad load(bad);
    CAPTURE(bad);
    try {
      measure::other_runnable_threads();
      FAIL("accepted");
    } catch (const InputError& e) {
      CHECK(contains(e.what(), "LITE_TEST_LOAD"));
    }
  }
}

TEST_CASE("load: oversubscribed when intra-op threads + other runnable threads exceed the cores") {
  {
    SimulatedLoad load("1");
    measure::LoadWatch watch(2, 2);
    const auto l = watch.result();
    CHECK(l.oversubscribed());
    CHECK(l.samples == 2);
    CHECK(l.describe() == "2 intra-op threads + 1 runnable thread of other processes > 2 cores");
  }
  {
    SimulatedLoad load("0");
    measure::LoadWatch watch(2, 2);
    CHECK_FALSE(watch.result().oversubscribed());
  }
  {
    SimulatedLoad load("3");
    measure::LoadWatch watch(1, 4);
    CHECK_FALSE(watch.result().oversubscribed());  // 1 + 3 = 4 threads fit 4 cores
  }
}

TEST_CASE("load: the watch keeps the most it saw during the measurement") {
  setenv("LITE_TEST_LOAD", "5", 1);
  measure::LoadWatch watch(2, 4);
  setenv("LITE_TEST_LOAD", "0", 1);
  watch.sample();
  const auto l = watch.result();
  unsetenv("LITE_TEST_LOAD");
  CHECK(l.other_runnable_threads == 5);
  CHECK(l.samples == 3);
  CHECK(l.oversubscribed());
}

TEST_CASE("load: the finding names the load, its source and what to try") {
  measure::MachineLoad l{2, 2, 1000, 2, "LITE_TEST_LOAD"};
  auto f = measure::oversubscription_finding(l, "latency", "the speedup is untrusted");
  CHECK(f.severity == "warning");
  CHECK(contains(f.what, "latency ran on an oversubscribed machine: 2 intra-op threads + 1000 runnable threads of "
                         "other processes > 2 cores (read from LITE_TEST_LOAD); the speedup is untrusted"));
  CHECK(contains(f.advice, "quiet machine"));
  measure::MachineLoad one_spare{4, 4, 3, 2, "/proc/stat"};
  CHECK(contains(measure::oversubscription_finding(one_spare, "x", "y").advice, "{threads} 1"));
  auto allowed = measure::oversubscription_finding(l, "latency", "accepted", true);
  CHECK(allowed.severity == "info");
  CHECK(contains(allowed.advice, "{allow_noisy}"));
}

TEST_CASE("speed claim: implausible beyond 50x, or beyond 3x the MAC ratio") {
  CHECK_FALSE(measure::implausible_speedup(37.8));
  CHECK_FALSE(measure::implausible_speedup(50.0));
  CHECK(measure::implausible_speedup(50.1));
  CHECK(measure::implausible_speedup(237.58));
  const double macs_before_over_after = 1 / 0.51;
  CHECK(measure::implausible_speedup(205.32, macs_before_over_after));
  CHECK(measure::implausible_speedup(6.0, macs_before_over_after));        // > 3 x 1.96
  CHECK_FALSE(measure::implausible_speedup(5.8, macs_before_over_after));  // < 3 x 1.96 = 5.88
  CHECK_FALSE(measure::implausible_speedup(1.5, macs_before_over_after));
  CHECK(measure::implausible_speedup(3.5, 1.0));
  CHECK_FALSE(measure::implausible_speedup(2.9, 1.0));
  CHECK_FALSE(measure::implausible_speedup(20, 0.0));  // an unknown work ratio leaves the absolute bound only
}

TEST_CASE("speed claim: the finding and the interval's mark") {
  auto f = measure::implausible_speedup_finding(205.32, "batch 1", 0.51);
  CHECK(f.what == "implausible: batch 1: 205.3x faster for 0.51x MACs; the baseline was probably disturbed; rerun on "
                  "a quiet machine");
  CHECK(contains(f.threshold, "MACs before / MACs after"));
  CHECK_FALSE(contains(measure::implausible_speedup_finding(237.58, "B").what, "MACs"));
  CHECK(measure::untrusted_mark(false, false).empty());
  CHECK(measure::untrusted_mark(true, false) == " (untrusted: the machine was oversubscribed)");
  CHECK(measure::untrusted_mark(false, true) == " (implausible: see the findings)");
  CHECK(contains(measure::untrusted_mark(true, true), "untrusted: the machine was oversubscribed"));
  CHECK(contains(measure::untrusted_mark(true, true), "implausible"));
}
