// replay(): one policy x capacity over the trace (replay.hpp), and the facts it reads: next uses, orphans, TTFT.
#include "lite/cache/prefix/replay.hpp"
#include "lite/cache/prefix/engine.hpp"

#include <algorithm>
#include <functional>

#include "lite/core/clock.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"

namespace lite::cache::prefix {

std::vector<uint32_t> next_uses(const BlockTrace& t) {
  std::vector<uint32_t> next(t.refs.size(), UINT32_MAX);
  std::vector<uint32_t> seen(t.blocks(), UINT32_MAX);  // the request that used the block next, scanning back
  for (size_t r = t.requests(); r-- > 0;) {
    for (uint64_t p = t.first_ref[r]; p < t.first_ref[r + 1]; ++p) {
      next[p] = seen[t.refs[p]];
      seen[t.refs[p]] = uint32_t(r);
    }
  }
  return next;
}

TtftClock::TtftClock(const PrefillModel& model, uint32_t instances) : model_(model), free_at_(instances, 0.0) {}

double TtftClock::serve(int64_t arrival_ms, uint64_t cached_tokens, uint64_t new_tokens, double load_ms) {
  const double service = load_ms + model_.ms(cached_tokens, new_tokens);
  if (free_at_.empty()) return service;
  std::pop_heap(free_at_.begin(), free_at_.end(), std::greater<>());
  const double start = std::max(double(arrival_ms), free_at_.back());
  free_at_.back() = start + service;
  std::push_heap(free_at_.begin(), free_at_.end(), std::greater<>());
  return start + service - double(arrival_ms);
}

TtftLog::TtftLog(const std::optional<PrefillModel>& prefill, uint32_t instances, size_t requests) {
  if (!prefill) return;
  clock_.emplace(*prefill, instances);
  samples_.reserve(requests);
}

namespace {

void fill_ttft(PrefixRow& row, std::vector<double>& ttft) {
  if (ttft.empty()) return;
  double sum = 0;
  for (double v : ttft) sum += v;
  row.ttft_mean_ms = sum / double(ttft.size());
  std::sort(ttft.begin(), ttft.end());
  row.ttft_p50_ms = stats::percentile_sorted(ttft, 0.50);
  row.ttft_p99_ms = stats::percentile_sorted(ttft, 0.99);
}

}  // namespace

CacheSetup cache_setup(const ReplaySetup& s) {
  CacheSetup setup;
  setup.trace = s.trace;
  setup.capacity_blocks = s.capacity_blocks;
  setup.next_use = s.next_use;
  if (s.prefill && s.prefill->b_ms_per_token > 0)
    setup.attention_per_token = s.prefill->c_ms_per_token2 / s.prefill->b_ms_per_token;
  return setup;
}

PrefixRow start_row(const ReplaySetup& s) {
  PrefixRow row;
  row.policy = s.engine && s.engine->make ? s.engine->name : s.policy->name;
  row.capacity_blocks = s.capacity_blocks;
  row.capacity_tokens = s.capacity_blocks * s.trace->block_tokens;
  return row;
}

void finish_row(PrefixRow& row, const BlockTrace& t, uint64_t occupied, uint64_t orphans, std::vector<double>& ttft) {
  row.requests = t.requests();
  row.block_refs = t.refs.size();
  for (uint32_t n : t.input_tokens) row.prompt_tokens += n;
  row.cached_blocks = occupied;
  row.orphan_blocks = orphans;
  fill_ttft(row, ttft);
}

void finish_row(PrefixRow& row, const BlockTrace& t, const BlockCache& cache, std::vector<double>& ttft) {
  finish_row(row, t, cache.occupied(), count_orphans(t, cache), ttft);
}

PrefixRow replay(const ReplaySetup& s) {
  if (!s.tiers.empty()) return replay_tiered(s);
  if (s.cluster) return replay_cluster(s);
  if (s.engine && s.engine->make) return replay_engine(s);
  const auto start = Clock::now();
  const BlockTrace& t = *s.trace;
  std::unique_ptr<BlockCache> cache = s.policy->make(cache_setup(s));
  PrefixRow row = start_row(s);
  TtftLog ttft(s.prefill, s.instances, t.requests());
  for (size_t r = 0; r < t.requests(); ++r) {
    const uint32_t k = cache->serve(r);
    const uint64_t hit = t.hit_tokens(r, k);
    row.hit_tokens += hit;
    row.hit_blocks += k;
    ttft.serve(t.arrival_ms[r], hit, t.input_tokens[r] - hit);
    if ((r & 8191) == 8191) throw_if_interrupted();
  }
  finish_row(row, t, *cache, ttft.samples());
  row.seconds = seconds_since(start);
  return row;
}

}  // namespace lite::cache::prefix
