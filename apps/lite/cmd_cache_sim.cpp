// lite cache-sim: CLI11 flags -> lite::cache::CacheSimOptions -> lite::cache::simulate() -> report.
// Everything else (parsing of specs, simulation, report, plot) lives in lib/lite/cache.
// --format is the trace format here (as issue 4 specifies); the printer is --output-format, as everywhere.
#include <CLI/CLI.hpp>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "command.hpp"
#include "lite/cache/cache_sim.hpp"
#include "lite/cache/policies.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/environment.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"

namespace lite::cli {

namespace {

struct CacheSimFlags {
  std::string trace;
  std::string format = "auto";
  std::string csv_columns;
  bool has_header = false;
  std::vector<std::string> policies;
  std::string sizes = "auto";
  bool bytes = false, mrc = false;
  double sample_rate = 1.0;
  std::optional<uint64_t> sample_objects;  // given, so that 0 is rejected rather than read as 'off'
  bool sample_check = false;
  double hit_latency = 0;
  std::optional<double> miss_latency;
  std::vector<std::string> miss_latency_from;
  std::optional<double> target_hit_ratio, target_p99;
  int threads = 0;
  std::string plot;
  bool skip_bad_lines = false;
  OutputOptions out;
};

// Flag bounds the options alone cannot tell (issue 14): a non-finite number (inf, nan, 1e999) and
// --sample-objects 0, which the options read as "no sampling", are rejected before any work.
void check_flag_bounds(const CacheSimFlags& f) {
  auto finite = [](const char* flag, std::optional<double> value, const char* fix) {
    if (value && !std::isfinite(*value))
      throw UsageError(std::string(flag) + ": " + std::to_string(*value) + " is not a finite number; " + fix);
  };
  finite("--sample-rate", f.sample_rate, "give R in (0, 1], e.g. 0.01 keeps 1% of the keys");
  finite("--hit-latency", f.hit_latency, "give a latency in ms >= 0");
  finite("--miss-latency", f.miss_latency, "give a latency in ms >= 0");
  finite("--target-hit-ratio", f.target_hit_ratio, "give a hit ratio in (0, 1]");
  finite("--target-p99", f.target_p99, "give a latency in ms > 0");
  if (f.sample_objects && *f.sample_objects == 0)
    throw UsageError("--sample-objects: 0 keeps no keys; give N >= 1, or leave the flag out to simulate every key");
}

cache::CacheSimOptions to_options(const CacheSimFlags& f) {
  check_flag_bounds(f);
  cache::CacheSimOptions o;
  o.trace = f.trace;
  o.format = cache::parse_trace_format(f.format);
  if (!f.csv_columns.empty()) o.csv = cache::parse_csv_columns(f.csv_columns);
  o.has_header = f.has_header;
  o.policies = cache::parse_policies(f.policies.empty() ? "lru" : join(f.policies, ","));
  o.sizes = cache::parse_sizes(f.sizes, f.bytes);
  o.bytes = f.bytes;
  o.mrc = f.mrc;
  o.sample_rate = f.sample_rate;
  o.sample_objects = f.sample_objects.value_or(0);
  o.sample_check = f.sample_check;
  o.hit_latency_ms = f.hit_latency;
  o.miss_latency_ms = f.miss_latency;
  for (const auto& path : f.miss_latency_from) o.variants.push_back(cache::load_profile_variant(path));
  o.target_hit_ratio = f.target_hit_ratio;
  o.target_p99_ms = f.target_p99;
  o.threads = f.threads;
  o.skip_bad_lines = f.skip_bad_lines;
  return o;
}

}  // namespace

Runner setup_cache_sim(CLI::App& app) {
  auto f = std::make_shared<CacheSimFlags>();
  std::string formats;
  for (const auto& e : cache::trace_formats()) formats += std::string(formats.empty() ? "" : "|") + e.name;
  app.description(
      "Replay a request trace through cache policies and sizes: miss ratio, byte miss ratio and request latency per "
      "policy and size, the exact LRU curve in one pass, and the smallest size meeting a target.\n"
      "Exit 0 ok, 1 a --target-* was given and nothing reached it (results still printed), 2 bad input.");
  app.add_option("TRACE", f->trace, "Trace file (csv, txt, oracleGeneral, vscsi; .zst too), or - for stdin");
  app.add_option("--format", f->format, "Trace format: " + formats + " (default auto: from the name, else the contents)")
      ->group("Trace");
  app.add_option("--csv-columns", f->csv_columns,
                 "1-based csv columns, e.g. time=2,key=5,size=4,cost=6[,delimiter=tab]; default: from the header names, "
                 "else key=1")
      ->group("Trace");
  app.add_flag("--has-header", f->has_header, "The first csv line is a header (detected when it has no digits)")
      ->group("Trace");
  app.add_flag("--skip-bad-lines", f->skip_bad_lines, "Skip malformed lines/records and report how many")->group("Trace");
  app.add_option("--policy", f->policies,
                 "Policies: " + join(cache::policy_names(), ", ") +
                     ", or all; parameters as s3fifo:small=0.1,ghost=0.9; 'list' shows them all; 'none' with --mrc "
                     "for the LRU curve alone (default lru)")
      ->group("Simulation")
      ->allow_extra_args(false);
  app.add_option("--sizes", f->sizes,
                 "Cache sizes: auto (fractions 0.0001..1 of the working set), or a list: 1000 (objects), 64MiB/1GB "
                 "(bytes, powers of 1024), 0.1 or 10% (of the working set)")
      ->group("Simulation");
  app.add_flag("--bytes", f->bytes, "Byte mode: sizes and capacities in bytes (default: objects, every object size 1)")
      ->group("Simulation");
  app.add_flag("--mrc", f->mrc, "Also compute the exact LRU miss-ratio curve for every size in one pass (Mattson)")
      ->group("Simulation");
  app.add_option("--threads", f->threads, "Simulation threads (0 = all cores)")->group("Simulation");
  app.add_option("--sample-rate", f->sample_rate, "SHARDS fixed-rate sampling: keep keys with hash < R*2^64 (0 < R <= 1)")
      ->group("Sampling");
  app.add_option("--sample-objects", f->sample_objects, "SHARDS fixed-size sampling: keep the N keys with the smallest hashes")
      ->group("Sampling");
  app.add_flag("--sample-check", f->sample_check, "Also simulate the full trace and report the sampling error")
      ->group("Sampling");
  app.add_option("--hit-latency", f->hit_latency, "Latency of a cache hit in ms (default 0)")->group("Cost model");
  app.add_option("--miss-latency", f->miss_latency, "Latency of a miss in ms (the model's inference time)")
      ->group("Cost model");
  app.add_option("--miss-latency-from", f->miss_latency_from,
                 "One or more 'lite profile --json' reports (one per model variant; comma-separated or repeated): "
                 "miss latency from each model's mean/p50/p99")
      ->group("Cost model")
      ->allow_extra_args(false)
      ->delimiter(',');
  app.add_option("--target-hit-ratio", f->target_hit_ratio, "Recommend the smallest size with hit ratio >= X")
      ->group("Sizing");
  app.add_option("--target-p99", f->target_p99, "Recommend the smallest size with p99 request latency <= MS")
      ->group("Sizing");
  app.add_option("--plot", f->plot, "Write an SVG plot (miss ratio and latency against size)")->group("Output");
  add_output_flags(app, f->out);

  return [f] {
    const report::Format format = resolve_format(f->out);
    if (f->policies.size() == 1 && to_lower(f->policies[0]) == "list") {
      report::print(cache::policy_list_report(), format, std::cout);
      return int(exit_ok);
    }
    if (f->trace.empty()) throw UsageError("missing TRACE: pass a trace file, or - for stdin; run 'lite cache-sim --help'");
    cache::CacheSimOptions options = to_options(*f);
    if (!f->plot.empty()) check_output_path(f->plot, f->trace == "-" ? std::string() : f->trace, "--plot");
    auto progress = make_progress(f->out);
    cache::CacheSimResult result = cache::simulate(options, *progress);
    throw_if_interrupted();  // a signal after the last poll: still nothing written, exit 130/143
    if (!f->plot.empty()) {
      write_file_atomically(f->plot, cache::render_svg(result));
      result.notes.push_back("plot written to " + f->plot);
    }
    print_report(cache::to_report(result, options), f->out);
    return cache::exit_status(result);
  };
}

}  // namespace lite::cli
