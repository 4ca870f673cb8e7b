#pragma once
// The trace held in memory, and what lite_cache_bench --replay times over it (scripts/bench/cache_sim):
// each policy's simulator alone (no reading, parsing or hashing in the timed loop), and the memory-bound
// probe, one dependent random access per request into a table the size of the trace's distinct keys.
#include <cstdint>
#include <string>
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::bench {

struct InMemoryTrace {
  std::vector<detail::Batch> batches;  // kBatch-sized, keys hashed as the engine hashes them
  uint64_t n_req = 0;
  uint64_t distinct_keys = 0;
  double load_seconds = 0;  // reading, parsing and hashing the whole trace once
};
InMemoryTrace load_trace(const std::string& path, const std::string& format, bool bytes);

struct ProbeResult {
  double dependent_ns = 0;    // per request: the slot read the next request's index depends on (the bound)
  double independent_ns = 0;  // per request: the same reads with no dependency (the CPU overlaps them)
  uint64_t table_bytes = 0;
  uint64_t checksum = 0;  // keeps the reads from being optimized away
};
ProbeResult probe_memory_bound(const InMemoryTrace& trace);

struct SketchProbe {
  double add_ns = 0;  // per request: one add of its key to the sketch (its k counters), prefetched ahead
  int hashes = 0;     // k: counters per add
  uint64_t counter_bytes = 0;
};
// W-TinyLFU's floor: the frequency sketch it sizes for `capacity` (libCacheSim's sizing), one add per
// request, prefetched as its replay loop does. Nearly every W-TinyLFU request adds its key (a miss on
// insertion, a main-cache hit), so no exact W-TinyLFU can run faster than this.
SketchProbe probe_sketch(const InMemoryTrace& trace, uint64_t capacity);

struct ReplayResult {
  std::string policy;
  double ns_per_request = 0;
  uint64_t n_miss = 0;
};
// Builds the policy's simulator for `capacity` and times it over the whole trace.
ReplayResult replay(const InMemoryTrace& trace, const PolicySpec& spec, uint64_t capacity, bool bytes);

}  // namespace lite::cache::bench
