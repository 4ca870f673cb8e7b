// lite quantize: flags -> QuantizeOptions -> lite::quantize::run -> report printer. The help text for
// --mode and --calib-method comes from the library's tables, so a new scheme or method shows up here
// without touching this file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "budget_deadline.hpp"
#include "command.hpp"
#include "command_line.hpp"
#include "config_flags.hpp"
#include "data_flags.hpp"
#include "decoder_flags.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "timing_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/quantize/calibration.hpp"
#include "lite/quantize/judging.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/verb.hpp"

namespace lite::cli {

namespace {

struct QuantizeState {
  quantize::QuantizeOptions options;
  OutputOptions output;
  EvalDataFlags data;
  ConfigFlags config;
};

std::string mode_help() {
  std::string text = "Quantization mode:";
  for (const auto& m : quantize::modes()) text += std::string("\n  ") + m.name + ": " + m.summary;
  return text;
}

std::string calib_method_help() {
  std::string text = "How activation ranges are chosen:";
  for (const auto& m : quantize::calib_methods()) text += std::string("\n  ") + m.name + ": " + m.description;
  return text;
}

// The options checked; then --budget, which shapes the work softly: a forward that never ends would ignore it,
// so the process ends well past it.
void validate_and_bound(const quantize::QuantizeOptions& o) {
  quantize::validate(o);
  if (o.budget_s) arm_budget_deadline(quantize::verb().name, *o.budget_s, 30, "nothing was written");
}

}  // namespace

Runner setup_quantize(CLI::App& app) {
  auto s = std::make_shared<QuantizeState>();
  auto& o = s->options;
  app.description(
      "Quantize a TorchScript model and prove the gain against frozen float on this machine: exit 1 when slower "
      "(unless --allow-slower) or past --tolerance, the artifact still written. docs/quantize.md");
  name_flag("model", "MODEL");
  name_flag("batches", "--batch");
  name_flag("write_calib_json", "--no-calib-json");
  name_flag("output", "-o");
  name_flag("budget_s", "--budget");
  app.add_option("model", o.model, "TorchScript model file (.pt)");
  app.add_option("-o,--output", o.output, "Artifact path (default: MODEL.<mode tag>.pt, e.g. MODEL.int8.pt)");
  with_values(app.add_option("--mode", o.mode, word_options(mode_help())), quantize::mode_names());
  app.add_option("--calib", o.calib, "Calibration data for static mode (tensor file, .npy, .npz, idx)");
  app.add_option("--calib-samples", o.calib_samples, "Calibrate on the first N samples of --calib");
  with_values(app.add_option("--calib-method", o.calib_method, word_options(calib_method_help())),
              names_of(quantize::calib_methods(), [](const auto& m) { return m.name; }));
  app.add_option("--calib-stats", o.calib_stats, "Reuse the calibration JSON of an earlier run instead of calibrating");
  app.add_flag("--no-calib-json{false}", o.write_calib_json, "Do not write the calibration JSON beside the artifact");
  add_eval_data_flags(app, o, s->data);
  app.add_option("--eval-samples", o.eval_samples,
                 fmt::format("Judge on the first N samples of --eval (default: all for an explicit --mode; auto: "
                             "what float evaluates in {:g} s, at least {})",
                             quantize::kJudgeSeconds, quantize::kMinJudgedSamples));
  app.add_option("--tolerance", o.tolerance,
                 fmt::format("Top-1 points (accuracy or agreement) the result may lose: sensitive layers stay float "
                             "(default: {:g} for --mode auto)",
                             quantize::kAutoTolerance));
  app.add_option("--skip", o.skip, "Keep layers matching this glob in float (repeatable)");
  app.add_option("--only", o.only, "Quantize only layers matching this glob (repeatable)");
  with_values(app.add_option("--qengine", o.qengine, "Engine the consumer will use: onednn or qnnpack"),
              {"onednn", "qnnpack"});
  app.add_option("--batch", o.batches, "Batch sizes latency is measured at")->delimiter(',');
  add_timing_flags(app, o.timing);
  app.add_flag("--dry-run", o.dry_run, "Print the plan (layers, schemes, expected size) and write nothing");
  app.add_flag("--allow-slower", o.allow_slower, "Exit 0 even when the result is slower than the frozen float model");
  app.add_flag("--allow-noisy", o.allow_noisy, "Accept a speedup timed on a busy machine or too large to trust");
  app.add_option("--agreement-floor", o.agreement_floor,
                 "With an explicit --mode and no --tolerance: exit 1 when top-1 agreement with float falls by more "
                 "than this many points");
  app.add_option("--budget", o.budget_s,
                 fmt::format("Seconds the whole command may take; measurements shrink to fit (default: none, each "
                             "measurement keeps within about {:g} s)",
                             quantize::kMeasurementBudget));
  add_decoder_knob_flags(app, o.decoder, "Options");
  add_kv_what_if_flags(app, o.kv_what_if, o.kv_what_if_seconds, "Options");
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);  // a bad --output-format fails before any work
    finish_eval_data_flags(s->data, o);
    return run_verb(app, s->config, s->output, o, validate_and_bound,
                    [](const quantize::QuantizeOptions& o, Progress& progress) {
                      const auto result = quantize::run(o, progress, run_context());
                      return VerbOutcome{quantize::to_report(result), result.gates.passed()};
                    });
  };
}

const SetupRegistration registered{quantize::verb(), setup_quantize};

}  // namespace lite::cli
