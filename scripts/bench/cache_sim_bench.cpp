// lite_cache_bench: a torch-free driver of lite::cache::simulate() for scripts/bench/cache_sim.
// It links only lite_cache (no libtorch, which costs the lite binary ~0.7 s and ~160 MB just to load),
// runs one simulation and prints one JSON line: requests, seconds, requests/s, peak RSS. With --replay it
// loads the trace into memory first and times each policy's simulator over it alone, beside the
// memory-bound probe (cache_sim_replay.hpp).
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "cache_sim_replay.hpp"
#include "lite/cache/options.hpp"
#include "lite/core/error.hpp"
#include "lite/core/memory.hpp"
#include "lite/core/text.hpp"

namespace {

// --replay: one JSON line with the probe and every policy's in-memory ns/request (one size, a number).
int run_replay(const lite::cache::CacheSimOptions& o) {
  using namespace lite::cache;
  const bench::InMemoryTrace t = bench::load_trace(o.trace, o.format, o.bytes);
  const bench::ProbeResult p = bench::probe_memory_bound(t);
  const bench::SketchProbe sketch = bench::probe_sketch(t, std::stoull(o.sizes));
  nlohmann::json policies = nlohmann::json::array();
  for (const PolicySpec& spec : parse_policies(lite::join(o.policies, ","))) {
    if (find_policy(spec.name).needs_next_access) continue;  // Belady's next accesses are the engine's pass
    const bench::ReplayResult r = bench::replay(t, spec, std::stoull(o.sizes), o.bytes);
    policies.push_back({{"policy", r.policy}, {"ns_per_request", r.ns_per_request}, {"n_miss", r.n_miss}});
  }
  nlohmann::json j = {{"n_req", t.n_req},
                      {"distinct_keys", t.distinct_keys},
                      {"load_seconds", t.load_seconds},
                      {"probe", {{"dependent_ns", p.dependent_ns},
                                 {"independent_ns", p.independent_ns},
                                 {"table_bytes", p.table_bytes},
                                 {"checksum", p.checksum}}},
                      {"sketch_probe", {{"add_ns", sketch.add_ns},
                                        {"hashes", sketch.hashes},
                                        {"counter_bytes", sketch.counter_bytes}}},
                      {"policies", policies}};
  std::cout << j.dump() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lite;
  CLI::App app{"lite_cache_bench: time one lite cache-sim run (no libtorch in the process)"};
  // The flags bind onto the same options struct `lite cache-sim` uses, and run() is the same call.
  cache::CacheSimOptions o;
  o.threads = 1;
  app.add_option("TRACE", o.trace)->required();
  app.add_option("--policy", o.policies)->delimiter(',');
  app.add_option("--sizes", o.sizes);
  app.add_option("--format", o.format);
  app.add_flag("--bytes", o.bytes);
  app.add_flag("--mrc", o.mrc);
  app.add_option("--threads", o.threads);
  bool replay = false;
  app.add_flag("--replay", replay, "time each policy over the trace held in memory, beside the memory-bound probe");
  CLI11_PARSE(app, argc, argv);
  const std::string policy = join(o.policies, ","), sizes = o.sizes;
  const bool bytes = o.bytes, mrc = o.mrc;
  try {
    if (replay) return run_replay(o);
    const cache::CacheSimResult r = cache::run(o);
    std::vector<uint64_t> misses;  // per record, for scripts/bench/cache_sim's identical-counts column
    for (const auto& rec : r.records) misses.push_back(rec.counters.n_miss);
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const double cpu = double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    nlohmann::json j = {{"policy", policy},
                        {"sizes", sizes},
                        {"bytes", bytes},
                        {"mrc", mrc},
                        {"threads", r.threads},
                        {"n_req", r.trace.n_req_total},
                        {"seconds", r.seconds},
                        {"requests_per_second", r.requests_per_second},
                        {"cpu_seconds", cpu},
                        {"requests_per_cpu_second", double(r.trace.n_req_total) / cpu},
                        {"peak_rss_mb", double(peak_rss_bytes()) / (1024.0 * 1024.0)},
                        {"miss_ratio", r.records.empty() ? 0.0 : r.records.front().counters.miss_ratio()},
                        {"mrc_seconds", r.mrc ? r.mrc->seconds : 0.0},
                        {"n_miss", misses}};
    std::cout << j.dump() << std::endl;
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "lite_cache_bench: %s\n", first_line(e.what()).c_str());
    return exit_code_for(e.kind());
  }
}
