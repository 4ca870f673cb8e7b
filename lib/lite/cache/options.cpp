// lite cache-sim's options as data, their rules by key and their resolution into a checked SimulationConfig
// (see options.hpp). The verb's entry point run() is run.cpp.
#include "lite/cache/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/cluster.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/route.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

using namespace option_rules;

constexpr double kMaxLatencyMs = 86400e3;  // a day

// The one field list of CacheSimOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void cache_sim_fields(Fields& f, O& o) {
  f.field("trace", o.trace)
      .field("format", o.format)
      .field("csv_columns", o.csv_columns)
      .field("has_header", o.has_header)
      .field("policies", o.policies)
      .field("sizes", o.sizes)
      .field("bytes", o.bytes)
      .field("mrc", o.mrc)
      .field("mrc_partitions", o.mrc_partitions)
      .field("sample_rate", o.sample_rate)
      .field("sample_objects", o.sample_objects)
      .field("sample_check", o.sample_check)
      .field("hit_latency_ms", o.hit_latency_ms)
      .field("miss_latency_ms", o.miss_latency_ms)
      .field("miss_latency_from", o.miss_latency_from)
      .field("target_hit_ratio", o.target_hit_ratio)
      .field("target_p99_ms", o.target_p99_ms)
      .field("threads", o.threads)
      .field("skip_bad_lines", o.skip_bad_lines)
      .field("plot", o.plot)
      .field("temp_dir", o.temp_dir)
      .field("results_dir", o.results_dir)
      .field("nodes", o.nodes)
      .field("route", o.route)
      .field("virtual_nodes", o.virtual_nodes)
      .field("max_node_load", o.max_node_load)
      .field("block_tokens", o.block_tokens)
      .field("kv_bytes_per_token", o.kv_bytes_per_token)
      .field("kv_layout", o.kv_layout)
      .field("kv_dtypes", o.kv_dtypes)
      .field("prefill_ms_per_token", o.prefill_ms_per_token)
      .field("prefill_cost", o.prefill_cost)
      .field("prefill_cost_from", o.prefill_cost_from)
      .field("instances", o.instances)
      .field("tiers", o.tiers)
      .field("target_ttft_p99_ms", o.target_ttft_p99_ms)
      .field("engine", o.engine);
}

void to_json(nlohmann::json& j, const CacheSimOptions& o) {
  OptionWriter w(j);
  cache_sim_fields(w, o);
}

void from_json(const nlohmann::json& j, CacheSimOptions& o) {
  OptionReader r(j);
  cache_sim_fields(r, o);
  r.finish();
}

SimulationConfig resolve(const CacheSimOptions& o) {
  if (o.trace.empty()) throw OptionError("trace", "is required", "give a trace file, or - for stdin");
  refuse_prefix_options(o);
  SimulationConfig c;
  c.trace = o.trace;
  c.format = parse_trace_format(o.format);
  if (!o.csv_columns.empty()) c.csv = parse_csv_columns(o.csv_columns);
  c.has_header = o.has_header;
  c.policies = parse_policies(o.policies.empty() ? std::string(kDefaultPolicy) : join(o.policies, ","));
  c.sizes = parse_sizes(o.sizes, o.bytes);
  c.bytes = o.bytes;
  c.mrc = o.mrc;
  if (o.mrc_partitions && *o.mrc_partitions == 0)
    throw OptionError("mrc_partitions", "must be at least 1 partition", "omit it for the exact curve, or give 1 to 256");
  c.mrc_partitions = o.mrc_partitions.value_or(0);
  c.sample_rate = o.sample_rate;
  if (o.sample_objects && *o.sample_objects == 0)
    throw OptionError("sample_objects", "must be at least 1 key", "omit it to simulate every key");
  c.sample_objects = o.sample_objects.value_or(0);
  c.sample_check = o.sample_check;
  c.hit_latency_ms = o.hit_latency_ms;
  c.miss_latency_ms = o.miss_latency_ms;
  for (const auto& path : o.miss_latency_from) c.variants.push_back(load_profile_variant(path));
  c.target_hit_ratio = o.target_hit_ratio;
  c.target_p99_ms = o.target_p99_ms;
  c.threads = o.threads;
  c.skip_bad_lines = o.skip_bad_lines;
  c.temp_dir = o.temp_dir;
  c.cluster.nodes = o.nodes;
  c.cluster.route = find_route(o.route).name;
  c.cluster.virtual_nodes = o.virtual_nodes;
  c.cluster.max_node_load = o.max_node_load;
  return c;
}

