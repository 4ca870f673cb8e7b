#pragma once
// Diagnosis of a latency measurement: what a careful engineer checks before trusting the numbers.
// Each finding says what was seen, the threshold it crossed, and what to try. Torch-free.
#include <string>
#include <vector>

#include "lite/core/report.hpp"
#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

struct Thresholds {
  double spike_robust_z = 3.5;      // (x - median) / (1.4826 MAD) above this is a spike
  double spike_min_fraction = 0.01; // report spikes when at least this share of iterations...
  double spike_max_ratio = 2.0;     // ...or when the worst one exceeds this multiple of the median
  double drift_ratio = 1.10;        // first timed iterations this much slower than the rest: warm-up drift
  double noisy_cv = 0.15;           // coefficient of variation above this: a noisy run
  double shape_change_ratio = 3.0;  // first call at a new shape vs expected: re-specialization
  // Minor page faults per call above this (4 KiB each: 1 MiB of memory mapped afresh every call) say the
  // allocator returns activation buffers to the OS between calls. MobileNetV2 int8 at batch 1 on glibc
  // malloc: 12 ms per call against 3 ms with tcmalloc on one of this project's VMs.
  double page_faults_per_call = 256;
};

struct HostLoad {
  int cores = 0;
  int intra_op_threads = 0;
  int other_running_threads = 0;  // runnable threads of other processes seen during the run
  std::string blas_library;       // the libblas this process mapped ("" when none)
  std::string load_source;        // where other_running_threads was read (measure::MachineLoad::source)
};

std::vector<report::Finding> diagnose_latency(const ModelProfile& m, const std::string& label,
                                              const Thresholds& t = {});
std::vector<report::Finding> diagnose_host(const HostLoad& load);

// The BLAS library mapped in this process (from /proc/self/maps). The machine's load: machine_load.hpp.
std::string mapped_blas_library();

}  // namespace lite::profile
