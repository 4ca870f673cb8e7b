#include "lite/measure/evaluate.hpp"

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/inputs.hpp"

namespace lite::measure {

torch::Tensor forward_float(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs,
                            const std::filesystem::path& model_path) {
  torch::NoGradGuard no_grad;
  return model::primary_output(model::run_forward(module, inputs, model_path), model_path)
      .dequantize()
      .to(torch::kFloat32);
}

torch::Tensor predict(torch::jit::Module& module, const model::Dataset& data, int64_t batch,
                      const std::filesystem::path& model_path, Progress& progress) {
  if (batch <= 0) batch = 64;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> outputs;
  ProgressPhase phase(progress, "evaluating", static_cast<uint64_t>(data.size()));
  for (int64_t begin = 0; begin < data.size(); begin += batch) {
    throw_if_interrupted();
    const auto inputs = model::batch_inputs(data, begin, batch);
    outputs.push_back(forward_float(module, inputs, model_path));
    phase.advance(static_cast<uint64_t>(inputs.front().size(0)));
  }
  return torch::cat(outputs, 0);
}

namespace {
torch::Tensor as_rows(const torch::Tensor& t) {
  auto f = t.to(torch::kFloat64);
  if (f.dim() == 0) return f.reshape({1, 1});
  if (f.dim() == 1) return f.unsqueeze(0);
  // [N, C, ...] -> [N * prod(...), C]: every spatial position is a sample (segmentation-style outputs).
  if (f.dim() > 2) f = f.movedim(1, -1).reshape({-1, f.size(1)});
  return f;
}
}  // namespace

Agreement compare_outputs(const torch::Tensor& reference, const torch::Tensor& candidate) {
  if (reference.sizes() != candidate.sizes())
    throw InputError("{models}", "outputs differ in shape: " + c10::str(reference.sizes()) + " vs " +
                                     c10::str(candidate.sizes()),
                     "compare models with the same output");
  Agreement a;
  auto ref = as_rows(reference.dequantize()), cand = as_rows(candidate.dequantize());
  auto diff = (ref - cand).abs();
  a.samples = ref.size(0);
  a.max_abs_error = diff.max().item<double>();
  a.mean_abs_error = diff.mean().item<double>();
  a.top1_agreement = ref.argmax(1).eq(cand.argmax(1)).to(torch::kFloat64).mean().item<double>();
  auto log_p = torch::log_softmax(ref, 1), log_q = torch::log_softmax(cand, 1);
  a.kl_divergence = (log_p.exp() * (log_p - log_q)).sum(1).mean().item<double>();
  if (a.kl_divergence < 0) a.kl_divergence = 0;  // rounding
  return a;
}

Accuracy top1_accuracy(const torch::Tensor& logits, const torch::Tensor& labels) {
  if (logits.dim() != 2)
    throw InputError("{eval}", "accuracy needs [N, classes] outputs; the model returned shape " + c10::str(logits.sizes()),
                     "drop {eval}, or give labels only for a classifier");
  if (logits.size(0) != labels.size(0))
    throw InputError("{eval}", std::to_string(labels.size(0)) + " labels for " + std::to_string(logits.size(0)) + " outputs",
                     "give one label per sample");
  if (labels.dim() != 1)
    throw InputError("{eval}", "labels must be one class index per sample, got shape " + c10::str(labels.sizes()),
                     "store a 1-D tensor of class indices");
  // An index outside the model's classes would only ever count as wrong: a silent 0% (distill refuses too).
  if (labels.numel() > 0) {
    const auto low = labels.min().item<double>(), high = labels.max().item<double>();
    if (low < 0 || high >= double(logits.size(1)))
      throw InputError("{eval}", fmt::format("labels range over [{:.0f}, {:.0f}] but the model outputs {} classes", low,
                                             high, logits.size(1)),
                       "give the labels of the task the model was trained on, 0 to classes - 1");
  }
  Accuracy acc;
  acc.total = labels.size(0);
  acc.correct = logits.argmax(1).eq(labels.to(torch::kInt64)).sum().item<int64_t>();
  return acc;
}

}  // namespace lite::measure
