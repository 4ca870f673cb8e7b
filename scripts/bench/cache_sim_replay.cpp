// The trace in memory, the memory-bound probe and the in-memory replay of lite_cache_bench --replay.
#include "cache_sim_replay.hpp"

#include <chrono>

#include "lite/cache/engine_internal.hpp"
#include "lite/cache/frequency_sketch_internal.hpp"
#include "lite/cache/trace_internal.hpp"

namespace lite::cache::bench {
namespace {

using detail::Batch;

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct KeyOnly {
  uint64_t key = 0;
};

}  // namespace

InMemoryTrace load_trace(const std::string& path, const std::string& format, bool bytes) {
  detail::ReaderConfig rc;
  rc.path = path;
  rc.format = parse_trace_format(format);
  rc.bytes = bytes;
  const auto t0 = std::chrono::steady_clock::now();
  auto reader = detail::open_trace(rc);
  InMemoryTrace t;
  while (true) {
    Batch b;
    b.reserve(detail::kBatch);
    b.has_cost = reader->has_cost();
    if (!reader->fill(b) || b.n == 0) break;
    for (size_t i = 0; i < b.n; ++i) b.hash[i] = detail::hash_key(b.key[i]);
    t.n_req += b.n;
    t.batches.push_back(std::move(b));
  }
  t.load_seconds = seconds_between(t0, std::chrono::steady_clock::now());
  detail::ObjectTable<KeyOnly> seen(1 << 20);  // only to count the distinct keys, after the timing
  for (const Batch& b : t.batches)
    for (size_t i = 0; i < b.n; ++i)
      if (seen.find(b.key[i], b.hash[i]) == detail::kNil) seen.insert(b.key[i], b.hash[i]);
  t.distinct_keys = seen.size();
  return t;
}

ProbeResult probe_memory_bound(const InMemoryTrace& t) {
  // One 8-byte slot per distinct key (rounded up to a power of two, like lite's own tables), on huge
  // pages like them. The slots hold zeros the compiler cannot see: each read's value is folded into the
  // next index, so every request waits for the one before it, as a simulator's lookup waits for its slot.
  size_t slots = 1;
  while (slots < t.distinct_keys) slots <<= 1;
  volatile uint64_t zero = 0;
  detail::BigVector<uint64_t> table(slots, uint64_t(zero));
  const uint64_t mask = slots - 1;
  ProbeResult r;
  r.table_bytes = slots * sizeof(uint64_t);
  uint64_t v = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (const Batch& b : t.batches) {
    const uint64_t* h = b.hash.data();
    for (size_t i = 0; i < b.n; ++i) v = table[(h[i] ^ v) & mask];
  }
  auto t1 = std::chrono::steady_clock::now();
  uint64_t sum = 0;
  for (const Batch& b : t.batches) {
    const uint64_t* h = b.hash.data();
    for (size_t i = 0; i < b.n; ++i) sum += table[h[i] & mask];
  }
  auto t2 = std::chrono::steady_clock::now();
  const double n = double(t.n_req > 0 ? t.n_req : 1);
  r.dependent_ns = seconds_between(t0, t1) * 1e9 / n;
  r.independent_ns = seconds_between(t1, t2) * 1e9 / n;
  r.checksum = v + sum;
  return r;
}

SketchProbe probe_sketch(const InMemoryTrace& t, uint64_t capacity) {
  // W-TinyLFU's main cache: the capacity less the 1% window (policy_wtinylfu.cpp, window=0.01).
  const auto window = static_cast<int64_t>(double(capacity) * 0.01);
  detail::FrequencySketch sketch(static_cast<int64_t>(capacity) - window, 0.001);
  constexpr size_t kAhead = 16;  // as the replay loop prefetches a request's counters
  const auto t0 = std::chrono::steady_clock::now();
  for (const Batch& b : t.batches) {
    const uint64_t* k = b.key.data();
    for (size_t i = 0; i < b.n; ++i) {
      if (i + kAhead < b.n) sketch.prefetch(k[i + kAhead]);
      sketch.add(k[i]);
    }
  }
  const double s = seconds_between(t0, std::chrono::steady_clock::now());
  return {s * 1e9 / double(t.n_req > 0 ? t.n_req : 1), sketch.hashes(), uint64_t(sketch.counters()) * sizeof(uint32_t)};
}

ReplayResult replay(const InMemoryTrace& t, const PolicySpec& spec, uint64_t capacity, bool bytes) {
  auto sim = detail::make_simulator(spec, capacity, bytes);
  const auto t0 = std::chrono::steady_clock::now();
  for (const Batch& b : t.batches) sim->run(b);
  const double s = seconds_between(t0, std::chrono::steady_clock::now());
  return {spec.label(), s * 1e9 / double(t.n_req > 0 ? t.n_req : 1), sim->counters.n_miss};
}

}  // namespace lite::cache::bench
