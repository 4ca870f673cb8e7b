#include "lite/model/inputs.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"
#include "lite/model/infer_inputs.hpp"
#include "lite/model/probe_inputs.hpp"
#include "lite/model/torch_errors.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {
// lite's names of the scalar types, for --input and for every report.
const std::pair<const char*, torch::ScalarType> kDtypes[] = {
    {"float32", torch::kFloat32}, {"float16", torch::kFloat16}, {"bfloat16", torch::kBFloat16},
    {"float64", torch::kFloat64}, {"int64", torch::kInt64},     {"int32", torch::kInt32},
    {"int8", torch::kInt8},       {"uint8", torch::kUInt8},     {"bool", torch::kBool},
    {"qint8", torch::kQInt8},     {"quint8", torch::kQUInt8},   {"qint32", torch::kQInt32},
};
}  // namespace

std::string dtype_name(torch::ScalarType t) {
  for (const auto& [name, type] : kDtypes)
    if (type == t) return name;
  return c10::toString(t);
}

torch::ScalarType scalar_type_of(const std::string& dtype) {
  const auto& accepted = input_dtypes();  // the dtypes --input takes, a subset of kDtypes
  if (std::find(accepted.begin(), accepted.end(), dtype) != accepted.end())
    for (const auto& [name, type] : kDtypes)
      if (dtype == name) return type;
  throw_unknown_name("inputs", "dtype", dtype, accepted);
}

torch::Tensor fit_batch(torch::Tensor x, int64_t batch) {
  if (batch <= 0 || x.dim() == 0 || x.size(0) == batch) return x;
  // No samples to repeat: narrow throws (start + length exceeds the dimension).
  if (x.size(0) > batch || x.size(0) == 0) return x.narrow(0, 0, batch).contiguous();
  // Repeat samples to reach the requested batch.
  int64_t reps = (batch + x.size(0) - 1) / x.size(0);
  std::vector<int64_t> rep(x.dim(), 1);
  rep[0] = reps;
  return x.repeat(rep).narrow(0, 0, batch).contiguous();
}

torch::Tensor random_input(const InputSpec& spec, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  auto type = scalar_type_of(spec.dtype);
  if (c10::isFloatingType(type))
    return at::randn(spec.shape, gen, torch::TensorOptions().dtype(torch::kFloat32)).to(type);
  return at::randint(0, 10, spec.shape, gen, torch::TensorOptions().dtype(type));
}

std::vector<torch::Tensor> fit_batch_inputs(const Dataset& data, int64_t batch) {
  std::vector<torch::Tensor> inputs;
  for (const auto& input : data.inputs()) inputs.push_back(fit_batch(input, batch));
  return inputs;
}

namespace {

std::optional<int64_t> batch_of(const InputOptions& o) { return o.batch > 0 ? std::optional<int64_t>(o.batch) : std::nullopt; }

// Samples of `x` repeated or cut to the batch: the batch must fit in memory (check_input_size's bound).
torch::Tensor fit_checked_batch(const torch::Tensor& x, const InputOptions& o) {
  if (o.batch > 0) check_input_size({x.sizes().vec(), dtype_name(x.scalar_type())}, o.batch);
  return fit_batch(x, o.batch);
}

// A shape lite did not get from the user (the model's lite.json, or inferred) must fit in memory too: an absurd
// declaration is the model's problem, named as such.
void check_shape_fits(const InputSpec& spec, const InputOptions& o, const LoadedModel& model) {
  if (!o.specs.empty() || o.batch > 0) return check_input_size(spec, batch_of(o));
  try {
    check_input_size(spec, std::nullopt);
  } catch (const OptionError& e) {
    throw InputError(model.path.string(), "declares an input that does not fit: " + e.problem(),
                     "pass {inputs} SHAPE with the shape the model really takes");
  }
}

// Fitting a guessed size costs trial forwards: once per model file (by content) per process, since a command
// resolves its inputs once per batch size.
void fit_once(const LoadedModel& model, InferredInputs& inferred) {
  if (model.sha256.empty()) return fit_inferred_sizes(model.module, inferred);
  static std::mutex mutex;
  static std::map<std::string, InferredInputs> fitted;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = fitted.find(model.sha256);
  if (it == fitted.end()) {
    fit_inferred_sizes(model.module, inferred);
    it = fitted.emplace(model.sha256, inferred).first;
  }
  inferred = it->second;
}

}  // namespace

