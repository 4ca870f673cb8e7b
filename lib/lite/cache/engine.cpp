// simulate(): plans the passes over the trace and drives every simulator from one stream of batches.
// Each job is a function of its own (see engine_internal.hpp for the map):
//
//   validate -> [spool] stdin if several passes -> [scan] working set / key file / fixed-size SHARDS
//   -> [next] Belady's next accesses -> sizes and sampling plan -> simulators -> [main] one pass
//   -> records with SHARDS corrections -> sampling check -> recommendation
//
// This file holds the plan; the passes read or write only what they are handed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <unordered_map>

#include "lite/cache/cluster_internal.hpp"
#include "lite/cache/engine_internal.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/recommend.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {
namespace {

using namespace detail;

// What the trace needs before the main pass, decided from the options alone.
struct PassNeeds {
  bool next = false;  // a policy needs next-access indices (Belady)
  bool wss = false;   // sizes depend on the working set
};

// Whether this process simulates the cluster of opt.cluster.nodes[c] nodes at (policy p, size position k).
bool runs_cluster(const SweepControl& control, size_t p, size_t k, size_t c) {
  return control.assigned_cluster ? control.assigned_cluster(p, k, c) : !control.assigned;
}

// Belady's next accesses are needed only where some of its slots or clusters may run (a rank may have none).
PassNeeds pass_needs(const SimulationConfig& opt, const SweepControl& control) {
  PassNeeds n;
  const size_t n_sizes = opt.sizes.empty() ? auto_size_fractions().size() : opt.sizes.size();
  for (size_t p = 0; p < opt.policies.size(); ++p) {
    if (!find_policy(opt.policies[p].name).needs_next_access) continue;
    for (size_t k = 0; k < n_sizes && !n.next; ++k) {
      n.next = !control.assigned || control.assigned(p, k);
      for (size_t c = 0; c < opt.cluster.nodes.size() && !n.next; ++c) n.next = runs_cluster(control, p, k, c);
    }
  }
  n.wss = opt.sizes.empty();
  for (const auto& s : opt.sizes) n.wss = n.wss || s.fraction > 0;
  return n;
}

ReaderConfig reader_config(const SimulationConfig& opt, const std::string& name) {
  ReaderConfig rc;
  rc.path = opt.trace;
  rc.display = name;
  rc.format = opt.format;
  rc.csv = opt.csv;
  rc.has_header = opt.has_header;
  rc.bytes = opt.bytes;
  rc.skip_bad_lines = opt.skip_bad_lines;
  const bool other_miss_source = opt.miss_latency_ms.has_value() || !opt.variants.empty();
  if (other_miss_source && opt.csv.explicit_columns && opt.csv.cost)
    throw OptionError("csv_columns", "its cost column and {miss_latency_ms}/{miss_latency_from} are two miss-latency sources",
                      "give one: drop cost= from {csv_columns}, or drop {miss_latency_ms}/{miss_latency_from}");
  rc.want_cost = !other_miss_source;
  return rc;
}

InputError empty_trace(const std::string& name, const TraceReader& r) {
  std::string detail = "the trace has no requests";
  if (r.stats().n_skipped_zero_size) detail += fmt::format(" ({} of size 0 were skipped)", r.stats().n_skipped_zero_size);
  if (r.stats().n_bad_lines) detail += fmt::format(" ({} malformed lines were skipped)", r.stats().n_bad_lines);
  return InputError(name, detail, "pass a trace with at least one request");
}

void check_csv_only_flags(const SimulationConfig& opt, const TraceReader& reader, const std::string& name) {
  if (opt.csv.explicit_columns && reader.format() != TraceFormat::csv)
    throw OptionError("csv_columns", fmt::format("applies to csv traces; {} is {}", name, trace_format_name(reader.format())),
                      "drop {csv_columns}, or pass a csv trace");
  if (opt.has_header && reader.format() != TraceFormat::csv)
    throw OptionError("has_header", fmt::format("applies to csv traces; {} is {}", name, trace_format_name(reader.format())),
                      "drop {has_header}, or pass a csv trace");
}

SamplingPlan plan_sampling(const SimulationConfig& opt, const ScanResult& scan, CacheSimResult& result) {
  SamplingPlan plan;
  plan.rate = opt.sample_rate;
  plan.threshold = threshold_for(plan.rate);
  if (opt.sample_objects) {
    plan.threshold = scan.fixed_threshold;
    plan.rate = rate_for(plan.threshold);
    result.trace.sampling = "fixed-size";
    if (plan.threshold == UINT64_MAX)
      result.notes.push_back(fmt::format("{{sample_objects}} {}: the trace has only {} objects, so nothing was sampled out",
                                         opt.sample_objects, scan.n_obj));
  } else if (plan.rate < 1) {
    result.trace.sampling = "fixed-rate";
  }
  result.trace.sample_rate = plan.rate;
  plan.estimate_rate = plan.rate;  // fixed rate: replaced by the achieved rate after the main pass
  // Filter in the reader unless some consumer needs the unsampled stream.
  plan.reader_filter = plan.sampling() && !opt.sample_check && !(opt.mrc && opt.sample_objects);
  return plan;
}

// Trace facts and notes after the main pass.
void summarize_trace(const SimulationConfig& opt, const TraceReader& reader, const MainPassResult& main,
                     const SamplingPlan& plan, const SimulatorSet& set, CacheSimResult& result) {
  result.trace.n_req_total = reader.stats().n_read;
  result.trace.n_req_byte = main.total_bytes;
  // requests the (sampled) simulators saw; without a reader-level filter each simulator sampled itself
  result.trace.n_req = plan.sampling() && !plan.reader_filter && !set.slots.empty()
                           ? set.slots.front().sim->counters.n_req
                           : main.simulated_requests;
  result.trace.n_skipped_zero_size = reader.stats().n_skipped_zero_size;
  result.trace.n_bad_lines_skipped = reader.stats().n_bad_lines;
  if (result.trace.n_bad_lines_skipped)
    result.notes.push_back(fmt::format("skipped {} malformed line{} ({{skip_bad_lines}})", result.trace.n_bad_lines_skipped,
                                       result.trace.n_bad_lines_skipped == 1 ? "" : "s"));
  if (result.trace.n_skipped_zero_size)
    result.notes.push_back(fmt::format("skipped {} request{} of size 0 (as libCacheSim does)",
                                       result.trace.n_skipped_zero_size, result.trace.n_skipped_zero_size == 1 ? "" : "s"));
  if (!opt.variants.empty()) result.cost_model = "profiles";
  else if (opt.miss_latency_ms) result.cost_model = "constant";
  else if (reader.has_cost()) result.cost_model = "cost column";
  if (result.cost_model == "cost column") result.trace.total_cost_s = main.total_cost_ms / 1000.0;
  if (result.cost_model == "constant") result.trace.total_cost_s = double(result.trace.n_req_total) * *opt.miss_latency_ms / 1000.0;
  if (result.cost_model.empty() && opt.hit_latency_ms > 0)
    result.notes.push_back("{hit_latency_ms} is ignored: no miss latency given ({miss_latency_ms}, {miss_latency_from} or a cost column)");
}

void finish_curve(const SimulationConfig& opt, const SimulatorSet& set, const SamplingPlan& plan, double seconds,
                  CacheSimResult& result) {
  if (!set.profiler) return;
  MrcCurve c = set.profiler->profiler->finish(plan.sampling() ? result.trace.n_req_total : 0, opt.target_hit_ratio);
  c.seconds = seconds;
  result.mrc = std::move(c);  // its "sizes vary" note is finish_sweep's, once the curve is whole
}

// The slots this process simulates: assigned to it and not found in the store (found ones are kept in
// `reused`, in slot order: policy-major, sizes ascending).
struct SlotPlan {
  std::vector<bool> wanted;
  std::vector<std::optional<SimRecord>> reused;
  bool wants_next = false;  // some wanted slot is Belady's
  size_t n_reused = 0;
};

SlotPlan plan_slots(const SimulationConfig& opt, const std::vector<SizeChoice>& sizes, const SweepControl& control) {
  SlotPlan plan;
  plan.wanted.assign(opt.policies.size() * sizes.size(), false);
  plan.reused.resize(plan.wanted.size());
  for (size_t p = 0; p < opt.policies.size(); ++p)
    for (size_t k = 0; k < sizes.size(); ++k) {
      const size_t i = p * sizes.size() + k;
      if (control.assigned && !control.assigned(p, k)) continue;
      if (control.store) plan.reused[i] = control.store->find(opt.policies[p].label(), sizes[k].size);
      if (plan.reused[i]) {
        plan.reused[i]->size_text = sizes[k].text;  // the same size may have been written another way
        ++plan.n_reused;
        continue;
      }
      plan.wanted[i] = true;
      plan.wants_next = plan.wants_next || find_policy(opt.policies[p].name).needs_next_access;
    }
  return plan;
}

// Writes each simulated record to the store as soon as it is collected, then lays the simulated and the
// reused records out in slot order.
void store_and_order(SlotPlan& slots, const SweepControl& control, CacheSimResult& result) {
  std::vector<SimRecord> fresh = std::move(result.records);
  result.records.clear();
  if (control.store)
    for (const auto& r : fresh) {
      control.store->put(r);
      if (control.on_stored) control.on_stored(r);
    }
  size_t next_fresh = 0;
  for (size_t i = 0; i < slots.wanted.size(); ++i) {
    if (slots.wanted[i]) result.records.push_back(std::move(fresh.at(next_fresh++)));
    else if (slots.reused[i]) result.records.push_back(std::move(*slots.reused[i]));
  }
  result.reused_records = slots.n_reused;
}

// [spool], [scan]: the passes before the main one; leaves the reader open when no scan was needed.
struct PrePasses {
  ScanResult scan;
  std::unique_ptr<TempFile> spool;
  std::unique_ptr<TraceReader> reader;
  bool compute_next = false;  // the trace lacks next accesses and a Belady slot may run here
  int passes = 0;
  bool belady_note = false;   // the sweep computes next accesses (on this process or another)
  size_t belady_note_at = 0;  // its place among the notes
};

PrePasses run_pre_passes(const SimulationConfig& opt, const PassNeeds& needs, ReaderConfig& rc,
                         const std::string& name, CacheSimResult& result, Progress& progress) {
  // [spool] a stream (stdin, a FIFO) read more than once is copied to a temporary file while the first pass
  // reads it, so the format checks and the line bound see its first bytes before the copy grows (an
  // oracleGeneral trace carries its next accesses: Belady alone needs no second pass over it)
  PrePasses pre;
  if (rc.format == TraceFormat::auto_detect && rc.path != "-") rc.format = format_from_name(rc.path);
  const bool next_in_trace = rc.format == TraceFormat::oracle_general;
  const bool multi_pass = needs.wss || (needs.next && !next_in_trace) || opt.sample_objects > 0;
  if (multi_pass && is_stream(rc.path)) pre.spool = std::make_unique<TempFile>(opt.temp_dir, "spool");
  CopyBytes copy;
  if (pre.spool) copy = [spool = pre.spool.get()](const char* data, size_t n) { spool->append(data, n); };
  // validates the format before any long work
  pre.reader = open_trace(rc, open_source(rc.path, name, copy));
  check_csv_only_flags(opt, *pre.reader, name);
  const bool trace_has_next = pre.reader->has_next();
  pre.compute_next = needs.next && !trace_has_next;
  bool sweep_needs_next = false;  // the note describes the sweep, whichever rank computes the pass
  for (const auto& p : opt.policies) sweep_needs_next = sweep_needs_next || find_policy(p.name).needs_next_access;
  if (needs.wss || pre.compute_next || opt.sample_objects > 0) {
    ++pre.passes;
    pre.scan = scan_trace(*pre.reader, {pre.compute_next, opt.sample_objects, opt.temp_dir}, file_size_or_zero(rc.path),
                          progress);
    if (pre.scan.n_req == 0) throw empty_trace(name, *pre.reader);
    result.trace.n_obj = pre.scan.n_obj;
    result.trace.working_set_bytes = pre.scan.wss;
    result.trace.max_object_size = pre.scan.max_size;
    if (pre.spool) {  // the main pass reads the copy, in the format the scan found
      rc.format = pre.reader->format();
      rc.path = pre.spool->proc_path();
    }
    pre.reader.reset();
  }
  pre.belady_note = sweep_needs_next && !trace_has_next;
  pre.belady_note_at = result.notes.size();
  return pre;
}

// Facts known once the main pass ran; the recommendation waits for every record (finish_sweep).
void finish_local(const SimulationConfig& opt, const TraceReader& reader, const MainPassResult& main,
                  const std::vector<SizeChoice>& sizes, SamplingPlan& plan, const SimulatorSet& set,
                  const ObjectRate* object_rate, uint64_t n_obj, const std::vector<size_t>& curve_partitions,
                  CacheSimResult& result) {
  if (object_rate && object_rate->sampled_objects() > 0) {
    plan.estimate_rate = object_rate->achieved_rate(n_obj);
    result.trace.n_obj_sampled = object_rate->sampled_objects();
    result.trace.achieved_rate = plan.estimate_rate;
  }
  result.trace.path = display_name(opt.trace);
  summarize_trace(opt, reader, main, plan, set, result);
  collect_records(opt, sizes, plan, set, result);
  finish_curve(opt, set, plan, main.seconds, result);
  finish_partition_curves(opt, set, curve_partitions.empty(), main.seconds, result);
}

}  // namespace

