// lite cache-sim: flags bound straight onto lite::cache::CacheSimOptions -> validate -> run -> report.
// Everything else (parsing of specs, simulation, report, plot) lives in lib/lite/cache.
// --format is the trace format here; the printer is --output-format, as everywhere.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cache_sim_backend.hpp"
#include "command.hpp"
#include "config_flags.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "number_flags.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/policies.hpp"
#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/route.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {

namespace {

CacheSimBackend& backend() {
  static CacheSimBackend b = [](const cache::CacheSimOptions& o, Progress& progress) {
    cache::validate(o);
    return SweepOutcome{cache::run(o, progress), 0};
  };
  return b;
}

}  // namespace

void set_cache_sim_backend(CacheSimBackend b) { backend() = std::move(b); }

// The "Cluster" group: --nodes and what shapes it (cluster sizing, issue 26).
void add_cluster_flags(CLI::App& app, cache::CacheSimOptions& o) {
  decimal_only(app.add_option("--nodes", o.nodes,
                              "Cluster sizing: K servers of size/K behind --route; 1,2,4,8 tries each")
                   ->group("Cluster")
                   ->delimiter(',')
                   ->allow_extra_args(false),
               "a whole number of nodes, e.g. 4 or 1,2,4,8");
  // one flag, two modes: an object trace's --nodes or a prefix trace's --instances (prefix_mode.cpp refuses the
  // other mode's names)
  std::vector<std::string> routes = cache::route_names();
  for (const auto& r : cache::prefix::prefix_route_names()) routes.push_back(r);
  with_values(app.add_option("--route", o.route,
                             "Router of --nodes: " + join(cache::route_names(), ", ") + "; of --instances: " +
                                 join(cache::prefix::prefix_route_names(), ", ")),
              routes)
      ->group("Cluster");
  decimal_only(app.add_option("--virtual-nodes", o.virtual_nodes,
                              "ketama points per node on the hash ring")
                   ->group("Cluster"),
               "a whole number of points per node, e.g. 160");
  decimal_only(app.add_option("--max-node-load", o.max_node_load,
                              "With --nodes: hottest node's load at most X x the mean")
                   ->group("Cluster"),
               "a decimal ratio above 1, e.g. 1.5");
}

// The prefix mode's flags (LLM request traces: mooncake, tokens): blocks, KV bytes and formats with the other
// simulation flags, the prefill model with the cost model.
void add_prefix_flags(CLI::App& app, cache::CacheSimOptions& o) {
  decimal_only(app.add_option("--block-tokens", o.block_tokens,
                              "Tokens per KV block (default: mooncake 512, tokens 16)")
                   ->default_str("")
                   ->group("Simulation"),
               "a whole number of tokens, e.g. 16");
  decimal_only(app.add_option("--kv-bytes-per-token", o.kv_bytes_per_token,
                              "KV bytes a token takes (K and V, all layers)")
                   ->group("Simulation"),
               "a decimal number of bytes, e.g. 327680");
  app.add_option("--kv-layout", o.kv_layout,
                 "KV layout: layers=80,kv-heads=8,head-dim=128,dtype=fp16")
      ->group("Simulation");
  with_values(app.add_option("--kv-dtype", o.kv_dtypes,
                             "What-if: the same bytes in each KV format, e.g. fp16,fp8,int4"),
              {"fp32", "fp16", "bf16", "fp8", "int8", "int4"})
      ->group("Simulation")
      ->delimiter(',')
      ->allow_extra_args(false);
  app.add_option("--tiers", o.tiers, "Tiers, fastest first, replacing --sizes: hbm=3Mtok,dram=50Mtok@50GB/s")
      ->group("Simulation");
  decimal_only(app.add_option("--prefill-ms-per-token", o.prefill_ms_per_token,
                              "TTFT model: X ms per uncached prompt token")
                   ->option_text("X")  // FLOAT would push the description onto a line of its own
                   ->group("Cost model"),
               "a decimal number of ms, e.g. 0.05");
  app.add_option("--prefill-cost", o.prefill_cost,
                 "TTFT a=..,b=..,c=..,d=..: a+b*new+c*new*(cached+new/2)+d*cached ms")
      ->group("Cost model");
  app.add_option("--prefill-cost-from", o.prefill_cost_from,
                 "TTFT model fitted to a table from lite profile --prefill-cost-out")
      ->group("Cost model");
  decimal_only(app.add_option("--instances", o.instances,
                              "Prefill instances (FCFS by timestamp); with --route, K local pools")
                   ->default_str("")
                   ->group("Cost model"),
               "a whole number of instances, e.g. 4");
  app.add_option("--engine", o.engine, "Replay as ideal, vllm or sglang[:decode-ms=20]")
      ->group("Simulation");
  decimal_only(app.add_option("--target-ttft-p99", o.target_ttft_p99_ms,
                              "Recommend the smallest capacity with TTFT p99 <= MS")
                   ->group("Sizing"),
               "a decimal latency in ms above 0, e.g. 500");
}

