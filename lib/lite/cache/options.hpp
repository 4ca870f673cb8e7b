#pragma once
// lite cache-sim's options (the options pattern of lite/core/options.hpp): what a user, a --config file or a
// recipe step writes, as text where the command line takes text (policy specs, sizes, csv columns). run()
// resolves them into a SimulationConfig (cache_sim.hpp), simulates, writes the plot and sets the gates.
// Torch-free.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/cache_sim.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/core/progress.hpp"

namespace lite::cache {

class RecordStore;

struct CacheSimOptions {
  std::string trace;                           // path, or "-" for stdin
  std::string format = "auto";                 // trace format (table in trace_source.cpp), or auto
  std::string csv_columns;                     // "time=2,key=5,size=4,cost=6[,delimiter=tab]"; "" = from the header
  bool has_header = false;                     // the first csv line is a header
  std::vector<std::string> policies = {kDefaultPolicy};  // specs ("s3fifo:small=0.2"), "all", or "none" (with mrc)
  std::string sizes = "auto";                  // "auto", or a list: 1000, 64MiB, 0.1, 10%
  bool bytes = false;                          // byte mode
  bool mrc = false;                            // the exact LRU curve in one pass
  std::optional<uint64_t> mrc_partitions;      // the curve from N key partitions, with its spread (unset = exact)
  double sample_rate = 1.0;                    // fixed-rate SHARDS, (0, 1]
  std::optional<uint64_t> sample_objects;       // fixed-size SHARDS: keep this many keys (unset = off)
  bool sample_check = false;                   // also simulate the full trace and report the error
  double hit_latency_ms = 0;
  std::optional<double> miss_latency_ms;
  std::vector<std::string> miss_latency_from;  // `lite profile --json` reports, one per model variant
  std::optional<double> target_hit_ratio;
  std::optional<double> target_p99_ms;
  int threads = 0;                             // 0 = all cores
  bool skip_bad_lines = false;
  std::string plot;                            // SVG written after the run; "" = none
  std::string temp_dir;                        // stdin spooling, Belady's next-access pass; "" = $TMPDIR
  std::string results_dir;                     // finished records kept here and reused by a re-run; "" = none
  std::vector<uint32_t> nodes;                 // cluster sizing: simulate K nodes of size/K for each K (cluster.hpp)
  std::string route = "ketama";                // key router of the cluster: ketama, rendezvous, modulo (route.hpp)
  uint32_t virtual_nodes = 160;                // ketama's points per node
  double max_node_load = 1.5;                  // recommend only clusters whose hottest node has <= this x mean requests
  // The prefix mode (a trace of LLM requests, docs/cache-sim.md "Prefix KV cache"); prefix_mode.cpp.
  uint32_t block_tokens = 0;                   // tokens a KV block holds; 0 = the format's (mooncake 512, tokens 16)
  std::optional<double> kv_bytes_per_token;    // K and V of every layer, for capacities in bytes
  std::string kv_layout;                       // "layers=80,kv-heads=8,head-dim=128,dtype=fp16"
  std::vector<std::string> kv_dtypes;          // what-if: the same bytes in each KV format
  std::optional<double> prefill_ms_per_token;  // TTFT = X x uncached tokens
  std::string prefill_cost;                    // "a=20,b=0.05,c=2e-6,d=0.02": a + b x new + c x new x (cached + new/2) + d x cached ms
  std::string prefill_cost_from;               // a measured table (prefix/prefill_table.hpp), fitted to that model
  uint32_t instances = 0;                      // prefill instances serving FCFS by timestamp; 0 = no queueing
  std::string tiers;                           // KV tiers fastest first: "hbm=3Mtok,dram=50Mtok@50GB/s"
  std::optional<double> target_ttft_p99_ms;
  std::string engine = "ideal";                // ideal, or vllm / sglang[:decode-ms=X] (prefix/engine.hpp)
};

void to_json(nlohmann::json& j, const CacheSimOptions& o);
void from_json(const nlohmann::json& j, CacheSimOptions& o);
// Parses the specs and loads the profile reports; throws OptionError / InputError by key.
SimulationConfig resolve(const CacheSimOptions& o);
// Value rules of a resolved configuration (simulate() applies them too): OptionError by key. Not a second
// validate(): a SimulationConfig is the engine's input, not a verb's options.
void check_resolved(const SimulationConfig& config);
// Every rule, before any work: resolve, the value rules, and the plot path (never one of the inputs).
void validate(const CacheSimOptions& o);

// The verb: validate, resolve, simulate, write the plot (atomically, after the last interruption point).
// With results_dir, records found there are reused and every simulated one is written there.
CacheSimResult run(const CacheSimOptions& o, Progress& progress = no_progress());

// True when the trace is a prefix (LLM request) trace: {format} mooncake/tokens, or auto and a file whose first
// line has hash_ids or tokens. run() then runs the prefix study (CacheSimResult::prefix).
bool is_prefix_trace(const CacheSimOptions& o);
// run()'s prefix study: validate, the study (this process's share of it), then on rank 0 the target and the plot.
CacheSimResult run_prefix_study(const CacheSimOptions& o, Progress& progress = no_progress(),
                                const prefix::StudyShare& share = {});
// The prefix study's configuration; OptionError for an object-mode option given with a prefix trace.
prefix::PrefixConfig prefix_config(const CacheSimOptions& o);
// OptionError for a prefix-mode option given with an object trace (resolve() calls it).
void refuse_prefix_options(const CacheSimOptions& o);

// run()'s steps, for a caller that simulates its own way (lite-mpi): the resolved and checked configuration,
// the record store of results_dir (null without it), and the plot written after the last record is in.
SimulationConfig prepare(const CacheSimOptions& o);
std::unique_ptr<RecordStore> open_record_store(const CacheSimOptions& o, const SimulationConfig& config);
void finish_run(const CacheSimOptions& o, SimulationConfig config, CacheSimResult& result);

}  // namespace lite::cache
