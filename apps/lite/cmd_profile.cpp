// lite profile MODEL [MODEL_B]: flags bound straight onto profile::ProfileOptions -> validate -> run -> printer.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "command.hpp"
#include "config_flags.hpp"
#include "data_flags.hpp"
#include "decoder_flags.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "help_format.hpp"
#include "number_flags.hpp"
#include "renamed_flags.hpp"
#include "timing_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/profile/profile.hpp"
#include "lite/profile/verb.hpp"

namespace lite::cli {

namespace {

// Decoders (docs/llm.md): any of these profiles generation; a model whose forward takes a KV cache needs none.
void add_decoder_flags(CLI::App& app, profile::ProfileOptions& o) {
  add_decoder_knob_flags(app, o.decoder, "Decoder");
  app.add_option("--prompts", o.prompts, "Decoder: prompt token ids, int64 [N, T] (tensor file, .npy)")->group("Decoder");
  app.add_option("--prefill-cost-out", o.prefill_cost_out,
                 "Decoder: write the prefill-cost table lite cache-sim --prefill-cost-from reads")
      ->group("Decoder");
}

}  // namespace

Runner setup_profile(CLI::App& app) {
  struct State {
    profile::ProfileOptions options;
    EvalDataFlags data;
    OutputOptions output;
    ConfigFlags config;
  };
  auto s = std::make_shared<State>();
  auto& o = s->options;
  name_flag("models", "MODEL");
  name_flag("input_files", "--input-file");
  name_flag("budget_s", "--budget");
  app.description(
      "Measure a TorchScript model: cold start, latency percentiles, throughput, memory, per-op cost (--ops), latency "
      "under load (--qps), accuracy (--eval). With two models, time them interleaved and report B's speedup over A "
      "with a confidence interval. A decoder (docs/llm.md) is timed as it generates: time to first token, time per "
      "token, KV-cache bytes. Details: docs/profile.md.");
  app.add_option("models", o.models, "MODEL.pt, or A.pt B.pt to compare")->expected(1, 2);
  add_eval_data_flags(app, o, s->data, "Inputs", "Analysis");
  app.add_option("--input-file", o.input_files, "Input tensor file (tensor file, .npy); repeat per input")
      ->group("Inputs");
  app.add_option("--batch", o.batch, "Batch size latency is measured at: replaces the first dimension of every input")->group("Inputs");
  decimal_only(app.add_option("--seed", o.seed, "Seed for random inputs and load-test arrivals")->group("Inputs"),
               "a whole number from 0 to 18446744073709551615");
  add_timing_flags(app, o.timing, "Timing");
  app.add_option("--budget", o.budget_s,
                 fmt::format("Seconds the timed measurement may take; a slow model gets fewer calls and a note "
                             "(default: {:g}, none with --iterations)",
                             measure::kDefaultProfileBudget))
      ->group("Timing");
  with_values(app.add_option("--qengine", o.qengine, "Quantized engine for quantized models, onednn or qnnpack"),
              {"onednn", "qnnpack"})
      ->group("Timing");
  app.add_flag("--ops", o.ops, "Per-operator and per-module breakdown of self time")->group("Analysis");
  app.add_option("--top", o.top, "Rows in the --ops tables")->group("Analysis");
  app.add_option("--op-iterations", o.op_iterations, "Forwards profiled with --ops")->group("Analysis");
  app.add_option("--chrome-trace", o.chrome_trace,
                 "Write a Chrome trace of the --ops iterations (chrome://tracing, Perfetto)")
      ->group("Analysis");
  add_renamed_flag(app, "--trace", "chrome_trace", o.chrome_trace);  // a request trace in optimize
  app.add_option("--qps", o.qps, "Load mode: offered request rates, e.g. --qps 100,200,400")
      ->delimiter(',')
      ->group("Load");
  default_in_words(app.add_option("--requests", o.requests, "Requests per --qps rate (needed with --qps)"))
      ->group("Load");
  add_decoder_flags(app, o);
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);  // a bad --output-format fails before any work
    finish_eval_data_flags(s->data, o);
    return run_verb(
        app, s->config, s->output, o, [](const profile::ProfileOptions& o) { profile::validate(o); },
        [](const profile::ProfileOptions& o, Progress& progress) {
          return VerbOutcome{profile::to_report(profile::run(o, progress))};  // profile has no gates: exit 0
        });
  };
}

const SetupRegistration registered{profile::verb(), setup_profile};

}  // namespace lite::cli
