#pragma once
// One policy at one capacity over the whole trace: hit tokens and blocks, orphans at the end and, with a prefill
// model, each request's time to first token (FCFS over K instances by arrival time when instances > 0).
// Internal to the prefix mode.
#include <optional>
#include <vector>

#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/tiers.hpp"

namespace lite::cache::prefix {

struct PrefixRouteEntry;  // cluster_route.hpp
struct EngineEntry;       // engine.hpp

struct ReplaySetup {
  const BlockTrace* trace = nullptr;
  const PrefixPolicyEntry* policy = nullptr;
  uint64_t capacity_blocks = 0;
  const std::vector<uint32_t>* next_use = nullptr;
  std::optional<PrefillModel> prefill;
  uint32_t instances = 0;
  std::vector<Tier> tiers;  // --tiers: the policy's cache is the first (capacity_blocks is then their total)
  bool cluster = false;     // a cluster study over `instances`: local pools behind `route`, or the global pool
  const PrefixRouteEntry* route = nullptr;  // null: one global pool, requests to the least loaded
  const EngineEntry* engine = nullptr;      // engine mode (engine.hpp); null or ideal: the policy's replay
  double decode_ms = 0;                     // engine mode: per generated token
};

PrefixRow replay(const ReplaySetup& s);
// replay() with tiers (replay_tiers.cpp): per-tier hits, loads against recomputes.
PrefixRow replay_tiered(const ReplaySetup& s);
// replay() of a cluster (replay_cluster.cpp): `instances` pools of capacity/K behind `route`, or one pool.
PrefixRow replay_cluster(const ReplaySetup& s);
// replay() of an engine (replay_engine.cpp): arrivals, running requests' pinned blocks, waits.
PrefixRow replay_engine(const ReplaySetup& s);

// A row's policy and capacity before the replay, and what every replay fills after it: totals over the trace,
// the cache's end state, the TTFT statistics (sorts `ttft`).
PrefixRow start_row(const ReplaySetup& s);
void finish_row(PrefixRow& row, const BlockTrace& t, const BlockCache& cache, std::vector<double>& ttft);
// The same from the end state of any cache: blocks it holds, and its orphans.
void finish_row(PrefixRow& row, const BlockTrace& t, uint64_t occupied, uint64_t orphans, std::vector<double>& ttft);
// The cache setup of a replay (capacity, next uses, radix-cost's attention weight).
CacheSetup cache_setup(const ReplaySetup& s);

// Per block reference, the index of the next request that uses the same block (UINT32_MAX: none): what the
// offline reference reads.
std::vector<uint32_t> next_uses(const BlockTrace& t);

// Cached blocks with an ancestor that is not cached: cached(b) says whether trace block b is.
template <class Cached>
uint64_t count_orphans(const BlockTrace& t, Cached cached) {
  // A parent's id is always smaller than its child's (ids are given in prompt order), so one pass suffices.
  std::vector<uint8_t> reachable(t.blocks(), 0);
  uint64_t orphans = 0;
  for (uint32_t b = 0; b < t.blocks(); ++b) {
    if (!cached(b)) continue;
    const uint32_t p = t.parent[b];
    reachable[b] = p == kNoBlock || reachable[p];
    orphans += !reachable[b];
  }
  return orphans;
}
inline uint64_t count_orphans(const BlockTrace& t, const BlockCache& cache) {
  return count_orphans(t, [&cache](uint32_t b) { return cache.cached(b); });
}

// The time to first token of each request, in ms: the prefill of its uncached tokens (after waiting for one of
// `instances` prefill instances, FCFS by arrival, when instances > 0).
class TtftClock {
 public:
  TtftClock(const PrefillModel& model, uint32_t instances);
  // load_ms: the time to load the cached tokens from slower tiers, before the prefill.
  double serve(int64_t arrival_ms, uint64_t cached_tokens, uint64_t new_tokens, double load_ms = 0);

 private:
  PrefillModel model_;
  std::vector<double> free_at_;  // min-heap of the instances' next free times
};

// Each request's TTFT when the replay has a prefill model (ReplaySetup::prefill), else nothing: one clock and
// its samples, read back by finish_row.
class TtftLog {
 public:
  TtftLog(const std::optional<PrefillModel>& prefill, uint32_t instances, size_t requests);
  void serve(int64_t arrival_ms, uint64_t cached_tokens, uint64_t new_tokens, double load_ms = 0) {
    if (clock_) samples_.push_back(clock_->serve(arrival_ms, cached_tokens, new_tokens, load_ms));
  }
  std::vector<double>& samples() { return samples_; }

 private:
  std::optional<TtftClock> clock_;
  std::vector<double> samples_;
};

}  // namespace lite::cache::prefix
