// lite optimize's options as data: JSON both ways through one field list, the value rules, and the file rule
// (the chosen artifact, the recipe, the plot and the work folder are never one of the inputs). Torch-free but
// for the mode names, which come from quantize's table.
#include "lite/optimize/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/core/atomic_file.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/optimize/decoder_search_internal.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::optimize {

using namespace option_rules;

template <class Fields, class O>
void optimize_fields(Fields& f, O& o) {
  model::eval_data_fields(f, o)
      .field("model", o.model)
      .field("output", o.output)
      .field("calib", o.calib)
      .field("calib_samples", o.calib_samples)
      .field("target_p99_ms", o.target_p99_ms)
      .field("target_p50_ms", o.target_p50_ms)
      .field("target_throughput", o.target_throughput)
      .field("target_speedup", o.target_speedup)
      .field("batch", o.batch)
      .field("max_accuracy_drop", o.max_accuracy_drop)
      .field("prune_ratios", o.prune_ratios)
      .field("prune_sensitivity", o.prune_sensitivity)
      .field("modes", o.modes)
      .field("data", o.data)
      .field("data_labels", o.data_labels)
      .field("recover_epochs", o.recover_epochs)
      .field("recover_samples", o.recover_samples)
      .field("trace", o.trace)
      .field("trace_format", o.trace_format)
      .field("block_tokens", o.block_tokens)
      .field("hit_latency_ms", o.hit_latency_ms)
      .field("cache_policies", o.cache_policies)
      .field("cache_sizes", o.cache_sizes)
      .field("cache_objects", o.cache_objects)
      .field("cost_cache_gib", o.cost_cache_gib)
      .field("cost_core_ms", o.cost_core_ms)
      .field("screen_samples", o.screen_samples)
      .field("exhaustive", o.exhaustive)
      .field("screen_duration_s", o.screen_duration_s)
      .field("duration_s", o.duration_s)
      .field("warmup", o.warmup)
      .field("threads", o.threads)
      .field("budget_s", o.budget_s)
      .field("work_dir", o.work_dir)
      .field("emit_recipe", o.emit_recipe)
      .field("plot", o.plot);
}

void to_json(nlohmann::json& j, const OptimizeOptions& o) {
  OptionWriter w(j);
  optimize_fields(w, o);
}

void from_json(const nlohmann::json& j, OptimizeOptions& o) {
  OptionReader r(j);
  optimize_fields(r, o);
  r.finish();
}

std::filesystem::path output_path(const OptimizeOptions& o) {
  return o.output.empty() ? derive_output_path(o.model, "optimized") : o.output;
}

std::filesystem::path work_dir(const OptimizeOptions& o) {
  if (!o.work_dir.empty()) return o.work_dir;
  std::filesystem::path dir = output_path(o);
  dir += ".work";
  return dir;
}

double accuracy_budget(const OptimizeOptions& o) { return o.max_accuracy_drop.value_or(kDefaultAccuracyDrop); }

std::string Target::describe() const {
  if (key == "target_p99_ms") return fmt::format("p99 <= {:g} ms at batch {}", value, batch);
  if (key == "target_p50_ms") return fmt::format("p50 <= {:g} ms at batch {}", value, batch);
  if (key == "target_throughput") return fmt::format("throughput >= {:g} samples/s at batch {}", value, batch);
  return fmt::format("speedup >= {:g}x over the frozen original at batch {}", value, batch);
}

Target target_of(const OptimizeOptions& o) {
  const std::pair<const char*, const std::optional<double>*> targets[] = {
      {"target_p99_ms", &o.target_p99_ms},
      {"target_p50_ms", &o.target_p50_ms},
      {"target_throughput", &o.target_throughput},
      {"target_speedup", &o.target_speedup}};
  Target t;
  t.batch = o.batch;
  for (const auto& [key, value] : targets) {
    if (!*value) continue;
    if (!t.key.empty())
      throw OptionError(key, fmt::format("is a second target beside {{{}}}", t.key),
                        "give one target: the search meets one and minimises cost under it");
    t.key = key;
    t.value = **value;
  }
  if (t.key.empty())
    throw OptionError("target_p99_ms", "is required: the latency the service must meet (or another target)",
                      "pass {target_p99_ms} MS, {target_p50_ms} MS, {target_throughput} SAMPLES_PER_S or "
                      "{target_speedup} X");
  return t;
}

