// lite quantize's options as data: JSON both ways, the value rules, and the output-path rule (the artifact
// and its calibration sidecar may never be one of the command's inputs). Torch-free.
#include "lite/quantize/options.hpp"

#include <fmt/format.h>

#include "lite/core/atomic_file.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"
#include "lite/quantize/calibration.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

using namespace option_rules;

namespace {

// The artifact and, when written, its calibration JSON: neither may be an input, nor each other.
void check_outputs(const QuantizeOptions& o, const std::filesystem::path& out) {
  FileRoles roles;
  roles.reads("{model}", o.model)
      .reads_optional("{calib}", o.calib)
      .reads_optional("{calib_stats}", o.calib_stats);
  model::add_reads(roles, o);
  roles.writes("output", out);
  if (o.write_calib_json) {
    auto sidecar = out;
    sidecar.replace_extension(".calib.json");
    roles.writes("output", sidecar, "the calibration sidecar");
  }
  roles.check();
}

}  // namespace

std::filesystem::path output_path(const QuantizeOptions& o, const std::string& mode_tag) {
  return o.output.empty() ? derive_output_path(o.model, mode_tag) : o.output;
}

// The one field list of QuantizeOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void quantize_fields(Fields& f, O& o) {
  model::eval_data_fields(f, o)
      .field("model", o.model)
      .field("output", o.output)
      .field("mode", o.mode)
      .field("calib", o.calib)
      .field("calib_samples", o.calib_samples)
      .field("calib_method", o.calib_method)
      .field("calib_stats", o.calib_stats)
      .field("eval_samples", o.eval_samples)
      .field("tolerance", o.tolerance)
      .field("skip", o.skip)
      .field("only", o.only)
      .field("qengine", o.qengine)
      .field("batches", o.batches);
  measure::timing_knob_fields(f, o.timing)
      .field("dry_run", o.dry_run)
      .field("allow_slower", o.allow_slower)
      .field("allow_noisy", o.allow_noisy)
      .field("write_calib_json", o.write_calib_json)
      .field("agreement_floor", o.agreement_floor)
      .field("budget_s", o.budget_s);
  llm::decoder_knob_fields(f, o.decoder)
      .field("kv_what_if", o.kv_what_if)
      .field("kv_what_if_seconds", o.kv_what_if_seconds);
}

void to_json(nlohmann::json& j, const QuantizeOptions& o) {
  OptionWriter w(j);
  quantize_fields(w, o);
}

void from_json(const nlohmann::json& j, QuantizeOptions& o) {
  OptionReader r(j);
  quantize_fields(r, o);
  r.finish();
}

void validate(const QuantizeOptions& o) {
  if (o.model.empty()) throw OptionError("model", "is required", "give the TorchScript model file");
  find_mode(o.mode);
  find_calib_method(o.calib_method);
  at_least("calib_samples", double(o.calib_samples), 1);
  model::validate(o);
  if (o.eval_samples) at_least("eval_samples", double(*o.eval_samples), 1);
  measure::check_batch_sizes("batches", o.batches);
  for (auto b : o.batches)
    for (const auto& spec : o.inputs) model::check_input_size(spec, b);
  if (o.tolerance) in_range("tolerance", *o.tolerance, 0, 100, "points of accuracy the result may lose");
  measure::validate(o.timing);
  in_range("agreement_floor", o.agreement_floor, 0, 100, "points of top-1 agreement with float");
  if (o.budget_s) in_range("budget_s", *o.budget_s, 1, 1e6, "seconds the whole command may take");
  in_range("kv_what_if_seconds", o.kv_what_if_seconds, 0, 1e6, "seconds a decoder's KV-cache what-if may take");
  if (!o.output.empty()) {
    check_outputs(o, o.output);
  } else {
    for (const auto& m : modes())  // auto picks the mode later: every default name must be safe
      if (m.scheme) check_outputs(o, output_path(o, m.tag));
  }
}

void validate_decoder(const QuantizeOptions& o) {
  llm::validate(o.decoder);
  const std::pair<const char*, bool> classifier_only[] = {
      {"calib", o.calib.has_value()}, {"calib_stats", o.calib_stats.has_value()}, {"labels", o.labels.has_value()},
      {"inputs", !o.inputs.empty()}};
  for (const auto& [key, given] : classifier_only)
    if (given)
      throw OptionError(key, "applies to one forward call, and a decoder is quantized by its weights and judged on tokens",
                        "drop it: {eval} takes the decoder's token ids (docs/llm.md)");
  if (o.mode == "static")
    throw OptionError("mode", "static int8 calibrates activations, which a decoder's lite run does not",
                      "use dynamic, weight-int8, weight-int4, fp16, bf16 or auto");
}

}  // namespace lite::quantize
