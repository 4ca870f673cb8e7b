// replay_tiered(): one policy over KV tiers (replay.hpp). A request's cached prefix may span tiers; the leading
// blocks worth loading count as hits of the tier that held them, the rest of the prefix as recomputed, and the
// load time goes into the time to first token.
#include "lite/cache/prefix/replay.hpp"
#include "lite/cache/prefix/tiered_cache.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache::prefix {

namespace {

std::vector<TierHits> tier_rows(const std::vector<Tier>& tiers) {
  std::vector<TierHits> rows;
  for (const Tier& t : tiers) rows.push_back({t.name, t.capacity_blocks, t.capacity_bytes, t.bytes_per_second, 0, 0});
  return rows;
}

}  // namespace

PrefixRow replay_tiered(const ReplaySetup& s) {
  const auto start = Clock::now();
  const BlockTrace& t = *s.trace;
  TieredCache cache(*s.policy, cache_setup(s), s.tiers);
  PrefixRow row = start_row(s);
  row.tiers = tier_rows(s.tiers);
  TtftLog ttft(s.prefill, s.instances, t.requests());
  for (size_t r = 0; r < t.requests(); ++r) {
    const uint32_t k = cache.serve(r);
    const PrefixLoad load = choose_prefix_load(t, r, cache.prefix_tiers(), s.tiers, s.prefill);
    for (uint32_t i = 0; i < load.blocks; ++i) {
      TierHits& tier = row.tiers[cache.prefix_tiers()[i]];
      tier.hit_tokens += t.hit_tokens(r, i + 1) - t.hit_tokens(r, i);
      ++tier.hit_blocks;
    }
    const uint64_t hit = t.hit_tokens(r, load.blocks);
    row.hit_tokens += hit;
    row.hit_blocks += load.blocks;
    row.recomputed_tokens += t.hit_tokens(r, k) - hit;
    ttft.serve(t.arrival_ms[r], hit, t.input_tokens[r] - hit, load.load_ms);
    if ((r & 8191) == 8191) throw_if_interrupted();
  }
  finish_row(row, t, cache, ttft.samples());
  row.seconds = seconds_since(start);
  return row;
}

}  // namespace lite::cache::prefix
