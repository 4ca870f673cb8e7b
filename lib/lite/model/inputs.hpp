#pragma once
// What to feed a model: resolved from --input-file, --input specs, the shapes the model declares, or a
// sample of the data file; and a forward call whose failures become one-line input errors.
#include <torch/script.h>

#include <filesystem>
#include <optional>
#include <vector>

#include "lite/core/error.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/input_spec.hpp"
#include "lite/model/load.hpp"

namespace lite::model {

struct InputOptions {
  std::vector<InputSpec> specs;                  // --input, one per model input
  std::vector<std::filesystem::path> files;      // --input-file, one per model input
  int64_t batch = 0;                             // --batch; 0 keeps the shapes as given
  uint64_t seed = 0;                             // random inputs are seeded and reproducible
};

// Order of precedence: --input-file, --input, the model's declared inputs (lite.json), a batch of
// `data`, a shape inferred from the model's first layers (infer_inputs.hpp; `note`, when given, receives the
// report note saying so). Throws InputError naming the model and the missing flag when none applies.
std::vector<torch::Tensor> resolve_inputs(const LoadedModel& model, const InputOptions& options,
                                          const Dataset* data = nullptr, std::string* note = nullptr);

// `x` with exactly `batch` samples along dimension 0: the first ones, or all of them repeated in turn.
// A batch <= 0 or a scalar leaves `x` as it is.
torch::Tensor fit_batch(torch::Tensor x, int64_t batch);

// Every input of `data` fitted to `batch` samples alike: the arguments of one forward call.
std::vector<torch::Tensor> fit_batch_inputs(const Dataset& data, int64_t batch);

// The specs describing `inputs` (shape and dtype), for reports and provenance.
std::vector<InputSpec> describe_inputs(const std::vector<torch::Tensor>& inputs);

// Seeded random tensor for a spec: standard normal for floating types, [0, 10) for integers.
torch::Tensor random_input(const InputSpec& spec, uint64_t seed);

// "float32" <-> torch::kFloat32, for the dtypes --input takes (UsageError otherwise) and for reports
// (any scalar type; c10's name for the ones lite has no name for).
torch::ScalarType scalar_type_of(const std::string& dtype);
std::string dtype_name(torch::ScalarType type);

// A forward that failed: an InputError (the input is blamed) that keeps libtorch's reason apart, so that a caller
// who knows the input is fine (the float model ran it) can blame the model it built instead.
class ForwardError : public InputError {
 public:
  ForwardError(const std::string& file, const std::string& inputs, const std::string& reason);
  const std::string& inputs() const { return inputs_; }  // "1x3x224x224, 1x16:int64"
  const std::string& reason() const { return reason_; }

 private:
  std::string inputs_, reason_;
};

// module.forward(inputs); a libtorch failure becomes ForwardError("<model>: forward failed on input
// 1x3x224x224: <reason>; pass --input with the shape and dtype the model expects").
c10::IValue run_forward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs,
                        const std::filesystem::path& model_path);

// The tensor a model's output is judged by: the output itself, or the first tensor of a tuple, list or
// dict. Throws InputError when the output holds no tensor.
torch::Tensor primary_output(const c10::IValue& output, const std::filesystem::path& model_path);

}  // namespace lite::model
