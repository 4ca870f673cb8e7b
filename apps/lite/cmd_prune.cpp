// lite prune: flags -> PruneOptions -> validate() -> lite::prune::run -> report printer. The --criterion
// help comes from the library's criteria table. Option errors come back keyed by option ("round_to");
// cli_main.cpp words them with the flag that sets it ("--round-to").
#include <CLI/CLI.hpp>
#include <memory>

#include "command.hpp"
#include "command_line.hpp"
#include "config_flags.hpp"
#include "data_flags.hpp"
#include "decoder_flags.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "timing_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/prune/prune.hpp"
#include "lite/prune/verb.hpp"

namespace lite::cli {

namespace {

struct PruneState {
  prune::PruneOptions options;
  OutputOptions output;
  std::vector<std::string> ratios;  // "R" or "GLOB=R": parsed into ratio / layer_ratios
  EvalDataFlags data;
  ConfigFlags config;
};

std::string criterion_help() {
  std::string text = "How channels are ranked within their group:";
  for (const auto& c : prune::criterion_infos()) text += std::string("\n  ") + c.name + ": " + c.description;
  return text;
}

}  // namespace

Runner setup_prune(CLI::App& app) {
  auto s = std::make_shared<PruneState>();
  auto& o = s->options;
  name_flag("model", "MODEL");
  name_flag("output", "-o");
  name_flag("ratio", "--ratio");
  name_flag("layer_ratios", "--ratio");
  name_flag("batches", "--batch");
  app.description(
      "Prune a TorchScript model. Structured (default): remove whole channels that a dependency graph proves safe, "
      "so the artifact is smaller and faster. Unstructured (--sparsity): zero the smallest weights. The artifact is "
      "measured against the original; exit 1 when --tolerance is missed (the artifact is still written). A decoder "
      "(docs/llm.md) loses KV heads (--heads) and MLP width (--ratio). Details: docs/prune.md.");
  app.add_option("model", o.model, "TorchScript model file (.pt)");
  app.add_option("-o,--output", o.output, "Artifact path (default: MODEL.pruned.pt, or MODEL.sparse.pt)");
  app.add_option("--ratio", s->ratios,
                 "Fraction of each group's channels (a decoder: MLP width) to remove, in [0, 1), or GLOB=R for matching layers (repeatable)");
  app.add_option("--heads", o.heads,
                 "Decoder: fraction of each attention's KV heads to remove, each with its query heads");
  app.add_flag("--global", o.global, "Rank channels across all groups and remove --ratio of all channels");
  app.add_option("--global-floor", o.global_floor, "With --global: every group keeps at least this fraction");
  with_values(app.add_option("--criterion", o.criterion, word_options(criterion_help())),
              names_of(prune::criterion_infos(), [](const auto& c) { return c.name; }));
  app.add_option("--data", o.data, "Samples for --criterion taylor (tensor or dict file, .npy, idx)");
  app.add_option("--data-samples", o.data_samples, "Use the first N samples of --data");
  app.add_option("--exclude", o.exclude, "Keep the channels of layers matching this glob (repeatable)");
  app.add_option("--round-to", o.round_to, "Keep channel counts at multiples of N where possible");
  app.add_flag("--structured", o.structured, "Remove whole channels (the default)");
  app.add_flag("--unstructured", o.unstructured, "Zero single weights instead (needs --sparsity)");
  app.add_option("--sparsity", o.sparsity, "Unstructured: fraction of each conv/linear weight set to zero");
  add_eval_data_flags(app, o, s->data);
  app.add_option("--tolerance", o.tolerance, "Top-1 points (accuracy or agreement) the result may lose; exit 1 beyond");
  app.add_option("--agreement-floor", o.agreement_floor,
                 "Without --tolerance: exit 1 when top-1 agreement with the original falls by more than this many "
                 "points");
  app.add_flag("--sensitivity", o.sensitivity,
               "Prune each group alone at each --sensitivity-ratios value and measure; write CSV and SVG, no model");
  app.add_option("--sensitivity-ratios", o.sensitivity_ratios, "Ratios the sensitivity analysis tries")->delimiter(',');
  app.add_flag("--dry-run", o.dry_run, "Print the groups and the plan (channels kept, parameters) and write nothing");
  app.add_option("--batch", o.batches, "Batch sizes latency is measured at")->delimiter(',');
  add_decoder_knob_flags(app, o.decoder, "Options");
  add_timing_flags(app, o.timing);
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    auto& o = s->options;
    resolve_format(s->output);
    finish_eval_data_flags(s->data, o);
    for (const auto& text : s->ratios) {
      auto r = prune::parse_ratio(text);
      if (r.glob.empty())
        o.ratio = r.ratio;
      else
        o.layer_ratios.push_back(r);
    }
    return run_verb(
        app, s->config, s->output, o, [](const prune::PruneOptions& o) { prune::validate(o); },
        [](const prune::PruneOptions& o, Progress& progress) {
          const prune::PruneResult result = prune::run(o, progress, run_context());
          return VerbOutcome{prune::to_report(result), result.gates.passed()};
        });
  };
}

const SetupRegistration registered{prune::verb(), setup_prune};

}  // namespace lite::cli
