// run_study(): read the trace once, then every policy x capacity x KV format as independent jobs over threads,
// the unbounded reuse, the one-pass curve and the recommendation (prefix_run.hpp).
#include "lite/cache/prefix/prefix_run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "lite/cache/prefix/capacity.hpp"
#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/prefix_mrc.hpp"
#include "lite/cache/prefix/prefix_store.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/cache/prefix/tiers.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

namespace {

std::vector<std::string> policy_list(const PrefixConfig& c) {
  if (c.policies.empty()) return {"lru", "radix-lru"};
  std::vector<std::string> names;
  for (const auto& p : c.policies) {
    if (p == "all") return prefix_policy_names();
    names.push_back(find_prefix_policy(p).name);
  }
  return names;
}

void check_prefill(const PrefixConfig& c) {
  if (c.prefill) {
    const PrefillModel& m = *c.prefill;
    for (double v : {m.a_ms, m.b_ms_per_token, m.c_ms_per_token2, m.d_ms_per_cached_token})
      if (!(v >= 0) || !std::isfinite(v))
        throw OptionError("prefill", fmt::format("coefficient {} is not a finite number of ms, 0 or more", v),
                          "e.g. --prefill-ms-per-token 0.05, or --prefill-cost a=20,b=0.05,c=2e-6,d=0.001");
  }
  if (c.instances && !c.prefill && c.routes.empty())
    throw OptionError("instances", "queues prefills, which needs their time",
                      "add {prefill_ms_per_token} or {prefill_cost}, or {route} for a cluster study");
  if (c.target_ttft_p99_ms && !c.prefill)
    throw OptionError("target_ttft_p99_ms", "needs each request's time to first token",
                      "add {prefill_ms_per_token} or {prefill_cost}");
  if (c.target_ttft_p99_ms && !(*c.target_ttft_p99_ms > 0 && std::isfinite(*c.target_ttft_p99_ms)))
    throw OptionError("target_ttft_p99_ms", fmt::format("must be above 0 ms, got {}", *c.target_ttft_p99_ms),
                      "give the p99 time to first token to reach, in ms");
}

// --tiers gives the capacities; what each tier's capacity and bandwidth need.
void check_tiers(const PrefixConfig& c, size_t kv_formats) {
  if (c.tiers.empty()) return;
  const auto tiers = parse_tiers(c.tiers);
  if (tiers.size() > 8)
    throw OptionError("tiers", fmt::format("names {} tiers; at most 8", tiers.size()), "e.g. hbm, dram, ssd, remote");
  if (trim(c.sizes) != "auto")
    throw OptionError("sizes", "cannot be combined with {tiers}, which gives the capacities", "drop one of the two");
  if (c.mrc) throw OptionError("mrc", "is the one-tier LRU curve; it cannot be combined with {tiers}", "drop one");
  for (const auto& t : tiers) {
    const bool bytes = t.capacity.unit == CapacitySpec::Unit::bytes;
    if ((bytes || t.bytes_per_second) && kv_formats == 0)
      throw OptionError("tiers", fmt::format("tier {}: {} needs the KV bytes a token takes", t.name,
                                             bytes ? "a capacity in bytes" : "a bandwidth"),
                        "add {kv_layout} or {kv_bytes_per_token}");
    if (!bytes && kv_formats > 1)
      throw OptionError("kv_dtypes", fmt::format("compares KV formats at equal bytes, but tier {} is not in bytes", t.name),
                        "give the tiers' capacities in bytes, e.g. hbm=16GiB");
  }
}

// --route: the cluster study of --instances local pools against one global pool.
void check_cluster(const PrefixConfig& c) {
  if (c.routes.empty()) return;
  parse_prefix_routes(c.routes);
  if (c.instances < 2)
    throw OptionError("route", "compares local pools on several instances", "add {instances} K, 2 or more");
  if (!c.tiers.empty()) throw OptionError("route", "cannot be combined with {tiers}", "study one at a time");
}

// --engine: the engine's own eviction and timing replace what the ideal model's options choose.
void check_engine(const PrefixConfig& c) {
  if (!parse_engine(c.engine).engine->make) return;
  const std::string engine = trim(c.engine.substr(0, c.engine.find(':')));
  const auto refuse = [&](const char* key, const char* what) {
    throw OptionError(key, fmt::format("{} in the ideal model; {{engine}} {} evicts and times as the engine does",
                                       what, engine), "drop one of the two");
  };
  if (!c.policies.empty()) refuse("policies", "picks the eviction policy");
  if (!c.tiers.empty()) refuse("tiers", "stacks tiers");
  if (!c.routes.empty()) refuse("route", "routes a cluster");
  if (c.mrc) refuse("mrc", "is the LRU curve");
}

}  // namespace

