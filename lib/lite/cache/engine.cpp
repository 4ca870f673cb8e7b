// simulate(): plans the passes over the trace and drives every simulator from one stream of batches.
//
//   [spool]   stdin is copied to an unlinked temporary file when more than one pass is needed
//   [scan]    a first pass when sizes are fractions of the working set (auto), when Belady needs
//             next-access indices the format lacks (keys are written to a temporary file), or for
//             fixed-size SHARDS (the N smallest key hashes give the sampling rate)
//   [next]    Belady only: the key file is read backwards in 64K-request blocks to compute each
//             request's next-access index into a second temporary file (memory: one map entry per
//             object; disk: 16 bytes per request; nothing per request stays in memory)
//   [main]    one pass: the reader fills a 16K-request batch, every simulator (and the one-pass LRU
//             profiler) consumes it; with --threads > 1 the simulators run on a pool while the reader
//             parses the next batch (double buffering)
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <queue>
#include <thread>
#include <unordered_map>

#include "lite/cache/latency_internal.hpp"
#include "lite/cache/mrc_internal.hpp"
#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {
namespace detail {

constexpr size_t kBatch = 1 << 14;  // 16K requests: 512 KiB of batch, cache-resident

// ---- temporary files ----------------------------------------------------------------------------

class TempFile {
 public:
  TempFile(const std::string& dir_option, const char* tag) {
    std::string dir = dir_option;
    if (dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      dir = t && *t ? t : "/tmp";
    }
    std::string pattern = dir + "/lite-cache-sim-" + tag + "-XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0)
      throw InputError(dir, std::string("cannot create a temporary file: ") + std::strerror(errno),
                       "set TMPDIR to a writable folder with free space");
    ::unlink(name.data());  // gone when closed, also after a crash
  }
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  void write_at(const void* data, size_t n, uint64_t offset) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      ssize_t w = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        throw InputError("temporary file", std::string("write failed: ") + std::strerror(errno),
                         "free disk space or set TMPDIR to another folder");
      p += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
    size_ = std::max(size_, offset);
  }
  void append(const void* data, size_t n) { write_at(data, n, size_); }
  size_t read_at(void* data, size_t n, uint64_t offset) const {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, static_cast<char*>(data) + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError("temporary file", std::string("read failed: ") + std::strerror(errno));
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    return done;
  }
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
  void fill(int64_t* out, size_t n) {
    size_t done = 0;
    while (done < n) {
      if (pos_ == len_) {
        size_t bytes = file_.read_at(buf_.data(), buf_.size() * 8, offset_);
        offset_ += bytes;
        len_ = bytes / 8;
        pos_ = 0;
        if (len_ == 0) throw InternalError("next-access file shorter than the trace");
      }
      size_t k = std::min(n - done, len_ - pos_);
      std::memcpy(out + done, buf_.data() + pos_, k * 8);
      pos_ += k;
      done += k;
    }
  }

 private:
  const TempFile& file_;
  std::vector<int64_t> buf_;
  size_t pos_ = 0, len_ = 0;
  uint64_t offset_ = 0;
};

// ---- worker pool: every simulator consumes every batch ------------------------------------------