CacheSimResult simulate(const SimulationConfig& opt, Progress& progress, const SweepControl& control) {
  const auto t_start = Clock::now();
  check_resolved(opt);
  CacheSimResult result;
  result.config = opt;  // the result says what it ran: to_report() reads it
  result.bytes = opt.bytes;
  const std::string name = display_name(opt.trace);
  ReaderConfig rc = reader_config(opt, name);
  PrePasses pre = run_pre_passes(opt, pass_needs(opt, control), rc, name, result, progress);
  int passes = pre.passes;

  // plan, then [next] only where a Belady slot is left to simulate
  const std::vector<SizeChoice> sizes =
      resolve_sizes(opt.sizes, opt.bytes ? pre.scan.wss : pre.scan.n_obj, opt.bytes, name);
  SlotPlan slots = plan_slots(opt, sizes, control);
  // --nodes: one more consumer per policy x size x K this process simulates
  const ClusterSet clusters =
      build_clusters(opt, sizes, [&control](size_t p, size_t k, size_t c) { return runs_cluster(control, p, k, c); });
  const bool wants_next = slots.wants_next || clusters.wants_next;
  std::unique_ptr<TempFile> next_file;
  if (pre.compute_next && wants_next) {
    ++passes;
    next_file = compute_next_access(pre.scan, opt.temp_dir, progress);
  }
  pre.scan.keys.reset();
  SamplingPlan plan = plan_sampling(opt, pre.scan, result);
  const SimulatorSet set = build_simulators(opt, sizes, plan, slots.wanted, control.run_curve, control.curve_partitions);
  std::unique_ptr<ObjectRate> object_rate;
  if (plan.sampling() && !opt.sample_objects) object_rate = std::make_unique<ObjectRate>(plan.threshold);

  // [main]
  ++passes;
  std::unique_ptr<TraceReader> reader = pre.reader ? std::move(pre.reader) : open_trace(rc);
  result.trace.format = trace_format_name(reader->format());
  result.trace.has_cost_column = reader->has_cost();
  result.trace.has_next_access = reader->has_next();
  for (const auto& n : reader->notes) result.notes.push_back(n);
  const bool other_miss_source = opt.miss_latency_ms.has_value() || !opt.variants.empty();
  if (opt.target_p99_ms && !other_miss_source && !reader->has_cost())
    throw OptionError("target_p99_ms", "needs a miss latency",
                      "give {miss_latency_ms} MS, {miss_latency_from} PROFILE.json, or a csv trace with a cost column");
  std::unique_ptr<NextStream> next_stream;
  if (next_file) next_stream = std::make_unique<NextStream>(*next_file);
  const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<Simulator*> consumers = set.consumers();
  for (Simulator* c : clusters.consumers()) consumers.push_back(c);
  const MainPassResult main = run_main_pass(
      *reader, consumers, next_stream.get(), wants_next, plan.reader_filter ? plan.threshold : UINT64_MAX,
      object_rate.get(), threads, file_size_or_zero(rc.path),
      fmt::format("simulating {} cache{}", set.slots.size(), set.slots.size() == 1 ? "" : "s"), progress);
  result.threads = main.threads;
  if (reader->stats().n_read == 0) throw empty_trace(name, *reader);
  if (main.simulated_requests == 0)
    throw InputError(name, fmt::format("sampling at rate {:g} kept none of the {} requests", plan.rate, reader->stats().n_read),
                     "raise {sample_rate} or {sample_objects}");

  // results (the Belady note sized from the requests read: a process without Belady slots skipped its scan)
  if (pre.belady_note)
    result.notes.insert(result.notes.begin() + std::ptrdiff_t(pre.belady_note_at),
                        fmt::format("Belady: next-access indices computed in a backward pass over a temporary key file "
                                    "({} on disk, one map entry per object in memory)",
                                    format_bytes(double(reader->stats().n_read) * 16)));
  finish_local(opt, *reader, main, sizes, plan, set, object_rate.get(), pre.scan.n_obj, control.curve_partitions,
               result);
  store_and_order(slots, control, result);
  if (clusters.n_clusters > 0) collect_cluster_records(opt, sizes, clusters, result);
  result.passes = passes;
  if (pre.spool && passes > 1)  // first note, written once the number of passes is known
    result.notes.insert(result.notes.begin(),
                        fmt::format("{} was copied to a temporary file ({}) for {} passes",
                                    opt.trace == "-" ? std::string("stdin") : name,
                                    format_bytes(double(pre.spool->size())), passes));
  result.simulations = set.slots.size() + (opt.sample_check ? set.slots.size() : 0);
  if (!control.assigned) finish_sweep(result, opt);
  result.seconds = seconds_since(t_start);
  result.requests_per_second = result.seconds > 0 ? double(result.trace.n_req_total) / result.seconds : 0;
  return result;
}