void check_config(const PrefixConfig& c) {
  policy_list(c);
  const auto specs = parse_capacities(c.sizes);
  const auto formats = resolve_kv_formats(c);
  if (formats.size() > 1)
    for (const auto& s : specs)
      if (s.unit != CapacitySpec::Unit::bytes && !s.text.empty())
        throw OptionError("kv_dtypes", fmt::format("compares KV formats at equal bytes, but '{}' is not in bytes", s.text),
                          "give {sizes} in bytes, e.g. 16GiB,64GiB");
  if (c.block_tokens > (1u << 20))
    throw OptionError("block_tokens", fmt::format("{} is more than 1,048,576 tokens a block", c.block_tokens),
                      "vLLM uses 16, Mooncake's trace 512");
  check_prefill(c);
  check_tiers(c, formats.size());
  check_cluster(c);
  check_engine(c);
  if (c.target_hit_ratio && !(*c.target_hit_ratio > 0 && *c.target_hit_ratio <= 1))
    throw OptionError("target_hit_ratio", fmt::format("{} is outside (0, 1]", *c.target_hit_ratio),
                      "give a token hit ratio, e.g. 0.35");
  if (c.target_hit_ratio && c.target_ttft_p99_ms)
    throw OptionError("target_hit_ratio", "cannot be combined with {target_ttft_p99_ms}", "give one target");
  option_rules::thread_count("threads", c.threads);
}