// How the trace is read.
void add_trace_flags(CLI::App& app, cache::CacheSimOptions& o) {
  std::string formats;
  for (const auto& e : cache::trace_formats()) formats += std::string(formats.empty() ? "" : "|") + e.name;
  with_values(app.add_option("--format", o.format,
                             "Trace format: " + formats + "; auto reads it from the name, else the contents"),
              names_of(cache::trace_formats(), [](const auto& e) { return e.name; }))
      ->group("Trace");
  app.add_option("--csv-columns", o.csv_columns,
                 "1-based csv columns, e.g. time=2,key=5,size=4 (default: the header's)")
      ->group("Trace");
  app.add_flag("--has-header", o.has_header, "The first csv line is a header (detected when it has no digits)")
      ->group("Trace");
  app.add_flag("--skip-bad-lines", o.skip_bad_lines, "Skip malformed lines/records and report how many")->group("Trace");
}

// SHARDS sampling, the latency cost model and the sizing targets.
void add_sampling_and_cost_flags(CLI::App& app, cache::CacheSimOptions& o) {
  decimal_only(app.add_option("--sample-rate", o.sample_rate,
                              "SHARDS fixed-rate sampling at rate R in (0, 1]")
                   ->group("Sampling"),
               "a decimal rate in (0, 1], e.g. 0.01");
  decimal_only(app.add_option("--sample-objects", o.sample_objects,
                              "SHARDS fixed-size sampling: keep the N keys with the smallest hashes")
                   ->group("Sampling"),
               "a whole number of keys from 1 to 18446744073709551615");
  app.add_flag("--sample-check", o.sample_check, "Also simulate the full trace and report the sampling error")
      ->group("Sampling");
  decimal_only(app.add_option("--hit-latency", o.hit_latency_ms, "Latency of a cache hit in ms")
                   ->group("Cost model"),
               "a decimal latency in ms, 0 or more, e.g. 0.2");
  decimal_only(app.add_option("--miss-latency", o.miss_latency_ms, "Latency of a miss in ms (the model's inference time)")
                   ->group("Cost model"),
               "a decimal latency in ms, 0 or more, e.g. 12.5");
  app.add_option("--miss-latency-from", o.miss_latency_from,
                 "Miss latency from 'lite profile --json' reports, one per model variant")
      ->option_text("FILES")  // "TEXT ..." is wider than the flag column: a line of its own
      ->group("Cost model")
      ->allow_extra_args(false)
      ->delimiter(',');
  decimal_only(app.add_option("--target-hit-ratio", o.target_hit_ratio, "Recommend the smallest size with hit ratio >= X")
                   ->group("Sizing"),
               "a decimal hit ratio in (0, 1], e.g. 0.8");
  decimal_only(app.add_option("--target-p99", o.target_p99_ms, "Recommend the smallest size with p99 request latency <= MS")
                   ->group("Sizing"),
               "a decimal latency in ms above 0, e.g. 30");
}