namespace {

void check_positive(const std::string& key, const std::optional<double>& value, const std::string& example) {
  if (value && !(std::isfinite(*value) && *value > 0))
    throw OptionError(key, fmt::format("must be a positive number, got {}", *value), "e.g. " + example);
}

void check_search_space(const OptimizeOptions& o) {
  for (double r : o.prune_ratios)
    if (!(std::isfinite(r) && r >= 0 && r < 1))
      throw OptionError("prune_ratios", fmt::format("must each be in [0, 1), got {}", r),
                        "e.g. 0.25,0.5 (the fraction of channels removed; 0 is always tried)");
  if (o.modes.empty())
    throw OptionError("modes", "is empty", "give at least one of float, " + join(quantize::mode_names(), ", "));
  for (const auto& m : o.modes) {
    if (m == "float") continue;
    const auto names = quantize::mode_names();
    if (m == "auto" || std::find(names.begin(), names.end(), m) == names.end())
      throw OptionError("modes", fmt::format("'{}' is not a mode", m),
                        "give float or a quantize mode: " + join(names, ", "));
  }
}

void check_cache(const OptimizeOptions& o, const Target& target) {
  if (detail::is_prefix_search(o)) return detail::validate_prefix_search(o);
  if (o.block_tokens)
    throw OptionError("block_tokens", "sets an LLM request trace's KV block size, but no such {trace} is given",
                      "drop it, or pass a trace in cache-sim's mooncake or tokens format");
  check_positive("hit_latency_ms", o.hit_latency_ms, "0.05");
  if (o.trace && !o.hit_latency_ms)
    throw OptionError("hit_latency_ms", "is required with {trace}: what a cache hit costs",
                      "pass {hit_latency_ms} MS, e.g. 0.05 for an in-process result cache");
  if (!o.trace && o.hit_latency_ms)
    throw OptionError("hit_latency_ms", "prices cache hits, but no {trace} is given", "pass {trace} FILE too");
  if (o.trace && !target.is_latency())
    throw OptionError("trace", fmt::format("sizes a cache for a latency target, but the target is {{{}}}", target.key),
                      "give {target_p99_ms} or {target_p50_ms}, or drop {trace}");
  if (o.trace && o.cache_policies.empty())
    throw OptionError("cache_policies", "is empty", "give at least one policy, e.g. lru");
  check_positive("cost_cache_gib", o.cost_cache_gib, "0.5");
  check_positive("cost_core_ms", o.cost_core_ms, "0.00001");
  if (o.cost_cache_gib.has_value() != o.cost_core_ms.has_value())
    throw OptionError(o.cost_cache_gib ? "cost_core_ms" : "cost_cache_gib",
                      "is needed beside the other cost: the objective weighs cache GiB against core-ms",
                      "give both {cost_cache_gib} and {cost_core_ms}, or neither");
}

void check_files(const OptimizeOptions& o) {
  FileRoles roles;
  roles.reads("{model}", o.model)
      .reads_optional("{calib}", o.calib)
      .reads_optional("{trace}", o.trace)
      .reads_optional("{data}", o.data)
      .reads_optional("{data_labels}", o.data_labels);
  model::add_reads(roles, o);
  roles.writes("output", output_path(o));
  if (!o.emit_recipe.empty()) roles.writes("emit_recipe", o.emit_recipe);
  if (!o.plot.empty()) roles.writes("plot", o.plot);
  roles.writes_folder("work_dir", work_dir(o), "the work folder");
  roles.check();
  // The trace is read only when a variant needs a cache; a device (/dev/urandom) is refused now, as cache-sim does.
  if (o.trace)
    refuse_device_input(*o.trace, "a trace file (a trace is a regular file or a FIFO)", "pass a trace file");
}

}  // namespace

void validate(const OptimizeOptions& o) {
  not_empty("model", o.model.string(), "pass the TorchScript model file");
  const Target target = target_of(o);
  check_positive(target.key, target.value, target.key == "target_speedup" ? "2" : "5");
  if (o.batch < 1) throw OptionError("batch", "must be at least 1", "the batch size the service runs, e.g. 1");
  if (o.max_accuracy_drop) {
    if (!(std::isfinite(*o.max_accuracy_drop) && *o.max_accuracy_drop >= 0 && *o.max_accuracy_drop <= 100))
      throw OptionError("max_accuracy_drop", fmt::format("must be in [0, 100] points, got {}", *o.max_accuracy_drop),
                        "e.g. 1 (one point of top-1 accuracy)");
    if (!o.eval)
      throw OptionError("max_accuracy_drop", "is an accuracy budget, but no {eval} data is given to judge it on",
                        "pass {eval} FILE (with labels: accuracy; without: agreement with the model)");
  }
  model::validate(o);
  if (o.calib_samples < 1) throw OptionError("calib_samples", "must be at least 1", "e.g. 256");
  check_search_space(o);
  if (o.prune_sensitivity && !o.eval)
    throw OptionError("prune_sensitivity", "judges each group's ratio on evaluation data, and no {eval} is given",
                      "pass {eval} FILE");
  if (o.data_labels && !o.data)
    throw OptionError("data_labels", "gives the labels of the training data", "pass {data} too");
  if (o.recover_epochs < 1) throw OptionError("recover_epochs", "must be at least 1", "e.g. 2");
  if (o.recover_samples < 0) throw OptionError("recover_samples", "must be 0 (all) or more", "e.g. 8192");
  check_cache(o, target);
  if (o.screen_samples < 1) throw OptionError("screen_samples", "must be at least 1", "e.g. 256");
  // Bounded here, as profile's --duration is, so a refusal comes before the work folder exists and names its flag.
  in_range("screen_duration_s", o.screen_duration_s, 0.01, 3600, "seconds of timing a screened variant");
  in_range("duration_s", o.duration_s, 0.01, 3600, "seconds of timing a variant");
  if (o.warmup < 1) throw OptionError("warmup", "must be at least 1", "e.g. 5");
  thread_count("threads", o.threads);
  check_positive("budget_s", o.budget_s, "600");
  check_files(o);
}

}  // namespace lite::optimize
