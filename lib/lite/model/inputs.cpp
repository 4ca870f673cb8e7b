#include "lite/model/inputs.hpp"

#include <algorithm>

#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"
#include "lite/model/infer_inputs.hpp"
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

std::vector<torch::Tensor> resolve_inputs(const LoadedModel& model, const InputOptions& o, const Dataset* data,
                                          std::string* note) {
  std::vector<torch::Tensor> inputs;
  if (!o.files.empty()) {
    for (const auto& f : o.files) inputs.push_back(fit_batch(load_dataset(f).x, o.batch));
    return inputs;
  }
  std::vector<InputSpec> specs = o.specs;
  if (specs.empty()) specs = model.declared_inputs;
  if (specs.empty() && !data) {
    if (auto inferred = infer_inputs(model.module)) {
      specs = inferred->specs;
      if (note) *note = inferred_inputs_note(*inferred);
    }
  }
  if (!specs.empty()) {
    specs = with_batch(specs, o.batch);
    for (size_t i = 0; i < specs.size(); ++i) inputs.push_back(random_input(specs[i], o.seed + i));
    return inputs;
  }
  if (data) {
    inputs.push_back(fit_batch(data->x, o.batch > 0 ? o.batch : 1));
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

c10::IValue run_forward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs, const fs::path& model_path) {
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  try {
    return module.forward(args);
  } catch (const std::exception& e) {
    std::vector<std::string> shapes;
    for (const auto& s : describe_inputs(inputs)) shapes.push_back(to_string(s));
    throw InputError(model_path.string(), "forward failed on input " + join(shapes, ", ") + ": " + torch_error_reason(e),
                     "pass {inputs} with the shape and dtype the model expects");
  }
}

torch::Tensor primary_output(const c10::IValue& out, const fs::path& model_path) {
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
  throw InputError(model_path.string(), "model output (" + out.tagKind() + ") holds no tensor",
                   "lite compares models by their first tensor output");
}

}  // namespace lite::model
