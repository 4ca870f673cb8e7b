#pragma once
// lite::cache: trace-driven cache simulation (torch-free).
//
// The verb: CacheSimOptions (options.hpp) -> run() -> CacheSimResult -> to_report() / render_svg(). Beneath run(),
// the engine: resolve() parses the options into a SimulationConfig, simulate() runs it (lite-mpi and lite
// optimize's cache fit call these two directly).
// The library never prints and never exits: bad input throws lite::InputError, a wrong option
// lite::UsageError, Ctrl-C lite::Interrupted (polled every 16K requests).
//
// Semantics follow libCacheSim (cache_get_base): every request counts, the first access is a miss,
// no warm-up; on a miss an object that fits (size <= capacity) is inserted after evicting until it
// fits, a larger one is a miss that evicts nothing; a hit keeps the stored size; in object mode every
// object has size 1; size-0 requests are skipped (csv, oracleGeneral).
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"

namespace lite::cache {

constexpr int64_t kNoNextAccess = std::numeric_limits<int64_t>::max();

// One request as the simulators see it. In object mode `size` is 1.
struct Request {
  uint64_t key = 0;
  uint32_t size = 1;
  float cost_ms = 0;                    // per-request miss cost when the trace has a cost column
  int64_t next_access = kNoNextAccess;  // index of the next request to the same key (Belady)
};

struct Counters {
  uint64_t n_req = 0, n_miss = 0, n_req_byte = 0, n_miss_byte = 0;
  double miss_ratio() const { return n_req ? double(n_miss) / double(n_req) : 0.0; }
  double byte_miss_ratio() const { return n_req_byte ? double(n_miss_byte) / double(n_req_byte) : 0.0; }
};

// ---- trace formats ------------------------------------------------------------------------------

enum class TraceFormat { auto_detect, csv, txt, oracle_general, vscsi, mooncake, token_ids };

struct TraceFormatEntry {
  const char* name;
  const char* alias;  // libCacheSim's spelling, also accepted ("" if none)
  TraceFormat format;
  const char* description;
};
// The format table: drives --format parsing, help and detection messages.
const std::vector<TraceFormatEntry>& trace_formats();
TraceFormat parse_trace_format(const std::string& name);  // UsageError with suggestion
std::string trace_format_name(TraceFormat f);

// CSV columns, 1-based; 0 = absent. Parsed from "time=2,key=5,size=4,cost=6[,delimiter=tab]".
struct CsvColumns {
  int key = 0, time = 0, size = 0, cost = 0;
  char delimiter = 0;  // 0 = detect from the first line
  bool explicit_columns = false;
};
CsvColumns parse_csv_columns(const std::string& spec);

// ---- policies -----------------------------------------------------------------------------------

struct PolicySpec {
  std::string name;                                       // registry name, e.g. "s3fifo"
  std::vector<std::pair<std::string, double>> params;     // only the ones given, canonical names
  std::string label() const;                              // "s3fifo" or "s3fifo:small=0.2"
};
// "lru,fifo,s3fifo:small=0.1,ghost=0.9", "all", or "none" (an empty list: --mrc alone). UsageError names the known policies, the closest
// match and, for a bad parameter, the policy's parameters.
std::vector<PolicySpec> parse_policies(const std::string& text);
// Memory one simulator of `policy` takes before it holds any object (LHD's age histograms, ~4 MB; a table's
// first slots), measured on a fresh one: the per-size cost of a sweep, which validate() bounds.
uint64_t empty_simulator_bytes(const PolicySpec& policy, bool bytes);
// The most a sweep's empty simulators (policies x sizes, twice with a sampling check) may take together.
constexpr uint64_t kMaxSweepBytes = uint64_t(2) << 30;

// ---- sizes --------------------------------------------------------------------------------------

struct SizeSpec {
  std::string text;        // as given
  uint64_t absolute = 0;   // objects or bytes, when fraction == 0
  double fraction = 0;     // of the working set, in (0, 1]
};
// "auto" -> empty list (the caller picks libCacheSim's fractions). OptionError (key "sizes") for zero,
// negative, malformed (hex, inf, "5 5") and too many sizes, and for byte units in object mode.
std::vector<SizeSpec> parse_sizes(const std::string& text, bool bytes);
// The most sizes one run takes: each is one simulator per policy (LHD alone keeps ~4 MB per simulator).
constexpr size_t kMaxSizes = 1024;
// The fractions used by --sizes auto: libCacheSim cachesim's eight, plus 0.5 and the whole working set.
const std::vector<double>& auto_size_fractions();
// A cache size as lite prints it: KiB/MiB/GiB in byte mode, a plain count in object mode.
std::string size_label(uint64_t size, bool bytes);

// ---- cost model ---------------------------------------------------------------------------------

// A model variant read from a `lite profile --json` report: its steady-state latency.
struct ModelVariant {
  std::string label;  // file name of result.model.path
  std::string source; // the report's path
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
};
// Throws InputError naming the file for unreadable JSON, another tool/command, or missing keys.
ModelVariant load_profile_variant(const std::string& path);

// ---- cluster sizing (--nodes; cluster.cpp, route.hpp) -------------------------------------------

// K cache servers of C/K each behind a key router, for every simulated total size C and every K.
struct ClusterSpec {
  std::vector<uint32_t> nodes;   // the K values; empty = no cluster simulation
  std::string route = "ketama";  // route.hpp's table
  uint32_t virtual_nodes = 160;  // ketama's points per node
  double max_node_load = 1.5;    // the recommendation's bound on the hottest node's requests over the mean
};

// ---- the resolved configuration and results -----------------------------------------------------

// The policy cache-sim simulates when none is given: the options, their resolution and the configuration
// all start from this one name.
inline constexpr const char* kDefaultPolicy = "lru";

// What simulate() runs: CacheSimOptions with every spec parsed and every profile report loaded.
struct SimulationConfig {
  std::string trace = "-";                 // path, or "-" for stdin
  TraceFormat format = TraceFormat::auto_detect;
  CsvColumns csv;
  bool has_header = false;                  // force: first csv line is a header
  std::vector<PolicySpec> policies = {{kDefaultPolicy, {}}};  // may be empty with mrc (the LRU curve alone)
  std::vector<SizeSpec> sizes;              // empty = auto
  bool bytes = false;
  bool mrc = false;
  uint64_t mrc_partitions = 0;              // the curve combined from N key partitions (0 = one exact curve)
  double sample_rate = 1.0;                 // fixed-rate SHARDS, (0, 1]
  uint64_t sample_objects = 0;              // fixed-size SHARDS (0 = off)
  bool sample_check = false;                // also simulate the full trace and report the error
  double hit_latency_ms = 0;
  std::optional<double> miss_latency_ms;
  std::vector<ModelVariant> variants;       // from --miss-latency-from
  std::optional<double> target_hit_ratio;
  std::optional<double> target_p99_ms;
  int threads = 0;                          // 0 = all cores
  bool skip_bad_lines = false;
  std::string temp_dir;                     // for stdin spooling and Belady's next-access pass; "" = $TMPDIR
  ClusterSpec cluster;                      // --nodes: also simulate clusters of these sizes
};
void to_json(nlohmann::json& j, const SimulationConfig& o);
// The most key partitions --mrc-partitions takes (each is one profiler with its own table).
constexpr uint64_t kMaxMrcPartitions = 256;

struct LatencyFigures {
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
};

struct SimRecord {
  std::string policy;      // label
  uint64_t size = 0;       // objects or bytes as requested (unscaled)
  uint64_t simulated_size = 0;  // size given to the simulator (scaled by the sampling rate)
  std::string size_text;   // as the user wrote it, or the auto fraction
  Counters counters;             // with sampling: full-trace estimates (sampled misses / rate, exact totals)
  bool sampled = false;
  std::optional<Counters> sampled_counters;  // what the sampled simulator counted
  std::optional<LatencyFigures> latency;                             // one cost model
  std::vector<std::pair<std::string, LatencyFigures>> variants;      // --miss-latency-from
  // --sample-check: the same simulation on the full trace
  std::optional<Counters> full;
  uint64_t memory_bytes = 0;
  // issue 15: what the misses cost and how far a sampled estimate can be trusted
  std::optional<double> miss_cost_s;     // total miss latency, seconds (constant or cost column model)
  std::optional<double> saved_cost_s;    // latency the cache saved: all requests' cost - miss_cost_s
  std::optional<double> miss_ratio_error;  // sampled: 95% half-width of the miss ratio (see engine_results.cpp)
  bool small_sample = false;             // sampled: the scaled cache holds under kMinSampledObjects objects
};
void to_json(nlohmann::json& j, const SimRecord& r);

struct TraceSummary {
  std::string path, format;
  uint64_t n_req = 0;            // requests simulated (after skipping and sampling)
  uint64_t n_req_total = 0;      // requests read from the trace (after skipping)
  uint64_t n_req_byte = 0;       // bytes of the requests read (in object mode: requests)
  uint64_t n_skipped_zero_size = 0;
  uint64_t n_bad_lines_skipped = 0;
  std::optional<uint64_t> n_obj;              // unique objects, when a pass computed it
  std::optional<uint64_t> working_set_bytes;  // sum of unique objects' first sizes
  std::optional<uint64_t> max_object_size;
  bool has_cost_column = false, has_next_access = false;
  double sample_rate = 1.0;
  std::string sampling;  // "", "fixed-rate" or "fixed-size"
  // fixed-rate sampling: objects the sample holds, and sampled / all objects, the rate the estimates use
  std::optional<uint64_t> n_obj_sampled;
  std::optional<double> achieved_rate;
  // issue 15
  std::optional<double> total_cost_s;  // miss cost of every request read (cost column), seconds
};

// A sampled cache (simulated size) smaller than this many objects gives unreliable SHARDS estimates.
constexpr uint64_t kMinSampledObjects = 100;
void to_json(nlohmann::json& j, const TraceSummary& t);

// The one-pass exact LRU miss-ratio curve (Mattson stack distances over a Fenwick tree).
struct MrcPoint {
  uint64_t size = 0;
  double miss_ratio = 0, byte_miss_ratio = 0;
};
// --mrc-partitions: how far the partitions' own miss ratios spread at one size (partitions with requests).
struct MrcSpread {
  double min = 0, max = 0;
  double std_error = 0;  // standard deviation over the partitions / sqrt(partitions); 0 for one
};
struct MrcPartitions {
  size_t n = 0;
  std::vector<uint64_t> requests;            // each partition's share of the requests
  std::vector<MrcSpread> points, at_sizes;   // beside MrcCurve::points and at_sizes
};
struct MrcCurve {
  bool bytes = false;
  uint64_t n_req = 0;
  std::vector<MrcPoint> points;     // dense curve for plotting (object mode: every size up to 4096 points)
  std::vector<MrcPoint> at_sizes;   // at each requested size, same order as the simulated sizes
  uint64_t exact_from_size = 0;     // byte mode: exact for sizes >= the largest object
  bool sizes_vary = false;          // byte mode: some object changed size (then the curve is approximate)
  std::optional<uint64_t> smallest_size_for_target;  // exact LRU size reaching --target-hit-ratio
  double seconds = 0;
  std::optional<MrcPartitions> partitions;  // combined from key partitions (--mrc-partitions)
};
// One key partition's exact LRU curve in full-trace sizes (its distances x N), not yet combined: what a
// lite-mpi rank sends to rank 0. Its miss ratios are its own (misses / its requests).
struct PartitionCurve {
  size_t partition = 0;
  double requests = 0, bytes = 0;  // the partition's requests and their bytes
  MrcCurve curve;
};
void to_json(nlohmann::json& j, const MrcCurve& c);

struct Recommendation {
  std::string policy;
  std::string variant;      // with --miss-latency-from
  std::optional<uint64_t> size;       // smallest evaluated size meeting the target
  double miss_ratio = 0;
  std::optional<double> p99_ms;
  bool offline_bound = false;  // Belady: needs the future, so a bound to compare against, not a policy to deploy
};
struct RecommendationSet {
  std::string target;  // "hit ratio >= 0.8" / "p99 <= 50 ms"
  std::vector<Recommendation> per_policy;
  std::optional<Recommendation> best;
  bool reached = false;
};
void to_json(nlohmann::json& j, const RecommendationSet& r);

// One simulated cluster: K nodes of size/K each, the policy on every node.
struct ClusterRecord {
  std::string policy;
  uint64_t size = 0;          // the cluster's total size
  std::string size_text;
  uint32_t nodes = 1;
  uint64_t node_size = 0;     // size / nodes, what each node's simulator gets
  Counters counters;          // the whole cluster
  std::optional<LatencyFigures> latency;
  std::vector<std::pair<std::string, LatencyFigures>> variants;  // --miss-latency-from
  std::optional<double> miss_cost_s;
  std::vector<Counters> per_node;
  std::vector<std::optional<LatencyFigures>> per_node_latency;     // one cost model, if any
  uint32_t hottest = 0;       // the node with the most requests
  double max_over_mean = 1;   // its requests over the mean per node
  double hottest_hit_ratio = 0;
  std::optional<double> hottest_p99_ms;
};
struct ClusterRecommendation {
  std::string policy, variant;
  std::optional<uint32_t> nodes;  // unset: no simulated cluster met the target under the load bound
  uint64_t node_size = 0, size = 0;
  double hit_ratio = 0, max_over_mean = 1;
  std::optional<double> p99_ms;
  bool offline_bound = false;
};
struct ClusterResult {
  std::string route;
  uint32_t virtual_nodes = 0;
  double max_node_load = 1.5;
  std::vector<ClusterRecord> records;  // policy-major, then size ascending, then nodes ascending
  std::string target;                  // "" without --target-*
  std::vector<ClusterRecommendation> per_policy;
  std::optional<ClusterRecommendation> best;
};
void to_json(nlohmann::json& j, const ClusterResult& c);

struct SamplingCheck {
  double mean_abs_error = 0, max_abs_error = 0;
  std::string worst;  // "policy @ size"
};

struct CacheSimResult {
  TraceSummary trace;
  bool bytes = false;
  std::vector<SimRecord> records;   // policy-major, sizes ascending
  std::optional<MrcCurve> mrc;
  std::vector<PartitionCurve> mrc_partition_curves;  // this process's partitions when another combines them
  std::optional<RecommendationSet> recommendation;
  std::optional<SamplingCheck> sampling_check;
  std::vector<std::string> notes;
  std::string cost_model;           // "", "constant", "cost column", "profiles"
  int threads = 1;
  int passes = 1;
  size_t simulations = 0;           // policy x size simulators run (twice that with --sample-check)
  size_t reused_records = 0;        // --results-dir: records found there instead of simulated
  int ranks = 1;                    // processes the sweep was spread over (lite-mpi)
  std::vector<std::string> hosts;   // lite-mpi: the host names the ranks ran on, in rank order, each once
  double seconds = 0;
  double requests_per_second = 0;
  Gates gates;  // "target": a --target-* was given and no policy reached it at the simulated sizes
  SimulationConfig config;  // what was simulated (run() fills it; the report reads it)
  std::string plot;         // the SVG written, if any
  std::optional<ClusterResult> cluster;  // --nodes
  std::optional<prefix::PrefixResult> prefix;  // a prefix (LLM KV-cache) trace: the prefix study, nothing above
};
void to_json(nlohmann::json& j, const CacheSimResult& r);

// Runs the simulation of a resolved configuration. Long loops report to `progress` and poll for Ctrl-C.
// (The verb's entry point is run(const CacheSimOptions&) in options.hpp.)
CacheSimResult simulate(const SimulationConfig& options, Progress& progress = no_progress());

// Simulates one policy at one capacity over an in-memory request sequence (tests, embedding).
Counters simulate_requests(const PolicySpec& policy, uint64_t capacity, const std::vector<Request>& requests);
// The one-pass LRU curve over an in-memory sequence, evaluated at `sizes`.
std::vector<Counters> lru_curve_requests(const std::vector<Request>& requests, const std::vector<uint64_t>& sizes,
                                         bool bytes);

// The report (tables, findings, notes, complete JSON, with result.config as its options) and the SVG plot of a
// result.
report::Report to_report(const CacheSimResult& result);
std::string render_svg(const CacheSimResult& result);
// The policy table as a report (--policy list).
report::Report policy_list_report();

}  // namespace lite::cache
