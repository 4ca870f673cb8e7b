#pragma once
// The jobs simulate() (engine.cpp) strings together, one function each, so each can be read alone:
//
//   engine_passes.cpp    the temporary files (a spooled stream), [scan] the working set / key file /
//                        fixed-size SHARDS threshold, [next] Belady's backward next-access pass
//   engine_plan.cpp      size resolution, the sampling plan, one simulator slot per policy x size
//   engine_main_pass.cpp the main pass: batches to every simulator, on a pool with double buffering
//   engine_results.cpp   records with SHARDS corrections, cost figures, the sampling check
//   recommend.cpp        the smallest size meeting a target (torch-free, unit-tested)
//
// Why files by job: every pass owns its own temporary data (key file, next-access file, spool) and
// hands the next job a small struct, so the orchestrator reads as the plan it is.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "lite/cache/mrc_internal.hpp"
#include "lite/cache/object_rate_internal.hpp"
#include "lite/cache/policy_internal.hpp"
#include "lite/cache/trace_internal.hpp"
#include "lite/core/clock.hpp"

namespace lite::cache::detail {

constexpr size_t kBatch = 1 << 14;  // 16K requests: 512 KiB of batch, cache-resident


// An unlinked temporary file (gone when closed, also after a crash), read and written by offset.
class TempFile {
 public:
  TempFile(const std::string& dir_option, const char* tag);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_at(const void* data, size_t n, uint64_t offset);
  void append(const void* data, size_t n) { write_at(data, n, size_); }
  size_t read_at(void* data, size_t n, uint64_t offset) const;
  uint64_t size() const { return size_; }
  std::string proc_path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Sequential reader of the int64 next-access file.
class NextStream {
 public:
  explicit NextStream(const TempFile& f) : file_(f), buf_(kBatch) {}
  void fill(int64_t* out, size_t n);

 private:
  const TempFile& file_;
  std::vector<int64_t> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t offset_ = 0;
};

// ---- passes before the main one (engine_passes.cpp) ---------------------------------------------

struct ScanRequest {
  bool write_keys = false;       // Belady without next accesses in the trace: keep the key sequence
  uint64_t sample_objects = 0;   // fixed-size SHARDS: find the threshold keeping this many objects
  std::string temp_dir;
};
struct ScanResult {
  uint64_t n_req = 0, n_obj = 0, wss = 0, max_size = 0;
  uint64_t fixed_threshold = UINT64_MAX;
  std::unique_ptr<TempFile> keys;
};
// One pass over the trace: objects, working set, largest object, optionally the key file and the
// fixed-size sampling threshold. Throws `empty` when the trace has no requests.
ScanResult scan_trace(TraceReader& reader, const ScanRequest& request, uint64_t source_size, Progress& progress);

// Belady: each request's 1-based next-access index, computed backwards from the scan's key file.
std::unique_ptr<TempFile> compute_next_access(const ScanResult& scan, const std::string& temp_dir, Progress& progress);

// ---- plan (engine_plan.cpp) ----------------------------------------------------------------------

struct SizeChoice {
  uint64_t size;     // full-trace units
  std::string text;  // as written, or the auto fraction
};
// The sizes to simulate, ascending and unique: the given ones (fractions of `wss`) or the auto set.
std::vector<SizeChoice> resolve_sizes(const std::vector<SizeSpec>& given, uint64_t wss, bool bytes,
                                      const std::string& trace_name);

struct SamplingPlan {
  double rate = 1.0;
  uint64_t threshold = UINT64_MAX;  // keep a key iff hash < threshold; UINT64_MAX = no sampling
  bool reader_filter = false;       // filter in the reader (no consumer needs the unsampled stream)
  double estimate_rate = 1.0;       // what sampled counts are scaled by: the rate achieved over objects
                                    // (fixed-rate sampling, object_rate_internal.hpp), else `rate`
  bool sampling() const { return threshold != UINT64_MAX; }
};
// The cache a simulator of a sampled trace gets for a full-trace size.
inline uint64_t scaled_size(uint64_t size, const SamplingPlan& plan) {
  return plan.sampling() ? std::max<uint64_t>(1, static_cast<uint64_t>(double(size) * plan.rate)) : size;
}

struct Slot {
  size_t policy;
  size_t size;
  std::unique_ptr<Simulator> sim;
  std::unique_ptr<Simulator> full;  // --sample-check twin on the unsampled stream
};
// The profiler as one more consumer of the batch stream.
class ProfilerConsumer final : public Simulator {
 public:
  explicit ProfilerConsumer(std::unique_ptr<LruProfiler> p) : profiler(std::move(p)) {}
  void run(const Batch& b) override { profiler->run(b); }
  size_t memory_bytes() const override { return profiler->memory_bytes(); }
  std::unique_ptr<LruProfiler> profiler;
};
struct PartitionProfiler {
  size_t partition;
  std::unique_ptr<ProfilerConsumer> consumer;
};
struct SimulatorSet {
  std::vector<Slot> slots;  // policy-major, sizes ascending
  std::unique_ptr<ProfilerConsumer> profiler;
  std::vector<PartitionProfiler> partitions;  // --mrc-partitions, instead of `profiler`
  std::vector<Simulator*> consumers() const;
};
// One simulator per wanted slot (`wanted`: policy-major, sizes ascending; empty = every slot), and the
// profiler when the curve is asked for and `run_curve` (with --mrc-partitions: one per partition in
// `curve_partitions`, every partition when empty).
SimulatorSet build_simulators(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes,
                              const SamplingPlan& plan, const std::vector<bool>& wanted = {}, bool run_curve = true,
                              const std::vector<size_t>& curve_partitions = {});

// ---- key-partitioned curves (mrc_partitions.cpp) ----------------------------------------------------

// One profiler per partition in `only` (every partition when empty), each keeping its keys' hash range.
void add_partition_profilers(const SimulationConfig& opt, const std::vector<uint64_t>& query_sizes,
                             const std::vector<size_t>& only, SimulatorSet& set);
// The partitions' curves after the main pass: combined into result.mrc, or (`combine` false, another
// process combines them) kept in result.mrc_partition_curves.
void finish_partition_curves(const SimulationConfig& opt, const SimulatorSet& set, bool combine, double seconds,
                             CacheSimResult& result);

// ---- main pass (engine_main_pass.cpp) ------------------------------------------------------------

struct MainPassResult {
  uint64_t simulated_requests = 0;  // after reader-level sampling
  uint64_t total_bytes = 0;         // bytes of every request read (object mode: requests)
  double total_cost_ms = 0;         // cost column: sum over every request read
  int threads = 1;
  double seconds = 0;
};
// Reads the trace once; every consumer sees every batch (with `threads` > 1 on a pool while the
// reader parses the next batch). `next` supplies Belady's next accesses when the trace lacks them;
// `object_rate`, when given, sees every request's key hash.
MainPassResult run_main_pass(TraceReader& reader, const std::vector<Simulator*>& consumers, NextStream* next,
                             bool needs_next, uint64_t filter_threshold, ObjectRate* object_rate, int threads,
                             uint64_t source_size, const std::string& label, Progress& progress);

// ---- results (engine_results.cpp) ----------------------------------------------------------------

// One record per slot: counters (SHARDS-corrected to full-trace units when sampling), the sampled
// counters, cost figures for the result's cost model.
void collect_records(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const SamplingPlan& plan,
                     const SimulatorSet& set, CacheSimResult& result);
// --sample-check: mean and largest |sampled - full| miss ratio over the records.
SamplingCheck check_sampling(const std::vector<SimRecord>& records, bool bytes);

}  // namespace lite::cache::detail