namespace {

// policies x sizes simulators, each with its fixed state: refused before any work when they would take more
// than kMaxSweepBytes, with the policy that costs most named (thousands of sizes x LHD's ~4 MB each).
void check_sweep_memory(const SimulationConfig& o) {
  const uint64_t n_sizes = o.sizes.empty() ? auto_size_fractions().size() : o.sizes.size();
  const uint64_t copies = o.sample_check ? 2 : 1;  // the sampled and the full simulator
  uint64_t per_size = 0, largest = 0;
  std::string largest_name;
  for (const auto& p : o.policies) {
    const uint64_t b = empty_simulator_bytes(p, o.bytes);
    per_size += b;
    if (b > largest) largest = b, largest_name = p.label();
  }
  const double total = double(per_size) * double(n_sizes) * double(copies);
  if (total <= double(kMaxSweepBytes)) return;
  const uint64_t fits = kMaxSweepBytes / std::max<uint64_t>(1, per_size * copies);
  throw OptionError("sizes",
                    fmt::format("{} sizes x {} polic{} need about {} before caching anything ({} alone {} per size), "
                                "more than the {} a sweep may take",
                                n_sizes, o.policies.size(), o.policies.size() == 1 ? "y" : "ies", format_bytes(total),
                                largest_name, format_bytes(double(largest)), format_bytes(double(kMaxSweepBytes))),
                    fmt::format("give at most {} sizes with these policies, fewer policies (drop {}), or {{mrc}} for "
                                "the exact LRU curve at every size in one pass",
                                fits, largest_name));
}

// --mrc-partitions: a bounded number of partitions of the whole key space, for the curve.
void check_mrc_partitions(const SimulationConfig& o) {
  if (o.mrc_partitions == 0) return;
  if (o.mrc_partitions > kMaxMrcPartitions)
    throw OptionError("mrc_partitions", fmt::format("{} is more than the {} partitions it takes", o.mrc_partitions,
                                                    kMaxMrcPartitions),
                      fmt::format("give 1 to {}", kMaxMrcPartitions));
  if (!o.mrc) throw OptionError("mrc_partitions", "partitions the {mrc} curve", "add {mrc}");
  if (o.sample_rate < 1 || o.sample_objects)
    throw OptionError("mrc_partitions", "partitions the whole key space, so it cannot be combined with sampling",
                      "drop {sample_rate}/{sample_objects}, or {mrc_partitions}");
}

}  // namespace

void check_resolved(const SimulationConfig& o) {
  finite("sample_rate", o.sample_rate);
  if (o.target_hit_ratio) finite("target_hit_ratio", *o.target_hit_ratio);
  if (o.target_p99_ms) finite("target_p99_ms", *o.target_p99_ms);
  if (!(o.sample_rate > 0 && o.sample_rate <= 1))
    throw OptionError("sample_rate", fmt::format("{} is outside (0, 1]", o.sample_rate), "e.g. 0.01 keeps 1% of the keys");
  if (o.sample_objects && o.sample_rate < 1)
    throw OptionError("sample_objects", "fixed-size sampling cannot be combined with {sample_rate}", "give one of the two");
  if (o.sample_check && o.sample_rate >= 1 && !o.sample_objects)
    throw OptionError("sample_check", "compares a sampled run with the full trace",
                      "add {sample_rate} R or {sample_objects} N");
  // A latency past a day (2^64 ms was taken) is a mistyped unit, not a cache study.
  in_range("hit_latency_ms", o.hit_latency_ms, 0, kMaxLatencyMs, "a latency in milliseconds");
  if (o.miss_latency_ms) in_range("miss_latency_ms", *o.miss_latency_ms, 0, kMaxLatencyMs, "a latency in milliseconds");
  if (o.miss_latency_ms && !o.variants.empty())
    throw OptionError("miss_latency_ms", "cannot be combined with {miss_latency_from}", "give one miss-latency source");
  if (o.target_hit_ratio && !(*o.target_hit_ratio > 0 && *o.target_hit_ratio <= 1))
    throw OptionError("target_hit_ratio", fmt::format("{} is outside (0, 1]", *o.target_hit_ratio),
                      "give a hit ratio, e.g. 0.8");
  if (o.target_p99_ms && !(*o.target_p99_ms > 0 && *o.target_p99_ms <= kMaxLatencyMs))
    throw OptionError("target_p99_ms", fmt::format("must be above 0 ms and at most a day, got {}", *o.target_p99_ms),
                      "give the p99 latency to reach in ms");
  if (o.target_hit_ratio && o.target_p99_ms)
    throw OptionError("target_hit_ratio", "cannot be combined with {target_p99_ms}", "give one target");
  thread_count("threads", o.threads);
  if (o.policies.empty() && !o.mrc)
    throw OptionError("policies", "no policy to simulate", "give a policy, or {mrc} for the LRU curve alone");
  if (!o.bytes)
    for (const auto& s : o.sizes)
      if (s.absolute && s.text.find_first_of("kKmMgGtTbB") != std::string::npos)
        throw OptionError("sizes", fmt::format("'{}' has a byte unit but the simulation counts objects", s.text),
                          "add {bytes}");
  check_mrc_partitions(o);
  check_sweep_memory(o);
  check_cluster_options(o);
}

namespace {
// Every path cache-sim reads or writes, checked at once (core/file_roles.hpp): the plot and the results folder
// are neither an input, nor under one, nor each other.
void check_paths(const CacheSimOptions& o) {
  check_results_dir(o.results_dir, o.trace);  // its rule of its own: a trace it can hash
  FileRoles roles;
  roles.reads("{trace}", o.trace);
  for (const auto& p : o.miss_latency_from) roles.reads("{miss_latency_from}", p);
  if (!o.prefill_cost_from.empty()) roles.reads("{prefill_cost_from}", o.prefill_cost_from);
  if (!o.plot.empty()) roles.writes("plot", o.plot);
  if (!o.results_dir.empty()) roles.writes_folder("results_dir", o.results_dir);
  roles.check();
}
}  // namespace

void validate(const CacheSimOptions& o) {
  if (is_prefix_trace(o)) {
    prefix::check_config(prefix_config(o));
    check_paths(o);
    return;
  }
  check_resolved(resolve(o));
  check_paths(o);
}

SimulationConfig prepare(const CacheSimOptions& o) {
  if (is_prefix_trace(o))
    throw OptionError("trace", "is a prefix (LLM request) trace, which one process studies",
                      "run lite cache-sim on it without mpirun");
  SimulationConfig config = resolve(o);
  check_resolved(config);
  check_paths(o);
  return config;
}

}  // namespace lite::cache