Runner setup_cache_sim(CLI::App& app) {
  struct State {
    cache::CacheSimOptions options;
    OutputOptions output;
    ConfigFlags config;
  };
  auto s = std::make_shared<State>();
  auto& o = s->options;
  const std::string default_policies = join(o.policies, ",");
  o.policies.clear();  // a flag replaces the default list; resolve() falls back to kDefaultPolicy
  name_flag("trace", "TRACE");
  name_flag("policies", "--policy");
  name_flag("hit_latency_ms", "--hit-latency");
  name_flag("miss_latency_ms", "--miss-latency");
  name_flag("target_p99_ms", "--target-p99");
  name_flag("kv_dtypes", "--kv-dtype");
  name_flag("target_ttft_p99_ms", "--target-ttft-p99");
  app.description(
      "Replay a trace through cache policies and sizes: miss ratio, latency, exact LRU curve, smallest size for a "
      "--target-* (else exit 1); LLM request traces: prefix KV-cache study. docs/cache-sim.md");
  app.add_option("TRACE", o.trace, "Trace file (csv, txt, oracleGeneral, vscsi, JSONL; .zst too) or -");
  add_trace_flags(app, o);
  std::vector<std::string> policy_words = cache::policy_names();
  for (const auto& p : cache::prefix::prefix_policy_names())
    if (std::find(policy_words.begin(), policy_words.end(), p) == policy_words.end()) policy_words.push_back(p);
  policy_words.insert(policy_words.end(), {"all", "list"});
  with_values(app.add_option("--policy", o.policies,
                             "Policies: " + join(cache::policy_names(), ", ") +
                                 ", all, radix-* (prefix traces); s3fifo:small=0.1 sets a parameter; 'list' describes them"),
              policy_words)
      ->default_str(default_policies)  // shown: the list is emptied above
      ->group("Simulation")
      ->allow_extra_args(false);
  app.add_option("--sizes", o.sizes,
                 "Sizes: auto, 1000 (objects, blocks), 64MiB, 3Mtok, 10%")
      ->group("Simulation");
  app.add_flag("--bytes", o.bytes, "Byte mode: sizes and capacities in bytes instead of objects")
      ->group("Simulation");
  app.add_flag("--mrc", o.mrc, "Also compute the exact LRU miss-ratio curve for every size in one pass")
      ->group("Simulation");
  decimal_only(app.add_option("--mrc-partitions", o.mrc_partitions,
                              "--mrc from N key partitions: mean and spread (a rank each over MPI)")
                   ->group("Simulation"),
               "a whole number of partitions from 1 to 256");
  decimal_only(app.add_option("--threads", o.threads, "Simulation threads, or 0 for all cores")->group("Simulation"),
               "a whole number of threads (0 = all cores)");
  add_sampling_and_cost_flags(app, o);
  add_cluster_flags(app, o);
  add_prefix_flags(app, o);
  app.add_option("--plot", o.plot, "Write an SVG plot (miss ratio and latency against size)")->group("Output");
  app.add_option("--results-dir", o.results_dir,
                 "Keep finished records in DIR; a re-run simulates only the rest")
      ->group("Output");
  add_shared_flags(app, s->output, s->config, /*verbose=*/false);  // cache-sim runs no libtorch

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);  // a bad --output-format fails before any work
    if (o.policies.size() == 1 && to_lower(o.policies[0]) == "list") {
      print_report(cache::policy_list_report(), s->output);
      return int(exit_ok);
    }
    // no --policy: the object mode's default; a prefix trace's own default (lru, radix-lru) is an empty list
    if (o.policies.empty() && !cache::is_prefix_trace(o)) o.policies = cache::CacheSimOptions{}.policies;
    if (resolve_config(app, s->config, o)) return int(exit_ok);
    auto progress = make_progress(s->output);
    SweepOutcome outcome = backend()(o, *progress);
    if (!outcome.result) return outcome.exit_code;  // another MPI rank prints the report
    return print_outcome({cache::to_report(*outcome.result), outcome.result->gates.passed()}, s->output);
  };
}

const SetupRegistration registered{cache::verb(), setup_cache_sim};

}  // namespace lite::cli
