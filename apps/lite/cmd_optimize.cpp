// lite optimize: flags -> OptimizeOptions -> validate() -> lite::optimize::run -> report printer. Defaults shown
// in --help come from the options struct (capture_default_str), so they cannot drift from it.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "budget_deadline.hpp"
#include "command.hpp"
#include "command_line.hpp"
#include "config_flags.hpp"
#include "data_flags.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "help_format.hpp"
#include "number_flags.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/optimize/optimize.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::cli {

namespace {

struct OptimizeState {
  optimize::OptimizeOptions options;
  OutputOptions output;
  EvalDataFlags data;
  ConfigFlags config;
};

// The options checked; then --budget, which the search keeps between steps: a forward that never ends would
// ignore it, so the process ends well past it.
void validate_and_bound(const optimize::OptimizeOptions& o) {
  optimize::validate(o);
  if (o.budget_s)
    arm_budget_deadline(optimize::verb().name, *o.budget_s, 60, "the work folder keeps what was measured");
}

void add_target_flags(CLI::App& app, optimize::OptimizeOptions& o) {
  app.add_option("--target-p99", o.target_p99_ms, "Target: p99 latency in ms at --batch (of requests, with --trace)");
  app.add_option("--target-p50", o.target_p50_ms, "Target: median latency in ms at --batch");
  app.add_option("--target-throughput", o.target_throughput, "Target: samples per second at --batch");
  app.add_option("--target-speedup", o.target_speedup, "Target: times faster than the frozen original (median)");
  app.add_option("--batch", o.batch, "Batch size latency is measured at (the service's)")->capture_default_str();
  app.add_option("--max-accuracy-drop", o.max_accuracy_drop,
                 fmt::format("Points of top-1 accuracy (or agreement) the result may lose (default {:g}; needs --eval)",
                             optimize::kDefaultAccuracyDrop));
}

void add_search_flags(CLI::App& app, optimize::OptimizeOptions& o) {
  app.add_option("--prune-ratios", o.prune_ratios, "Structured prune ratios to try (0, no pruning, always is)")
      ->delimiter(',')->capture_default_str();
  app.add_flag("--prune-sensitivity", o.prune_sensitivity,
               "Also prune at the per-group ratios prune's sensitivity analysis picks within the budget (needs --eval)");
  std::vector<std::string> modes{"float"};
  for (const auto& m : quantize::mode_names())
    if (m != "auto") modes.push_back(m);
  with_values(app.add_option("--modes", o.modes, "Quantization modes to try; float is the model frozen"), modes)
      ->delimiter(',')->capture_default_str();
  app.add_option("--data", o.data, "Training data: each pruned model is recovered by distillation from the original");
  app.add_option("--data-labels", o.data_labels, "Labels of an idx --data file");
  app.add_option("--recover-epochs", o.recover_epochs, "Distillation epochs per pruned model")->capture_default_str();
  app.add_option("--recover-samples", o.recover_samples, "Training samples of the recovery (0: all)")
      ->capture_default_str();
  app.add_option("--calib", o.calib, "Calibration data for static int8 (default: --eval)");
  app.add_option("--calib-samples", o.calib_samples, "Calibration samples")->capture_default_str();
  app.add_option("--trace", o.trace, "Request trace: size a cache in front of each variant");
  app.add_option("--trace-format", o.trace_format, "The trace's format (as cache-sim --format)")->capture_default_str();
  decimal_only(app.add_option("--block-tokens", o.block_tokens, "An LLM trace's tokens per KV block (as cache-sim)")
                   ->default_str(""),
               "a whole number of tokens, e.g. 16");
  app.add_option("--hit-latency", o.hit_latency_ms, "What a cache hit costs, ms (needed with --trace)");
  app.add_option("--cache-policies", o.cache_policies, "Cache policies to try")->delimiter(',')->capture_default_str();
  default_in_words(app.add_option("--cache-sizes", o.cache_sizes,
                                  "Cache sizes to simulate, as cache-sim --sizes (default: 16 fractions of the working "
                                  "set, 0.1% to 100%)"));
  app.add_flag("--cache-objects", o.cache_objects, "Size caches in objects instead of bytes");
  app.add_option("--cost-cache-gib", o.cost_cache_gib, "Objective: price of a GiB of cache (with --cost-core-ms)");
  app.add_option("--cost-core-ms", o.cost_core_ms, "Objective: price of a core-ms per request (with --cost-cache-gib)");
}

void add_measurement_flags(CLI::App& app, optimize::OptimizeOptions& o) {
  app.add_option("--screen-samples", o.screen_samples, "Evaluation samples a variant is screened on")->capture_default_str();
  app.add_flag("--exhaustive", o.exhaustive, "Measure every variant fully: no screening (the grid to check a search by)");
  app.add_option("--screen-duration", o.screen_duration_s, "Most seconds of screen timing per variant")->capture_default_str();
  app.add_option("--duration", o.duration_s, "Most seconds of full timing per variant (--exhaustive: all)")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed calls before each timing")->capture_default_str();
  app.add_option("--threads", o.threads, "Intra-op threads (0: libtorch's default)")->capture_default_str();
  app.add_option("--budget", o.budget_s, "Seconds the whole search may take; then the best measured so far wins");
}

}  // namespace

Runner setup_optimize(CLI::App& app) {
  auto s = std::make_shared<OptimizeState>();
  auto& o = s->options;
  name_flag("model", "MODEL");
  name_flag("output", "-o");
  name_flag("target_p99_ms", "--target-p99");
  name_flag("target_p50_ms", "--target-p50");
  name_flag("hit_latency_ms", "--hit-latency");
  name_flag("duration_s", "--duration");
  name_flag("screen_duration_s", "--screen-duration");
  name_flag("budget_s", "--budget");
  app.description(
      "Find the cheapest configuration that meets a latency target: prune ratios x quantization modes (x a cache "
      "in front, with --trace; a decoder with an LLM trace: weights x KV format x prefix cache, for TTFT), "
      "each built, screened, measured and compared. Exit 1 when nothing meets the target.");
  app.add_option("model", o.model, "TorchScript model file (.pt)");
  app.add_option("-o,--output", o.output, "The chosen artifact (default: MODEL.optimized.pt)");
  add_eval_data_flags(app, s->options, s->data);
  add_target_flags(app, o);
  add_search_flags(app, o);
  add_measurement_flags(app, o);
  app.add_option("--work-dir", o.work_dir, "Records of every build and measurement (default: OUTPUT.work); a re-run "
                 "resumes from them");
  app.add_option("--emit-recipe", o.emit_recipe, "Write a lite run recipe that rebuilds the choice and gates it");
  app.add_option("--plot", o.plot, "Write an SVG of the variants (latency vs accuracy, frontier, choice)");
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);
    finish_eval_data_flags(s->data, o);
    return run_verb(app, s->config, s->output, o, validate_and_bound,
                    [](const optimize::OptimizeOptions& o, Progress& progress) {
                      const auto result = optimize::run(o, progress, run_context());
                      return VerbOutcome{optimize::to_report(result), result.gates.passed()};
                    });
  };
}

const SetupRegistration registered{optimize::verb(), setup_optimize};

}  // namespace lite::cli