std::vector<torch::Tensor> resolve_inputs(const LoadedModel& model, const InputOptions& o, const Dataset* data,
                                          std::string* note) {
  std::vector<torch::Tensor> inputs;
  if (!o.files.empty()) {
    for (const auto& f : o.files) inputs.push_back(fit_checked_batch(load_dataset(f).x, o));
    return inputs;
  }
  std::vector<InputSpec> specs = o.specs;
  if (specs.empty() && !model.declared_inputs_problem.empty())
    throw InputError(model.path.string(), "its lite.json declares an input shape lite cannot use: " +
                                              model.declared_inputs_problem,
                     "pass {inputs} SHAPE with the shape the model really takes");
  if (specs.empty()) specs = model.declared_inputs;
  if (specs.empty() && !data) {
    if (auto inferred = infer_inputs(model.module)) {
      fit_once(model, *inferred);
      specs = inferred->specs;
      if (note) *note = inferred_inputs_note(*inferred);
    }
  }
  if (!specs.empty()) {
    for (const auto& spec : specs) check_shape_fits(spec, o, model);
    specs = with_batch(specs, o.batch);
    for (size_t i = 0; i < specs.size(); ++i) inputs.push_back(random_input(specs[i], o.seed + i));
    return inputs;
  }
  if (data) {
    InputOptions one = o;
    one.batch = o.batch > 0 ? o.batch : 1;
    for (const auto& input : data->inputs()) inputs.push_back(fit_checked_batch(input, one));
    return inputs;
  }
  throw InputError(model.path.string(), "the model carries no input shape",
                   "pass {inputs} SHAPE (e.g. {inputs} 1x3x224x224, one per model input) or {input_files} FILE");
}

std::vector<InputSpec> describe_inputs(const std::vector<torch::Tensor>& inputs) {
  std::vector<InputSpec> specs;
  for (const auto& t : inputs) specs.push_back({t.sizes().vec(), dtype_name(t.scalar_type())});
  return specs;
}

ForwardError::ForwardError(const std::string& file, const std::string& inputs, const std::string& reason)
    : InputError(file, "forward failed on input " + inputs + ": " + reason,
                 "pass {inputs} with the shape and dtype the model expects"),
      inputs_(inputs),
      reason_(reason) {}

c10::IValue run_forward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs, const fs::path& model_path) {
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  try {
    return module.forward(args);
  } catch (const std::exception& e) {
    std::vector<std::string> shapes;
    for (const auto& s : describe_inputs(inputs)) shapes.push_back(to_string(s));
    throw ForwardError(model_path.string(), join(shapes, ", "), torch_error_reason(e));
  }
}

namespace {
torch::Tensor first_tensor(const c10::IValue& out) {
  if (out.isTensor()) return out.toTensor();
  if (out.isTuple())
    for (const auto& e : out.toTupleRef().elements())
      if (e.isTensor()) return e.toTensor();
  if (out.isList())
    for (const auto& e : out.toListRef())
      if (e.isTensor()) return e.toTensor();
  if (out.isGenericDict())
    for (const auto& item : out.toGenericDict())
      if (item.value().isTensor()) return item.value().toTensor();
  return {};
}
}  // namespace

torch::Tensor primary_output(const c10::IValue& out, const fs::path& model_path) {
  const torch::Tensor t = first_tensor(out);
  // Nothing to compare or score (an output layer with 0 features): every agreement and accuracy would be empty.
  if (t.defined() && t.numel() == 0)
    throw InputError(model_path.string(), "returns an empty output (shape " + c10::str(t.sizes()) + ")",
                     "give lite a model that outputs at least one value per sample");
  if (t.defined()) return t;
  throw InputError(model_path.string(), "model output (" + out.tagKind() + ") holds no tensor",
                   "lite compares models by their first tensor output");
}

}  // namespace lite::model
