#pragma once
// The evaluation-data flags profile, quantize, prune and optimize share, bound onto the one fragment of their
// options that holds them (model::EvalData): one wording and one meaning each, the rules in model/eval_data.cpp.
// Header-only: only lite-torch's commands use it, and the torch-free `lite` links no model code.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "flag_wording.hpp"
#include "lite/model/eval_data.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::cli {

// What the flags hold until CLI11 has parsed: --input specs are parsed afterwards, so a bad one gets lite's error line.
struct EvalDataFlags {
  std::vector<std::string> input_specs;
};

// --eval, --labels, --eval-batch and --input. `inputs_group` / `eval_group`: the help sections, or "" for the verb's
// default one (CLI11 hides an option whose group is "").
inline void add_eval_data_flags(CLI::App& app, model::EvalData& d, EvalDataFlags& flags,
                                const std::string& inputs_group = {}, const std::string& eval_group = {}) {
  name_flag("inputs", "--input");
  auto in = [](CLI::Option* option, const std::string& group) { return group.empty() ? option : option->group(group); };
  in(app.add_option("--input", flags.input_specs,
                    "Input shape[:dtype] when the model declares none, e.g. 1x3x224x224 or 8x128:int64; one per input"),
     inputs_group);
  in(app.add_option("--eval", d.eval,
                    "Evaluation data: top-1 accuracy with labels, else agreement with the reference"),
     eval_group);
  in(app.add_option("--labels", d.labels, "Labels of --eval in a file of their own (idx, .npy)"),
     eval_group);
  in(app.add_option("--eval-batch", d.eval_batch,
                    "Batch size of the untimed passes over data"),
     eval_group);
}

// After parsing: the --input specs into the fragment (model::parse_input_spec's errors name the flag).
inline void finish_eval_data_flags(const EvalDataFlags& flags, model::EvalData& d) {
  for (const auto& spec : flags.input_specs) d.inputs.push_back(model::parse_input_spec(spec));
}

}  // namespace lite::cli