namespace {

UnboundedReuse unbounded_reuse(const BlockTrace& t) {
  std::vector<uint8_t> seen(t.blocks(), 0);
  uint64_t hit_tokens = 0, hit_blocks = 0, prompt = 0;
  double per_request = 0;
  for (size_t r = 0; r < t.requests(); ++r) {
    const uint32_t* b = t.blocks_of(r);
    const uint32_t k = cached_prefix(t, r, [&](uint32_t x) { return seen[x] != 0; });
    for (uint32_t j = 0; j < t.block_count(r); ++j) seen[b[j]] = 1;
    const uint64_t hit = t.hit_tokens(r, k);
    hit_tokens += hit;
    hit_blocks += k;
    prompt += t.input_tokens[r];
    per_request += t.input_tokens[r] ? double(hit) / double(t.input_tokens[r]) : 0;
  }
  UnboundedReuse u;
  u.token_hit_ratio = prompt ? double(hit_tokens) / double(prompt) : 0;
  u.block_hit_ratio = t.refs.empty() ? 0 : double(hit_blocks) / double(t.refs.size());
  u.mean_request_hit_ratio = t.requests() ? per_request / double(t.requests()) : 0;
  return u;
}

struct Job {
  ReplaySetup setup;
  const KvFormat* kv = nullptr;
  std::optional<double> bytes;
};

// One job per capacity of --sizes, or the one capacity --tiers gives.
void add_jobs(std::vector<Job>& jobs, const Job& base, const PrefixConfig& c, const PrefixResult& result) {
  if (!c.tiers.empty()) {
    Job j = base;
    j.setup.tiers = resolve_tiers(parse_tiers(c.tiers), result.trace, j.kv);
    double bytes = 0;
    for (const Tier& t : j.setup.tiers) {
      j.setup.capacity_blocks += t.capacity_blocks;
      bytes += t.capacity_bytes.value_or(0);
    }
    if (j.kv) j.bytes = bytes;
    jobs.push_back(std::move(j));
    return;
  }
  // auto sizes are shares of the trace's blocks at the first format: bytes every format is compared at
  for (const Capacity& cap : resolve_capacities(parse_capacities(c.sizes), result.trace, base.kv)) {
    Job j = base;
    j.setup.capacity_blocks = cap.blocks;
    j.bytes = cap.bytes;
    if (c.routes.empty()) {
      jobs.push_back(std::move(j));
      continue;
    }
    if (cap.blocks < c.instances)
      throw OptionError("instances", fmt::format("{} local pools of '{}' ({} blocks) would hold less than a block each",
                                                 c.instances, cap.text, cap.blocks), "give larger {sizes}");
    j.setup.cluster = true;
    jobs.push_back(j);  // the global pool
    for (const PrefixRouteEntry* route : parse_prefix_routes(c.routes)) {
      j.setup.route = route;
      jobs.push_back(j);
    }
  }
}

std::vector<Job> plan_jobs(const PrefixConfig& c, const BlockTrace& t, const PrefixResult& result,
                           const std::vector<uint32_t>* next_use) {
  std::vector<const KvFormat*> formats;
  for (const auto& f : result.kv_formats) formats.push_back(&f);
  if (formats.empty()) formats.push_back(nullptr);
  std::vector<Job> jobs;
  const EngineSpec engine = parse_engine(c.engine);
  // an engine evicts its own way: one pass of jobs, with no policy
  const std::vector<std::string> names = engine.engine->make ? std::vector<std::string>{""} : policy_list(c);
  for (const auto& name : names) {
    for (const KvFormat* kv : formats) {
      Job base;
      base.setup = {&t, name.empty() ? nullptr : &find_prefix_policy(name), 0, next_use, c.prefill, c.instances, {},
                    false, nullptr, engine.engine, engine.decode_ms};
      base.kv = kv;
      add_jobs(jobs, base, c, result);
    }
  }
  return jobs;
}

// What a row takes from its job rather than its replay: the KV format's name and the capacity in bytes.
void stamp(PrefixRow& row, const Job& job) {
  if (job.kv) row.kv_dtype = job.kv->dtype;
  row.capacity_bytes = job.bytes;
}

// This process's share of the jobs (every job when it is alone) less those results_dir holds, whose rows it
// takes into rows[i] (reused[i] = 1) as a replay would leave them; the jobs left to replay.
std::vector<size_t> jobs_to_replay(const std::vector<Job>& jobs, const StudyShare& share, const RowStore* store,
                                   std::vector<PrefixRow>& rows, std::vector<uint8_t>& reused) {
  rows.assign(jobs.size(), PrefixRow{});
  reused.assign(jobs.size(), 0);
  std::vector<size_t> todo;
  for (size_t i = size_t(share.rank); i < jobs.size(); i += size_t(share.size)) {
    std::optional<PrefixRow> found = store ? store->find(jobs[i].setup, jobs[i].kv) : std::nullopt;
    if (!found) {
      todo.push_back(i);
      continue;
    }
    rows[i] = std::move(*found);
    stamp(rows[i], jobs[i]);
    reused[i] = 1;
  }
  return todo;
}

// Replays the jobs `todo` names into rows[i] over `threads`, writing each row to the store as it finishes (the
// lookups of jobs_to_replay, one thread, hashed the trace first: the store's one lazily computed field).
void run_jobs(const std::vector<Job>& jobs, const std::vector<size_t>& todo, std::vector<PrefixRow>& rows,
              int threads, const RowStore* store, const StudyShare& share, Progress& progress) {
  std::atomic<size_t> next{0};
  std::mutex progress_lock;
  std::exception_ptr failure;
  progress.begin("replaying the prefix trace", todo.size());
  auto work = [&] {
    for (size_t k; (k = next++) < todo.size();) {
      const size_t i = todo[k];
      try {
        rows[i] = replay(jobs[i].setup);
        stamp(rows[i], jobs[i]);
        if (store) store->put(jobs[i].setup, jobs[i].kv, rows[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(progress_lock);
        if (!failure) failure = std::current_exception();
        next = todo.size();
        return;
      }
      std::lock_guard<std::mutex> lock(progress_lock);
      if (store && share.on_stored) share.on_stored(rows[i]);
      progress.advance();
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  progress.end();
  if (failure) std::rethrow_exception(failure);
}

bool needs_next_use(const std::vector<Job>& jobs, const std::vector<size_t>& todo) {
  return std::any_of(todo.begin(), todo.end(), [&](size_t i) {
    return jobs[i].setup.policy && jobs[i].setup.policy->needs_next_use;
  });
}

}  // namespace

PrefixResult run_study(const PrefixConfig& c, Progress& progress, const StudyShare& share) {
  check_config(c);
  PrefixResult result;
  auto start = Clock::now();
  BlockTraceOptions to;
  to.path = c.trace;
  to.block_tokens = c.block_tokens;
  to.skip_bad_lines = c.skip_bad_lines;
  if (!c.bad_line_fix.empty()) to.bad_line_fix = c.bad_line_fix;
  if (!detect_prefix_format(c.trace, c.format, to.format)) throw InternalError("run_study: not a prefix trace");
  const BlockTrace trace = read_block_trace(to, result.trace);
  result.read_seconds = seconds_since(start);
  start = Clock::now();
  result.kv_formats = resolve_kv_formats(c);
  result.prefill = c.prefill;
  result.prefill_source = c.prefill_source;
  result.instances = c.instances;
  result.engine = parse_engine(c.engine).engine->name;
  result.unbounded = unbounded_reuse(trace);
  std::vector<uint32_t> next_use;  // filled below, when a job left to replay reads the future
  std::vector<Job> jobs = plan_jobs(c, trace, result, &next_use);
  std::optional<RowStore> store;
  if (!c.results_dir.empty()) store.emplace(c, result.trace);
  std::vector<uint8_t> reused;
  const std::vector<size_t> todo = jobs_to_replay(jobs, share, store ? &*store : nullptr, result.rows, reused);
  if (needs_next_use(jobs, todo)) next_use = next_uses(trace);
  result.threads = c.threads > 0 ? c.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  result.threads = int(std::min<size_t>(size_t(result.threads), std::max<size_t>(todo.size(), 1)));
  run_jobs(jobs, todo, result.rows, result.threads, store ? &*store : nullptr, share, progress);
  if (share.join && !share.join(result.rows, reused)) return result;
  result.reused_records = size_t(std::count(reused.begin(), reused.end(), uint8_t(1)));
  if (c.mrc) {
    std::vector<uint64_t> at;
    for (const auto& row : result.rows) at.push_back(row.capacity_blocks);
    result.curve = tail_first_lru_curve(trace, at, 64);
  }
  result.recommendation = recommend(c, result.rows);
  result.simulate_seconds = seconds_since(start);
  return result;
}

}  // namespace lite::cache::prefix
