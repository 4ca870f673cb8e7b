#pragma once
// The evaluation-data options every verb that judges a model shares (profile, quantize, prune, optimize): the keys
// "eval", "labels", "eval_batch" and "inputs", with one field list, one set of rules and one meaning each, spliced
// into each verb's options as timing's knobs are (measure::TimingKnobs). A verb's options struct derives from it,
// so `o.eval` reads the same everywhere. The CLI binds them once (apps/lite/data_flags.hpp). Torch-free.
//
//   eval        evaluation data: top-1 accuracy where it has labels, else agreement with the reference model
//   labels      the labels of eval, when they are a file of their own (idx, .npy)
//   eval_batch  the batch size of untimed passes over data (evaluation; calibration, gradients where the verb has them)
//   inputs      input shapes (and dtypes) when the model declares none, one per input of forward
#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "lite/core/file_roles.hpp"
#include "lite/model/input_spec.hpp"

namespace lite::model {

struct EvalData {
  std::optional<std::filesystem::path> eval;
  std::optional<std::filesystem::path> labels;
  int64_t eval_batch = 64;
  std::vector<InputSpec> inputs;
};

// The fragment's one field list, spliced into a verb's own (OptionReader / OptionWriter).
template <class Fields, class Data>
Fields& eval_data_fields(Fields& f, Data& d) {
  return f.field("eval", d.eval).field("labels", d.labels).field("eval_batch", d.eval_batch).field("inputs", d.inputs);
}

// The fragment's value rules: OptionError naming the key.
void validate(const EvalData& d);
// The fragment's input files, for a verb's one path check (core/file_roles.hpp).
void add_reads(FileRoles& roles, const EvalData& d);

}  // namespace lite::model
