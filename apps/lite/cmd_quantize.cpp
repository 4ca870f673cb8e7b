// lite quantize: flags -> QuantizeOptions -> lite::quantize::run -> report printer. The help text for
// --mode and --calib-method comes from the library's tables, so a new scheme or method shows up here
// without touching this file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <memory>

#include "cli_common.hpp"
#include "command.hpp"
#include "config_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/quantize/calibration.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::cli {

namespace {

struct QuantizeState {
  quantize::QuantizeOptions options;
  OutputOptions output;
  std::vector<std::string> input_specs;  // parsed after CLI11 so that a bad spec gets lite's error line
  ConfigFlags config;
};

std::string mode_help() {
  std::string text = "Quantization mode (default auto); each run measures what the modes buy on its own machine:";
  for (const auto& m : quantize::modes()) text += std::string("\n  ") + m.name + ": " + m.summary;
  return text;
}

std::string calib_method_help() {
  std::string text = "How activation ranges are chosen from the calibration data (default mse):";
  for (const auto& m : quantize::calib_methods()) text += std::string("\n  ") + m.name + ": " + m.description;
  return text;
}

// The options checked; then --budget, which shapes the work softly: a forward that never ends would ignore it,
// so the process ends well past it.
void validate_and_bound(const quantize::QuantizeOptions& o) {
  quantize::validate(o);
  if (o.budget_s)
    arm_hard_deadline(*o.budget_s * 2 + 30,
                      fmt::format("lite quantize: error: --budget: still running {:.0f} s after a budget of {:g} s "
                                  "(a forward that does not end?); nothing was written; check the model with "
                                  "'lite profile', or give a larger --budget", *o.budget_s * 2 + 30, *o.budget_s),
                      exit_bad_input);
}

}  // namespace

Runner setup_quantize(CLI::App& app) {
  auto s = std::make_shared<QuantizeState>();
  auto& o = s->options;
  app.description(
      "Quantize a TorchScript model and prove the gain: the artifact is measured against the frozen float model on "
      "this machine (size, latency at each --batch, accuracy or agreement). Exit 1 when it is slower (unless "
      "--allow-slower) or misses --tolerance; the artifact is still written.");
  name_flag("model", "MODEL");
  name_flag("inputs", "--input");
  name_flag("batches", "--batch");
  name_flag("duration_s", "--duration");
  name_flag("write_calib_json", "--no-calib-json");
  name_flag("output", "-o");
  name_flag("budget_s", "--budget");
  app.add_option("model", o.model, "TorchScript model file (.pt)");
  app.add_option("-o,--output", o.output, "Artifact path (default: MODEL.<int8|fp16|bf16|weight-int8|weight-int4>.pt)");
  app.add_option("--mode", o.mode, word_options(mode_help()));
  app.add_option("--calib", o.calib,
                 "Calibration data for static mode (torch.save tensor, {\"x\",\"y\"} dict, list or tuple; .npy, "
                 ".npz, idx)");
  app.add_option("--calib-samples", o.calib_samples, "Calibrate on the first N samples of --calib (default 256)");
  app.add_option("--calib-method", o.calib_method, word_options(calib_method_help()));
  app.add_option("--calib-stats", o.calib_stats,
                 "Reuse the calibration JSON of an earlier run (MODEL.int8.calib.json) instead of calibrating");
  app.add_flag("--no-calib-json{false}", o.write_calib_json, "Do not write the calibration JSON beside the artifact");
  app.add_option("--eval", o.eval,
                 "Evaluation data: with labels, top-1 accuracy before and after; without, agreement with float");
  app.add_option("--labels", o.labels, "Labels for an idx --eval file (e.g. t10k-labels-idx1-ubyte.gz)");
  app.add_option("--tolerance", o.tolerance,
                 "Points of top-1 accuracy (or of top-1 agreement without labels) the result may lose; the most "
                 "sensitive layers stay float until it holds (auto mode: 1.0 by default)");
  app.add_option("--skip", o.skip, "Keep layers matching this glob in float (repeatable), e.g. 'features.0'");
  app.add_option("--only", o.only, "Quantize only layers matching this glob (repeatable)");
  app.add_option("--qengine", o.qengine,
                 "Quantized engine: onednn (default) or qnnpack; the consumer must select the same");
  app.add_option("--input", s->input_specs,
                 "Input shape when the model declares none, e.g. 1x3x224x224 (batch is replaced); without it, "
                 "inferred from the first layer");
  app.add_option("--batch", o.batches, "Batch sizes to measure latency at (default 1,64)")->delimiter(',');
  app.add_option("--threads", o.threads, "Intra-op threads (default: libtorch's default)");
  app.add_option("--warmup", o.warmup, "Untimed iterations before each measurement (default 5)");
  app.add_option("--iterations", o.iterations, "Timed iterations per measurement (default: run for --duration)");
  app.add_option("--duration", o.duration_s, "Seconds per measurement when --iterations is not given (default 1)");
  app.add_option("--eval-batch", o.eval_batch, "Batch size for evaluation and calibration passes (default 64)");
  app.add_flag("--dry-run", o.dry_run, "Print the plan (layers, scheme per layer, expected size); write nothing");
  app.add_flag("--allow-slower", o.allow_slower, "Exit 0 even when the result is slower than the frozen float model");
  app.add_option("--agreement-floor", o.agreement_floor,
                 "With an explicit --mode and no --tolerance: exit 1 (artifact still written) when top-1 agreement "
                 "with the float model falls by more than this many points (default 5)");
  app.add_option("--budget", o.budget_s,
                 "Seconds the whole command may take: measurements get fewer calls or skip batch sizes, auto skips "
                 "modes it has no time for (default: no bound; each measurement keeps within about 10 s)");
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);  // a bad --output-format fails before any work
    for (const auto& spec : s->input_specs) o.inputs.push_back(model::parse_input_spec(spec));
    return run_verb(app, s->config, s->output, o, validate_and_bound,
                    [](const quantize::QuantizeOptions& o, Progress& progress) {
                      const auto result = quantize::run(o, progress);
                      return VerbOutcome{quantize::to_report(result), result.gates.passed()};
                    });
  };
}

}  // namespace lite::cli
