#include "lite/profile/diagnosis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "lite/core/stats.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/machine_load.hpp"

namespace lite::profile {

std::vector<report::Finding> diagnose_latency(const ModelProfile& m, const std::string& label, const Thresholds& t) {
  std::vector<report::Finding> out;
  const auto& s = m.samples_ms;
  if (s.size() < 5) return out;
  const double median = m.latency_ms.p50;
  const std::string who = label.empty() ? "" : label + ": ";

  // Latency spikes (robust outliers).
  auto spikes = stats::slow_outliers(s, t.spike_robust_z);
  if (!spikes.empty()) {
    double worst = 0;
    for (auto i : spikes) worst = std::max(worst, s[i]);
    double fraction = double(spikes.size()) / double(s.size());
    if (fraction >= t.spike_min_fraction || worst > t.spike_max_ratio * median)
      out.push_back({"warning",
                     fmt::format("{}{} of {} iterations ({:.1f}%) were latency spikes, worst {} ms = {:.1f}x the median",
                                 who, spikes.size(), s.size(), 100 * fraction, format_ms(worst), worst / median),
                     fmt::format("robust z-score > {} (median + {} x 1.4826 MAD)", t.spike_robust_z, t.spike_robust_z),
                     "pin the process to idle cores (taskset -c), stop other load, or lower {threads}"});
  }

  // Warm-up drift: the first timed iterations still slower than the steady state.
  size_t head = std::max<size_t>(5, s.size() / 10);
  if (s.size() >= 2 * head) {
    std::vector<double> first(s.begin(), s.begin() + head), rest(s.begin() + head, s.end());
    double ratio = stats::median(first) / stats::median(rest);
    if (ratio > t.drift_ratio)
      out.push_back({"warning",
                     fmt::format("{}first {} timed iterations were {:.0f}% slower than the rest (warm-up drift)", who,
                                 head, 100 * (ratio - 1)),
                     fmt::format("median ratio > {:.2f}", t.drift_ratio),
                     fmt::format("raise {{warmup}} (now {}) to at least {}", m.warmup_samples_ms.size(),
                                 std::max<size_t>(2 * m.warmup_samples_ms.size(), m.warmup_samples_ms.size() + head))});
  }

  if (m.page_faults_per_call > t.page_faults_per_call)
    out.push_back({"warning",
                   fmt::format("{}{:.0f} page faults per call ({} of memory mapped afresh each call): the allocator "
                               "returns activation buffers to the OS between calls and the next call faults them "
                               "back in, which can cost more than the compute",
                               who, m.page_faults_per_call, format_bytes(m.page_faults_per_call * 4096)),
                   fmt::format("page faults per call > {:.0f}", t.page_faults_per_call),
                   "run with a caching allocator, e.g. LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 "
                   "(Debian's libtcmalloc-minimal4), or keep glibc's memory with GLIBC_TUNABLES=glibc.malloc."
                   "mmap_threshold=33554432:glibc.malloc.trim_threshold=268435456, and profile again"});

  if (m.latency_ms.cv > t.noisy_cv)
    out.push_back({"warning",
                   fmt::format("{}noisy run: coefficient of variation {:.2f}", who, m.latency_ms.cv),
                   fmt::format("CV > {:.2f}", t.noisy_cv),
                   "compare medians rather than means, run longer ({duration_s}), or quiet the machine"});

  if (m.shape_change && m.shape_change->expected_ms > 0 && !m.shape_change->first_calls_ms.empty()) {
    double first = m.shape_change->first_calls_ms.front();
    double ratio = first / m.shape_change->expected_ms;
    if (ratio > t.shape_change_ratio) {
      std::vector<std::string> dims;
      for (auto d : m.shape_change->new_shape) dims.push_back(std::to_string(d));
      out.push_back({"warning",
                     fmt::format("{}first call at a new input shape ({}) took {} ms, {:.0f}x the expected {} ms: the "
                                 "TorchScript profiling executor re-specializes on every new shape",
                                 who, join(dims, "x"), format_ms(first), ratio, format_ms(m.shape_change->expected_ms)),
                     fmt::format("first call > {:.0f}x expected", t.shape_change_ratio),
                     "serve fixed shapes (pad batches to a few sizes and warm each), or freeze the model "
                     "(torch.jit.freeze + optimize_for_inference), or disable the profiling executor"});
    }
  }

  if (!m.frozen)
    out.push_back({"info", fmt::format("{}the model is not frozen (its graph reads module attributes)", who), "",
                   "torch.jit.freeze + torch.jit.optimize_for_inference often cuts CPU latency 2x; compare with "
                   "'lite profile model.pt frozen.pt'"});
  return out;
}

std::vector<report::Finding> diagnose_host(const HostLoad& h) {
  std::vector<report::Finding> out;
  const measure::MachineLoad load{h.cores, h.intra_op_threads, h.other_running_threads, 0, h.load_source};
  if (load.oversubscribed())
    out.push_back(measure::oversubscription_finding(
        load, "the timing", "its latencies (and a speedup) show the load, not the model's speed: untrusted"));
  if (!h.blas_library.empty() && h.blas_library.find("openblas") == std::string::npos &&
      h.blas_library.find("mkl") == std::string::npos && h.blas_library.find("blis") == std::string::npos)
    out.push_back({"warning", "libtorch uses the reference BLAS (" + h.blas_library + "); fp32 matmul runs ~40x slower",
                   "libblas is not OpenBLAS, MKL or BLIS",
                   "apt-get install libopenblas0-pthread (scripts/setup.sh does)"});
  // OpenBLAS's pthread build runs worker threads of its own beside libgomp's, which spin between parallel regions:
  // above one thread the two pools oversubscribe the cores (docs/profile.md has the figures measured here).
  if (h.intra_op_threads > 1 && h.blas_library.find("openblas-pthread") != std::string::npos)
    out.push_back({"warning",
                   fmt::format("libtorch's OpenBLAS is the pthread build ({}): at {} threads its workers and "
                               "libgomp's compete for the cores, so fp32 matmul can run several times slower",
                               h.blas_library, h.intra_op_threads),
                   "OpenBLAS pthread build with more than one intra-op thread",
                   "apt-get install libopenblas0-openmp (lite's executables then load it), or {threads} 1"});
  return out;
}

std::string mapped_blas_library() {
  std::ifstream in("/proc/self/maps");
  std::string line;
  while (std::getline(in, line)) {
    auto pos = line.find('/');
    if (pos == std::string::npos) continue;
    std::string path = line.substr(pos);
    if (path.find("blas") != std::string::npos || path.find("libmkl") != std::string::npos) return path;
  }
  return "";
}

}  // namespace lite::profile
