#pragma once
// Was this timing taken on an oversubscribed machine? One check for every verb that reports a speed (profile,
// quantize, prune, lite run's gates): a LoadWatch samples the runnable threads of other processes before, during
// and after a measurement, and the verdict compares the most it saw plus this process's intra-op threads with
// the cores. Under load the same recipe measured 9.7x and 37.8x: a speed taken on an oversubscribed machine is
// reported as untrusted, and a gate that judges one fails unless {allow_noisy}.
//
// The count is procs_running of /proc/stat (every runnable thread on the machine) less this process's own
// runnable threads (state R in /proc/self/task/*/stat: an OpenMP pool still spinning after a parallel region is
// ours, not load), the median of three reads a millisecond apart so one read racing a short-lived process
// does not decide. LITE_TEST_LOAD=N replaces the reading (N runnable threads of other processes), so tests
// simulate a loaded machine without loading it; it is read in other_runnable_threads() only. Torch-free.
#include <string>

#include <nlohmann/json.hpp>

#include "lite/core/report.hpp"

namespace lite::measure {

struct MachineLoad {
  int cores = 0;                   // logical cores of the machine
  int intra_op_threads = 0;        // the threads this process times with
  int other_runnable_threads = 0;  // the most runnable threads of other processes seen while timing
  int samples = 0;                 // readings taken
  std::string source;              // "/proc/stat" or "LITE_TEST_LOAD" ("" when nothing could be read)

  bool oversubscribed() const { return cores > 0 && intra_op_threads + other_runnable_threads > cores; }
  // "2 intra-op threads + 3 runnable threads of other processes > 2 cores"
  std::string describe() const;
};

void to_json(nlohmann::json& j, const MachineLoad& load);

// Runnable threads of other processes now: LITE_TEST_LOAD when set (InputError unless a whole number from 0 to
// 10^6), else /proc/stat's procs_running less this process's runnable threads; `source` says which (""
// when /proc could not be read: then 0).
int other_runnable_threads(std::string* source = nullptr);

// Samples the load while it lives: one reading when made, one per sample() (between measurements), one in
// result(). Construct it before the measurement, read result() after.
class LoadWatch {
 public:
  // cores 0: std::thread::hardware_concurrency().
  explicit LoadWatch(int intra_op_threads, int cores = 0);
  void sample();
  MachineLoad result();

 private:
  MachineLoad load_;
};

// The finding a report carries when `load` was oversubscribed: what was timed, the load (named by describe()),
// the threshold, and `consequence` + what to try. Severity "warning", or "info" when `allowed` ({allow_noisy}).
report::Finding oversubscription_finding(const MachineLoad& load, const std::string& what_was_timed,
                                         const std::string& consequence, bool allowed = false);

}  // namespace lite::measure
