// The run's inputs besides the options, each checked before any work so that a bad one is named before anything is
// built or written: the model's quantizable layers, the {calib} and {eval} data (one sample run through the model),
// the calibration statistics of an earlier run, and what calibrates static mode when {calib} is not given.
#include <algorithm>

#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/quantize/run_internal.hpp"

namespace fs = std::filesystem;

namespace lite::quantize {

namespace {

// Runs one sample of `data` through the float model so that data of the wrong shape is reported
// against the data file, before any work.
void check_fits(torch::jit::Module& module, const model::Dataset& data, const fs::path& model_path, const char* flag) {
  torch::NoGradGuard no_grad;
  const auto inputs = model::batch_inputs(data, 0, 1);
  std::vector<std::string> shapes;
  for (const auto& t : data.inputs()) shapes.push_back(c10::str(t.sizes()));
  try {
    module.forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
  } catch (const std::exception& e) {
    throw InputError(data.source.string(),
                     "samples of shape " + join(shapes, ", ") + " do not fit " + model_path.string() + ": " +
                         model::torch_error_reason(e),
                     std::string("pass ") + flag + " data shaped like the model's input");
  }
}

}  // namespace

// Calibration data of up to this many input bytes runs as one batch: a histogram method then needs one
// forward pass instead of two (observers.cpp's phase 3). Above it, batches of {eval_batch} bound the memory.
constexpr int64_t kOneBatchCalibrationBytes = 32 << 20;

int64_t calibration_batch(const model::Dataset* data, int64_t eval_batch) {
  if (!data || data->size() == 0) return eval_batch;
  int64_t bytes = 0;
  for (const auto& t : data->inputs()) bytes += t.numel() * static_cast<int64_t>(t.element_size());
  return bytes <= kOneBatchCalibrationBytes ? std::max(eval_batch, data->size()) : eval_batch;
}

// Reads the calibration JSON of an earlier run (calib_stats) for reuse; warns when it was made for another model.
CalibrationStats read_calibration_stats(const fs::path& path, const model::LoadedModel& source, QuantizeResult& r) {
  // A user's file: bounded depth and size, no repeated keys, a regular file (core/json_input.hpp).
  const nlohmann::json j =
      read_json_input_file(path, "calibration file", "pass the .calib.json an earlier lite quantize run wrote");
  CalibrationStats stats = parse_calibration_document(j, path.string());
  if (!stats.model_sha256.empty() && stats.model_sha256 != source.sha256)
    r.findings.push_back({"warning", "the calibration file was made for another model (sha256 differs)", "",
                          "recalibrate with {calib} if accuracy suffers"});
  return stats;
}

// The model's layers, checked: a model with nothing to quantize, or a glob that matches no layer, is an input error.
void find_model_layers(const model::LoadedModel& source, const QuantizeOptions& o, QuantizeResult& r) {
  r.model = source.path.string();
  r.model_bytes = source.file_bytes;
  r.layers = find_layers(source.module);
  r.float_only_layers = find_float_only_layers(source.module);
  if (r.layers.empty())
    throw InputError(source.path.string(), "has no quantizable layers (no convolution or linear layer in forward)",
                     "lite quantize works on models with Conv1d/2d/3d or Linear layers");
  check_layer_globs(r.layers, o.skip, o.only);
}

// {calib} and {eval}, each checked against the model before any work.
void load_data(Context& c) {
  const auto& o = c.o;
  if (o.calib) {
    c.calib = model::take_first(model::load_model_data(c.source.module, *o.calib), o.calib_samples);
    check_fits(c.source.module, *c.calib, c.source.path, "{calib}");
  }
  if (o.eval) {
    c.eval = model::load_model_data(c.source.module, *o.eval, o.labels);
    check_fits(c.source.module, *c.eval, c.source.path, "{eval}");
  }
}

CalibrationFallback calibration_fallback(const Context& c, bool wants_static, bool reused, const ModeEntry& requested,
                                         QuantizeResult& r) {
  CalibrationFallback out;
  if (!wants_static || c.calib || reused) return out;
  if (c.eval) {
    out.from_eval = model::take_first(*c.eval, c.o.calib_samples);
    r.notes.push_back(
        "static mode was calibrated on the {eval} data (no {calib} given): the accuracy shown is "
        "optimistic; pass separate {calib} data for an honest estimate");
  } else if (requested.scheme) {
    throw OptionError("calib", "static mode needs calibration data",
                      "give samples shaped like the model input ({calib} FILE), or {calib_stats} FILE");
  } else {
    out.problem = "needs calibration data ({calib})";
  }
  return out;
}

void set_up_calibrator(Context& c, const model::Dataset* calib_data, const std::optional<CalibrationStats>& reused,
                       const CalibMethodEntry& method) {
  if (!calib_data && !reused) return;
  c.calibrator = std::make_unique<Calibrator>(calib_data, calibration_batch(calib_data, c.o.eval_batch), method,
                                              c.source.path, c.progress);
  if (reused) c.calibrator->preload(*reused);
  c.calibrator->stats().model_sha256 = c.source.sha256;
}

}  // namespace lite::quantize
