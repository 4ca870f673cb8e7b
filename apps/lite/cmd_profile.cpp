// lite profile MODEL [MODEL_B]: flags bound straight onto profile::ProfileOptions -> validate -> run -> printer.
#include <CLI/CLI.hpp>

#include "cli_common.hpp"
#include "command.hpp"
#include "config_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/profile/profile.hpp"
#include "number_flags.hpp"

namespace lite::cli {

Runner setup_profile(CLI::App& app) {
  struct State {
    profile::ProfileOptions options;
    std::vector<std::string> input_specs;  // parsed after CLI11 so that a bad spec gets lite's error line
    OutputOptions output;
    ConfigFlags config;
  };
  auto s = std::make_shared<State>();
  auto& o = s->options;
  name_flag("models", "MODEL");
  name_flag("inputs", "--input");
  name_flag("input_files", "--input-file");
  name_flag("duration_s", "--duration");
  name_flag("budget_s", "--budget");
  app.description(
      "Measure a TorchScript model: cold start, steady-state latency percentiles, throughput, memory, per-op cost "
      "(--ops), latency under Poisson load (--qps), accuracy (--eval). With two models, time them interleaved on the "
      "same inputs and report B's speedup over A with a confidence interval and their output agreement.");
  app.add_option("models", o.models, "MODEL.pt, or A.pt B.pt to compare")->expected(1, 2);
  app.add_option("--input", s->input_specs, "Input shape and dtype, e.g. 1x3x224x224 or 8x128:int64; repeat per input")
      ->group("Inputs");
  app.add_option("--input-file", o.input_files, "Input tensor file (torch.save tensor, .npy); repeat per input")
      ->group("Inputs");
  app.add_option("--batch", o.batch, "Batch size: replaces the first dimension of every input")->group("Inputs");
  decimal_only(app.add_option("--seed", o.seed, "Seed for random inputs and load-test arrivals")->group("Inputs"),
               NumberText::unsigned_whole, "a whole number from 0 to 18446744073709551615");
  app.add_option("--warmup", o.warmup, "Untimed warm-up iterations (default 20)")->group("Timing");
  auto* iters = app.add_option("--iterations", o.iterations, "Timed iterations (default: run for --duration)")
                    ->group("Timing");
  app.add_option("--duration", o.duration_s, "Seconds of timed iterations when --iterations is not given (default 2)")
      ->group("Timing")
      ->excludes(iters);
  app.add_option("--budget", o.budget_s,
                 "Seconds the timed measurement may take (default 60; none with --iterations): a slow model gets "
                 "fewer warm-up (at least 2) and timed (at least 3) calls, and a note says so")
      ->group("Timing");
  app.add_option("--threads", o.threads, "Intra-op threads (default: libtorch's default)")->group("Timing");
  app.add_option("--qengine", o.qengine, "Quantized engine for quantized models: onednn (default) or qnnpack")
      ->group("Timing");
  app.add_flag("--ops", o.ops, "Per-operator and per-module breakdown of self time")->group("Analysis");
  app.add_option("--top", o.top, "Rows in the --ops tables (default 15)")->group("Analysis");
  app.add_option("--op-iterations", o.op_iterations, "Forwards profiled with --ops (default 20)")->group("Analysis");
  app.add_option("--trace", o.trace, "Write a Chrome trace of the --ops iterations (chrome://tracing, Perfetto)")
      ->group("Analysis");
  app.add_option("--eval", o.eval, "Data with labels for top-1 accuracy (torch.save dict, .npy, idx)")
      ->group("Analysis");
  app.add_option("--labels", o.labels, "Labels for --eval when they are a separate file (idx, .npy)")
      ->group("Analysis");
  app.add_option("--eval-batch", o.eval_batch, "Batch size for --eval (default 64)")->group("Analysis");
  app.add_option("--qps", o.qps, "Load mode: offered request rates, e.g. --qps 100,200,400")
      ->delimiter(',')
      ->group("Load");
  app.add_option("--requests", o.requests, "Requests per --qps rate")->group("Load");
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);  // a bad --output-format fails before any work
    for (const auto& text : s->input_specs) o.inputs.push_back(model::parse_input_spec(text));
    return run_verb(
        app, s->config, s->output, o, [](const profile::ProfileOptions& o) { profile::validate(o); },
        [](const profile::ProfileOptions& o, Progress& progress) {
          return VerbOutcome{profile::to_report(profile::run(o, progress))};  // profile has no gates: exit 0
        });
  };
}

}  // namespace lite::cli
