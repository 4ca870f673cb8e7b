// replay_cluster(): Mooncake's §5.3 comparison (replay.hpp). K instances with a local pool of capacity/K blocks
// each, a router sending each request to one of them (its hit: the longest prefix that instance has cached), or
// one global pool of the whole capacity that every instance reads (the request then goes to the least loaded).
// Per instance: requests, prompt and hit tokens; with a prefill model each instance serves its requests FCFS.
#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache::prefix {

namespace {

struct Cluster {
  std::vector<std::unique_ptr<BlockCache>> caches;  // K local pools, or the one global pool
  std::vector<uint64_t> prefill_tokens;             // per instance
  std::vector<TtftClock> clocks;                    // per instance; one clock of K for the global pool
};

Cluster make_cluster(const ReplaySetup& s) {
  Cluster c;
  const uint32_t k = s.instances;
  CacheSetup setup = cache_setup(s);
  if (s.route) setup.capacity_blocks = s.capacity_blocks / k;
  for (uint32_t i = 0; i < (s.route ? k : 1); ++i) c.caches.push_back(s.policy->make(setup));
  c.prefill_tokens.assign(k, 0);
  if (s.prefill)
    for (uint32_t i = 0; i < (s.route ? k : 1); ++i) c.clocks.emplace_back(*s.prefill, s.route ? 1 : k);
  return c;
}

}  // namespace

PrefixRow replay_cluster(const ReplaySetup& s) {
  const auto start = Clock::now();
  const BlockTrace& t = *s.trace;
  if (s.instances < 2) throw InternalError("replay_cluster: fewer than 2 instances");
  Cluster c = make_cluster(s);
  const ClusterView view{&t, &c.caches, &c.prefill_tokens};
  PrefixRow row = start_row(s);
  row.route = s.route ? s.route->name : "global";
  if (s.route) row.capacity_blocks = s.capacity_blocks / s.instances * s.instances;
  row.capacity_tokens = row.capacity_blocks * t.block_tokens;
  row.instances.assign(s.instances, {});
  std::vector<double> ttft;
  for (size_t r = 0; r < t.requests(); ++r) {
    const uint32_t i = s.route ? s.route->pick(view, r) : least_loaded(view);
    const uint32_t k = c.caches[s.route ? i : 0]->serve(r);
    const uint64_t hit = t.hit_tokens(r, k);
    row.hit_tokens += hit;
    row.hit_blocks += k;
    InstanceLoad& load = row.instances[i];
    ++load.requests;
    load.prompt_tokens += t.input_tokens[r];
    load.hit_tokens += hit;
    c.prefill_tokens[i] += t.input_tokens[r] - hit;
    if (!c.clocks.empty())
      ttft.push_back(c.clocks[s.route ? i : 0].serve(t.arrival_ms[r], hit, t.input_tokens[r] - hit));
    if ((r & 8191) == 8191) throw_if_interrupted();
  }
  finish_row(row, t, *c.caches.front(), ttft);
  if (s.route) {  // end state over every pool
    row.cached_blocks = row.orphan_blocks = 0;
    for (const auto& cache : c.caches) {
      row.cached_blocks += cache->occupied();
      row.orphan_blocks += count_orphans(t, *cache);
    }
  }
  row.seconds = seconds_since(start);
  return row;
}

}  // namespace lite::cache::prefix