CacheSimResult simulate(const SimulationConfig& opt, Progress& progress) { return simulate(opt, progress, SweepControl{}); }

Counters simulate_requests(const PolicySpec& policy, uint64_t capacity, const std::vector<Request>& requests) {
  auto sim = detail::make_simulator(policy, capacity, true);
  // Belady: next-access indices (1-based) computed here unless the caller gave some.
  std::vector<int64_t> next(requests.size(), kNoNextAccess);
  bool given = false;
  for (const auto& r : requests) given = given || r.next_access != kNoNextAccess;
  if (given) {
    for (size_t i = 0; i < requests.size(); ++i) next[i] = requests[i].next_access;
  } else {
    std::unordered_map<uint64_t, int64_t> last;
    for (size_t i = requests.size(); i-- > 0;) {
      auto it = last.find(requests[i].key);
      if (it != last.end()) next[i] = it->second;
      last[requests[i].key] = static_cast<int64_t>(i + 1);
    }
  }
  detail::Batch b;
  b.reserve(std::max<size_t>(requests.size(), 1));
  b.has_next = true;
  b.has_cost = std::any_of(requests.begin(), requests.end(), [](const Request& r) { return r.cost_ms != 0; });
  for (const auto& r : requests) {
    b.key[b.n] = r.key;
    b.hash[b.n] = detail::hash_key(r.key);
    b.size[b.n] = r.size;
    b.cost[b.n] = r.cost_ms;
    b.next[b.n] = next[b.n];
    ++b.n;
  }
  sim->run(b);
  return sim->counters;
}

std::vector<Counters> lru_curve_requests(const std::vector<Request>& requests, const std::vector<uint64_t>& sizes, bool bytes) {
  detail::LruProfiler p(bytes, sizes);
  detail::Batch b;
  b.reserve(std::max<size_t>(requests.size(), 1));
  for (const auto& r : requests) {
    b.key[b.n] = r.key;
    b.hash[b.n] = detail::hash_key(r.key);
    b.size[b.n] = bytes ? r.size : 1;
    ++b.n;
  }
  p.run(b);
  return p.counters_at_queries(0);
}

}  // namespace lite::cache