class Pool {
 public:
  Pool(std::vector<Simulator*> sims, int threads) : sims_(std::move(sims)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void start(const Batch* b) {
    {
      std::lock_guard<std::mutex> lk(m_);
      batch_ = b;
      next_.store(0);
      done_ = 0;
      ++generation_;
      running_ = true;
    }
    cv_work_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lk(m_);
    cv_done_.wait(lk, [&] { return !running_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    uint64_t seen = 0;
    while (true) {
      const Batch* b;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_work_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        b = batch_;
      }
      try {
        for (size_t i; (i = next_.fetch_add(1)) < sims_.size();) sims_[i]->run(*b);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lk(m_);
      if (++done_ == workers_.size()) {
        running_ = false;
        cv_done_.notify_one();
      }
    }
  }

  std::vector<Simulator*> sims_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_work_, cv_done_;
  const Batch* batch_ = nullptr;
  std::atomic<size_t> next_{0};
  size_t done_ = 0;
  uint64_t generation_ = 0;
  bool running_ = false, stop_ = false;
  std::exception_ptr error_;
};

// The profiler as one more consumer of the batch stream.
class ProfilerConsumer final : public Simulator {
 public:
  explicit ProfilerConsumer(std::unique_ptr<LruProfiler> p) : profiler(std::move(p)) {}
  void run(const Batch& b) override { profiler->run(b); }
  size_t memory_bytes() const override { return profiler->memory_bytes(); }
  std::unique_ptr<LruProfiler> profiler;
};

struct KeyNode {
  uint64_t key = 0;
};
struct LastNode {
  uint64_t key = 0;
  int64_t last = 0;
};

struct ScanResult {
  uint64_t n_req = 0, n_obj = 0, wss = 0, max_size = 0;
  uint64_t fixed_threshold = UINT64_MAX;
  std::unique_ptr<TempFile> keys;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace detail

namespace {

using namespace detail;

void validate(const CacheSimOptions& o) {
  if (!(o.sample_rate > 0 && o.sample_rate <= 1))
    throw UsageError(fmt::format("--sample-rate {} is outside (0, 1]; e.g. 0.01 keeps 1% of the keys", o.sample_rate));
  if (o.sample_objects && o.sample_rate < 1)
    throw UsageError("--sample-rate and --sample-objects are two kinds of sampling; give one");
  if (o.sample_check && o.sample_rate >= 1 && !o.sample_objects)
    throw UsageError("--sample-check compares a sampled run with the full trace; add --sample-rate R or --sample-objects N");
  if (o.hit_latency_ms < 0 || !std::isfinite(o.hit_latency_ms)) throw UsageError("--hit-latency must be >= 0 ms");
  if (o.miss_latency_ms && (*o.miss_latency_ms < 0 || !std::isfinite(*o.miss_latency_ms)))
    throw UsageError("--miss-latency must be >= 0 ms");
  if (o.miss_latency_ms && !o.variants.empty())
    throw UsageError("--miss-latency and --miss-latency-from are two miss-latency sources; give one");
  if (o.target_hit_ratio && !(*o.target_hit_ratio > 0 && *o.target_hit_ratio <= 1))
    throw UsageError(fmt::format("--target-hit-ratio {} is outside (0, 1]", *o.target_hit_ratio));
  if (o.target_p99_ms && !(*o.target_p99_ms > 0)) throw UsageError("--target-p99 must be > 0 ms");
  if (o.target_hit_ratio && o.target_p99_ms) throw UsageError("give one target: --target-hit-ratio or --target-p99");
  if (o.threads < 0) throw UsageError("--threads must be >= 0 (0 = all cores)");
  if (o.policies.empty() && !o.mrc) throw UsageError("no policy to simulate; give --policy, or --mrc for the LRU curve alone");
  if (!o.bytes)
    for (const auto& s : o.sizes)
      if (s.absolute && s.text.find_first_of("kKmMgGtTbB") != std::string::npos)
        throw UsageError(fmt::format("--sizes: '{}' has a byte unit but the simulation counts objects; add --bytes", s.text));
}

// The request-level filter applied to every batch before the simulators see it.
struct BatchPrep {
  NextStream* next = nullptr;
  uint64_t threshold = UINT64_MAX;  // reader-level sampling
  uint64_t total_bytes = 0;

  void apply(Batch& b) {
    if (next) next->fill(b.next.data(), b.n);
    for (size_t i = 0; i < b.n; ++i) total_bytes += b.size[i];
    if (threshold == UINT64_MAX) {
      for (size_t i = 0; i < b.n; ++i) b.hash[i] = hash_key(b.key[i]);
      return;
    }
    size_t k = 0;
    for (size_t i = 0; i < b.n; ++i) {
      const uint64_t h = hash_key(b.key[i]);
      if (h >= threshold) continue;
      b.key[k] = b.key[i];
      b.hash[k] = h;
      b.size[k] = b.size[i];
      b.cost[k] = b.cost[i];
      b.next[k] = b.next[i];
      ++k;
    }
    b.n = k;
  }
};

}  // namespace

CacheSimResult simulate(const CacheSimOptions& opt, Progress& progress) {
  const auto t_start = Clock::now();
  validate(opt);
  CacheSimResult result;
  result.bytes = opt.bytes;
  const std::vector<PolicySpec>& policies = opt.policies;
  bool needs_next = false;
  for (const auto& p : policies) needs_next = needs_next || find_policy(p.name).needs_next_access;
  bool needs_wss = opt.sizes.empty();
  for (const auto& s : opt.sizes) needs_wss = needs_wss || s.fraction > 0;

  ReaderConfig rc;
  const std::string name = display_name(opt.trace);
  rc.path = opt.trace;
  rc.display = name;
  rc.format = opt.format;
  rc.csv = opt.csv;
  rc.has_header = opt.has_header;
  rc.bytes = opt.bytes;
  rc.skip_bad_lines = opt.skip_bad_lines;
  const bool other_miss_source = opt.miss_latency_ms.has_value() || !opt.variants.empty();
  if (other_miss_source && opt.csv.explicit_columns && opt.csv.cost)
    throw UsageError("the csv cost column and --miss-latency/--miss-latency-from are two miss-latency sources; give one");
  rc.want_cost = !other_miss_source;

  // ---- spool stdin when more than one pass is needed (an oracleGeneral trace carries next accesses)
  std::unique_ptr<TempFile> spool;
  const bool next_in_trace = opt.format == TraceFormat::oracle_general;
  const bool multi_pass = needs_wss || (needs_next && !next_in_trace) || opt.sample_objects > 0;
  if (opt.trace == "-" && multi_pass) {
    ProgressPhase phase(progress, "spooling stdin", 0);
    spool = std::make_unique<TempFile>(opt.temp_dir, "stdin");
    std::vector<char> buf(size_t(4) << 20);
    while (true) {
      ssize_t r = ::read(0, buf.data(), buf.size());
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw InputError(name, std::string("read failed: ") + std::strerror(errno));
      if (r == 0) break;
      spool->append(buf.data(), static_cast<size_t>(r));
      phase.advance(static_cast<uint64_t>(r));
      throw_if_interrupted();
    }
    rc.path = spool->proc_path();
  }
  const uint64_t source_size = file_size_or_zero(rc.path);
  auto open = [&] { return open_trace(rc); };
  auto empty_trace = [&](const TraceReader& r) {
    std::string detail = "the trace has no requests";
    if (r.stats().n_skipped_zero_size) detail += fmt::format(" ({} of size 0 were skipped)", r.stats().n_skipped_zero_size);
    if (r.stats().n_bad_lines) detail += fmt::format(" ({} malformed lines were skipped)", r.stats().n_bad_lines);
    return InputError(name, detail, "pass a trace with at least one request");
  };

  // ---- scan pass (reuses the first reader; the main pass reopens the trace only after a scan)
  ScanResult scan;
  std::unique_ptr<TempFile> next_file;
  int passes = 0;
  std::unique_ptr<TraceReader> reader = open();  // validates the format before any long work
  if (opt.csv.explicit_columns && reader->format() != TraceFormat::csv)
    throw UsageError(fmt::format("--csv-columns applies to csv traces; {} is {}", name, trace_format_name(reader->format())));
  if (opt.has_header && reader->format() != TraceFormat::csv)
    throw UsageError(fmt::format("--has-header applies to csv traces; {} is {}", name, trace_format_name(reader->format())));
  {
    const bool compute_next = needs_next && !reader->has_next();
    if (needs_wss || compute_next || opt.sample_objects > 0) {
      ++passes;
      ProgressPhase phase(progress, "scanning trace", source_size);
      ObjectTable<KeyNode> seen(1 << 16);
      std::priority_queue<uint64_t> smallest;  // the sample_objects+1 smallest hashes
      if (compute_next) scan.keys = std::make_unique<TempFile>(opt.temp_dir, "keys");
      Batch b;
      b.reserve(kBatch);
      uint64_t last_bytes = 0;
      while (true) {
        b.n = 0;
        if (!reader->fill(b)) break;
        for (size_t i = 0; i < b.n; ++i) b.hash[i] = hash_key(b.key[i]);
        for (size_t i = 0; i < b.n; ++i) {
          const uint64_t k = b.key[i];
          const uint64_t h = b.hash[i];
          if (i + 8 < b.n) seen.prefetch(b.hash[i + 8]);
          if (seen.find(k, h) == kNil) {
            seen.insert(k, h);
            scan.wss += b.size[i];
            if (opt.sample_objects) {
              if (smallest.size() <= opt.sample_objects) smallest.push(h);
              else if (h < smallest.top()) {
                smallest.pop();
                smallest.push(h);
              }
            }
          }
          scan.max_size = std::max<uint64_t>(scan.max_size, b.size[i]);
        }
        if (scan.keys) scan.keys->append(b.key.data(), b.n * 8);
        scan.n_req += b.n;
        phase.advance(reader->bytes_consumed() - last_bytes);
        last_bytes = reader->bytes_consumed();
        throw_if_interrupted();
      }
      if (scan.n_req == 0) throw empty_trace(*reader);
      scan.n_obj = seen.size();
      if (opt.sample_objects && smallest.size() > opt.sample_objects) scan.fixed_threshold = smallest.top();
      result.trace.n_obj = scan.n_obj;
      result.trace.working_set_bytes = scan.wss;
      result.trace.max_object_size = scan.max_size;
      reader.reset();
    }
    if (compute_next) {
      ++passes;
      ProgressPhase phase(progress, "computing next accesses (Belady)", scan.n_req);
      next_file = std::make_unique<TempFile>(opt.temp_dir, "next");
      ObjectTable<LastNode> last(static_cast<size_t>(std::min<uint64_t>(scan.n_obj, uint64_t(1) << 26)) + 16);
      const uint64_t block = std::min<uint64_t>(uint64_t(1) << 16, scan.n_req);  // Ctrl-C is polled per block
      RawArray<uint64_t> keys;
      RawArray<int64_t> next;
      keys.resize(block);
      next.resize(block);
      for (uint64_t hi = scan.n_req; hi > 0;) {
        const uint64_t lo = hi > block ? hi - block : 0;
        const size_t n = static_cast<size_t>(hi - lo);
        if (scan.keys->read_at(keys.data(), n * 8, lo * 8) != n * 8) throw InternalError("short read of the key file");
        for (size_t j = n; j-- > 0;) {
          const uint64_t k = keys[j];
          const uint64_t h = hash_key(k);
          uint32_t node = last.find(k, h);
          if (node == kNil) {
            next[j] = kNoNextAccess;
            node = last.insert(k, h);
          } else {
            next[j] = last[node].last;
          }
          last[node].last = static_cast<int64_t>(lo + j + 1);  // 1-based, like oracleGeneral
        }
        next_file->write_at(next.data(), n * 8, lo * 8);
        phase.advance(n);
        hi = lo;
        throw_if_interrupted();
      }
      scan.keys.reset();
      result.notes.push_back(fmt::format(
          "Belady: next-access indices computed in a backward pass over a temporary key file ({} on disk, "
          "one map entry per object in memory)",
          format_bytes(double(scan.n_req) * 16)));
    }
  }

  // ---- sizes
  struct SizeChoice {
    uint64_t size;
    std::string text;
  };
  std::vector<SizeChoice> sizes;
  const uint64_t wss = opt.bytes ? scan.wss : scan.n_obj;
  if (opt.sizes.empty()) {
    for (double f : auto_size_fractions()) {
      uint64_t s = static_cast<uint64_t>(double(wss) * f);
      if (s > 0) sizes.push_back({s, fmt::format("{:g}%", f * 100)});
    }
    if (sizes.empty()) throw InputError(name, "the working set is too small to pick sizes automatically", "pass --sizes");
  } else {
    for (const auto& s : opt.sizes) {
      if (s.fraction > 0) {
        uint64_t v = static_cast<uint64_t>(double(wss) * s.fraction);
        if (v == 0)
          throw UsageError(fmt::format("--sizes: {} of a working set of {} is 0; use a larger fraction", s.text,
                                       size_label(wss, opt.bytes)));
        sizes.push_back({v, s.text});
      } else {
        sizes.push_back({s.absolute, s.text});
      }
    }
  }
  std::stable_sort(sizes.begin(), sizes.end(), [](const SizeChoice& a, const SizeChoice& b) { return a.size < b.size; });
  sizes.erase(std::unique(sizes.begin(), sizes.end(), [](const SizeChoice& a, const SizeChoice& b) { return a.size == b.size; }),
              sizes.end());

  // ---- sampling
  double rate = opt.sample_rate;
  uint64_t threshold = threshold_for(rate);
  if (opt.sample_objects) {
    threshold = scan.fixed_threshold;
    rate = rate_for(threshold);
    result.trace.sampling = "fixed-size";
    if (threshold == UINT64_MAX)
      result.notes.push_back(fmt::format("--sample-objects {}: the trace has only {} objects, so nothing was sampled out",
                                         opt.sample_objects, scan.n_obj));
  } else if (rate < 1) {
    result.trace.sampling = "fixed-rate";
  }
  result.trace.sample_rate = rate;
  const bool sampling = threshold != UINT64_MAX;
  // Filter in the reader unless some consumer needs the unsampled stream.
  const bool reader_filter = sampling && !opt.sample_check && !(opt.mrc && opt.sample_objects);

  // ---- simulators
  struct Slot {
    size_t policy;
    size_t size;
    std::unique_ptr<Simulator> sim;
    std::unique_ptr<Simulator> full;  // --sample-check twin
  };
  std::vector<Slot> slots;
  for (size_t p = 0; p < policies.size(); ++p)
    for (size_t s = 0; s < sizes.size(); ++s) {
      Slot slot{p, s, nullptr, nullptr};
      uint64_t simulated = sizes[s].size;
      if (sampling) simulated = std::max<uint64_t>(1, static_cast<uint64_t>(double(sizes[s].size) * rate));
      slot.sim = make_simulator(policies[p], simulated, opt.bytes);
      if (sampling && !reader_filter) slot.sim->sample_threshold = threshold;
      if (opt.sample_check) slot.full = make_simulator(policies[p], sizes[s].size, opt.bytes);
      slots.push_back(std::move(slot));
    }
  std::unique_ptr<ProfilerConsumer> profiler;
  if (opt.mrc) {
    std::vector<uint64_t> q;
    for (const auto& s : sizes) q.push_back(s.size);
    if (opt.sample_objects)
      profiler = std::make_unique<ProfilerConsumer>(std::make_unique<LruProfiler>(opt.bytes, q, 1.0, opt.sample_objects));
    else
      profiler = std::make_unique<ProfilerConsumer>(std::make_unique<LruProfiler>(opt.bytes, q, rate));
  }
  std::vector<Simulator*> consumers;
  for (auto& s : slots) {
    consumers.push_back(s.sim.get());
    if (s.full) consumers.push_back(s.full.get());
  }
  if (profiler) consumers.push_back(profiler.get());

  // ---- main pass
  ++passes;
  if (!reader) reader = open();
  result.trace.format = trace_format_name(reader->format());
  result.trace.has_cost_column = reader->has_cost();
  result.trace.has_next_access = reader->has_next();
  for (const auto& n : reader->notes) result.notes.push_back(n);
  if (opt.target_p99_ms && !other_miss_source && !reader->has_cost())
    throw UsageError("--target-p99 needs a miss latency: --miss-latency MS, --miss-latency-from PROFILE.json, or a csv cost column");

  std::unique_ptr<NextStream> next_stream;
  if (next_file) next_stream = std::make_unique<NextStream>(*next_file);
  BatchPrep prep;
  prep.next = next_stream.get();
  prep.threshold = reader_filter ? threshold : UINT64_MAX;

  int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(consumers.size()));
  result.threads = std::max(1, threads);
  const auto t_main = Clock::now();
  uint64_t simulated_requests = 0;
  {
    ProgressPhase phase(progress, fmt::format("simulating {} cache{}", slots.size(), slots.size() == 1 ? "" : "s"),
                        source_size);
    uint64_t last_bytes = 0;
    auto report = [&] {
      const uint64_t b = reader->bytes_consumed();
      phase.advance(b - last_bytes);
      last_bytes = b;
      throw_if_interrupted();
    };
    Batch batches[2];
    batches[0].reserve(kBatch);
    if (threads > 1) batches[1].reserve(kBatch);  // double buffering only with a pool
    batches[0].has_cost = batches[1].has_cost = reader->has_cost();
    batches[0].has_next = batches[1].has_next = needs_next;
    auto read_batch = [&](Batch& b) {
      while (true) {
        b.n = 0;
        if (!reader->fill(b)) return false;
        prep.apply(b);
        if (b.n > 0) return true;
      }
    };
    if (threads <= 1) {
      while (read_batch(batches[0])) {
        for (Simulator* s : consumers) s->run(batches[0]);
        simulated_requests += batches[0].n;
        report();
      }
    } else {
      Pool pool(consumers, threads);
      int cur = 0;
      bool have = read_batch(batches[cur]);
      while (have) {
        pool.start(&batches[cur]);
        simulated_requests += batches[cur].n;
        bool more = read_batch(batches[1 - cur]);
        pool.wait();
        report();
        cur = 1 - cur;
        have = more;
      }
    }
  }
  const double main_seconds = seconds_since(t_main);
  if (reader->stats().n_read == 0) throw empty_trace(*reader);
  if (simulated_requests == 0)
    throw InputError(name, fmt::format("sampling at rate {:g} kept none of the {} requests", rate, reader->stats().n_read),
                     "raise --sample-rate or --sample-objects");

  // ---- results
  result.trace.path = name;
  result.trace.n_req_total = reader->stats().n_read;
  result.trace.n_req_byte = prep.total_bytes;
  // requests the (sampled) simulators saw; without a reader-level filter each simulator sampled itself
  result.trace.n_req = sampling && !reader_filter && !slots.empty() ? slots.front().sim->counters.n_req : simulated_requests;
  result.trace.n_skipped_zero_size = reader->stats().n_skipped_zero_size;
  result.trace.n_bad_lines_skipped = reader->stats().n_bad_lines;
  if (result.trace.n_bad_lines_skipped)
    result.notes.push_back(fmt::format("skipped {} malformed line{} (--skip-bad-lines)", result.trace.n_bad_lines_skipped,
                                       result.trace.n_bad_lines_skipped == 1 ? "" : "s"));
  if (result.trace.n_skipped_zero_size)
    result.notes.push_back(fmt::format("skipped {} request{} of size 0 (as libCacheSim does)",
                                       result.trace.n_skipped_zero_size, result.trace.n_skipped_zero_size == 1 ? "" : "s"));

  if (!opt.variants.empty()) result.cost_model = "profiles";
  else if (opt.miss_latency_ms) result.cost_model = "constant";
  else if (reader->has_cost()) result.cost_model = "cost column";
  if (result.cost_model.empty() && opt.hit_latency_ms > 0)
    result.notes.push_back("--hit-latency is ignored: no miss latency given (--miss-latency, --miss-latency-from or a cost column)");

  for (auto& slot : slots) {
    SimRecord r;
    r.policy = policies[slot.policy].label();
    r.size = sizes[slot.size].size;
    r.size_text = sizes[slot.size].text;
    r.simulated_size = sampling ? std::max<uint64_t>(1, static_cast<uint64_t>(double(r.size) * rate)) : r.size;
    r.counters = slot.sim->counters;
    r.sampled = sampling;
    double scale = 1.0;
    if (sampling) {
      // SHARDS estimate in full-trace units: the totals are known exactly, the misses scale by 1/R
      // (requests of hot keys the sample happened to miss count as hits, as SHARDS_adj assumes)
      r.sampled_counters = r.counters;
      scale = 1.0 / rate;
      Counters est;
      est.n_req = result.trace.n_req_total;
      est.n_req_byte = result.trace.n_req_byte;
      est.n_miss = std::min<uint64_t>(est.n_req, static_cast<uint64_t>(std::llround(double(r.counters.n_miss) * scale)));
      est.n_miss_byte =
          std::min<uint64_t>(est.n_req_byte, static_cast<uint64_t>(std::llround(double(r.counters.n_miss_byte) * scale)));
      r.counters = est;
    }
    r.memory_bytes = slot.sim->memory_bytes();
    if (result.cost_model == "constant") r.latency = latency_constant(r.counters, opt.hit_latency_ms, *opt.miss_latency_ms);
    else if (result.cost_model == "cost column")
      r.latency = latency_from_costs(r.counters, opt.hit_latency_ms, slot.sim->miss_cost, scale);
    else if (result.cost_model == "profiles")
      for (const auto& v : opt.variants) r.variants.emplace_back(v.label, latency_from_variant(r.counters, opt.hit_latency_ms, v));
    if (slot.full) r.full = slot.full->counters;
    result.records.push_back(std::move(r));
  }

  if (profiler) {
    MrcCurve c = profiler->profiler->finish(sampling ? result.trace.n_req_total : 0, opt.target_hit_ratio);
    c.seconds = main_seconds;
    if (c.bytes && c.sizes_vary)
      result.notes.push_back("--mrc: some objects change size between requests; the one-pass byte curve keeps each object's "
                             "latest size, while the simulators keep the size at insertion, so they can differ");
    result.mrc = std::move(c);
  }

  if (opt.sample_check) {
    SamplingCheck chk;
    double sum = 0;
    for (const auto& r : result.records) {
      double e = std::fabs(r.counters.miss_ratio() - r.full->miss_ratio());
      sum += e;
      if (e >= chk.max_abs_error) {
        chk.max_abs_error = e;
        chk.worst = r.policy + " @ " + size_label(r.size, opt.bytes);
      }
    }
    chk.mean_abs_error = result.records.empty() ? 0 : sum / double(result.records.size());
    result.sampling_check = chk;
  }

  // ---- recommendation
  if (opt.target_hit_ratio || opt.target_p99_ms) {
    RecommendationSet set;
    set.target = opt.target_hit_ratio ? fmt::format("hit ratio >= {:g}", *opt.target_hit_ratio)
                                      : fmt::format("p99 <= {:g} ms", *opt.target_p99_ms);
    std::vector<std::string> variant_names;
    if (opt.target_p99_ms && !opt.variants.empty())
      for (const auto& v : opt.variants) variant_names.push_back(v.label);
    else
      variant_names.push_back("");
    for (const std::string& variant : variant_names)
      for (const auto& p : policies) {
        Recommendation rec;
        rec.policy = p.label();
        rec.variant = variant;
        rec.offline_bound = find_policy(p.name).needs_next_access;
        for (const auto& r : result.records) {
          if (r.policy != rec.policy) continue;
          bool ok;
          std::optional<double> p99;
          if (opt.target_hit_ratio) {
            ok = 1.0 - r.counters.miss_ratio() >= *opt.target_hit_ratio - 1e-12;
            if (r.latency) p99 = r.latency->p99_ms;
          } else {
            if (r.latency) p99 = r.latency->p99_ms;
            for (const auto& [label, fig] : r.variants)
              if (label == variant) p99 = fig.p99_ms;
            ok = p99 && *p99 <= *opt.target_p99_ms + 1e-12;
          }
          if (ok) {
            rec.size = r.size;
            rec.miss_ratio = r.counters.miss_ratio();
            rec.p99_ms = p99;
            break;
          }
        }
        set.per_policy.push_back(rec);
      }
    // An offline bound is "best" only when it is the only policy simulated.
    const bool only_oracles = std::all_of(set.per_policy.begin(), set.per_policy.end(),
                                          [](const Recommendation& r) { return r.offline_bound; });
    for (const auto& rec : set.per_policy) {
      if (!rec.size) continue;
      if (!only_oracles && rec.offline_bound) continue;
      if (!set.best || *rec.size < *set.best->size ||
          (*rec.size == *set.best->size && rec.miss_ratio < set.best->miss_ratio))
        set.best = rec;
    }
    if (policies.empty() && result.mrc && opt.target_hit_ratio) {
      // --policy none --mrc: the one-pass curve answers for LRU
      Recommendation rec;
      rec.policy = "lru";
      if (result.mrc->smallest_size_for_target) {
        rec.size = result.mrc->smallest_size_for_target;
        rec.miss_ratio = 1.0 - *opt.target_hit_ratio;
        for (const auto& p : result.mrc->points)
          if (p.size == *rec.size) rec.miss_ratio = p.miss_ratio;
        set.best = rec;
      }
      set.per_policy.push_back(rec);
    }
    set.reached = set.best.has_value();
    result.recommendation = std::move(set);
  }

  result.passes = passes;
  if (spool)  // first note, written once the number of passes is known
    result.notes.insert(result.notes.begin(),
                        fmt::format("stdin was copied to a temporary file ({}) for {} passes",
                                    format_bytes(double(spool->size())), passes));
  result.simulations = slots.size() + (opt.sample_check ? slots.size() : 0);
  result.seconds = seconds_since(t_start);
  result.requests_per_second = result.seconds > 0 ? double(result.trace.n_req_total) / result.seconds : 0;
  return result;
}

int exit_status(const CacheSimResult& r) {
  if (r.recommendation && !r.recommendation->reached) return 1;
  return 0;
}

Counters simulate_requests(const PolicySpec& policy, uint64_t capacity, const std::vector<Request>& requests) {
  auto sim = detail::make_simulator(policy, capacity, true);
  // Belady: next-access indices (1-based) computed here unless the caller gave some.
  std::vector<int64_t> next(requests.size(), kNoNextAccess);
  bool given = false;
  for (const auto& r : requests) given = given || r.next_access != kNoNextAccess;
  if (given) {
    for (size_t i = 0; i < requests.size(); ++i) next[i] = requests[i].next_access;
  } else {
    std::unordered_map<uint64_t, int64_t> last;
    for (size_t i = requests.size(); i-- > 0;) {
      auto it = last.find(requests[i].key);
      if (it != last.end()) next[i] = it->second;
      last[requests[i].key] = static_cast<int64_t>(i + 1);
    }
  }
  detail::Batch b;
  b.reserve(std::max<size_t>(requests.size(), 1));
  b.has_next = true;
  b.has_cost = false;
  for (const auto& r : requests) {
    b.key[b.n] = r.key;
    b.hash[b.n] = detail::hash_key(r.key);
    b.size[b.n] = r.size;
    b.cost[b.n] = r.cost_ms;
    b.next[b.n] = next[b.n];
    ++b.n;
  }
  sim->run(b);
  return sim->counters;
}

std::vector<Counters> lru_curve_requests(const std::vector<Request>& requests, const std::vector<uint64_t>& sizes, bool bytes) {
  detail::LruProfiler p(bytes, sizes);
  detail::Batch b;
  b.reserve(std::max<size_t>(requests.size(), 1));
  for (const auto& r : requests) {
    b.key[b.n] = r.key;
    b.hash[b.n] = detail::hash_key(r.key);
    b.size[b.n] = bytes ? r.size : 1;
    ++b.n;
  }
  p.run(b);
  return p.counters_at_queries(0);
}

}  // namespace lite::cache
