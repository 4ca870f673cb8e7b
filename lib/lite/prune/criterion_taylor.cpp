// taylor: first-order Taylor expansion of the loss (Molchanov et al. 2019): removing a weight changes
// the loss by about |w * dL/dw|, summed here over every parameter slice of the channel's group. Gradients
// come from --data: cross-entropy against its labels, or against the model's own top-1 when it has none
// (so the ranking protects what the model currently predicts).
#include "lite/core/interrupt.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

torch::Tensor score_taylor(const CriterionContext& c) {
  torch::NoGradGuard no_grad;
  auto score = torch::zeros({c.group.channels}, torch::kDouble);
  if (!c.gradients) return score;
  for (const auto& sl : c.group.slices) {
    auto grad = c.gradients->find(sl.path());
    if (grad == c.gradients->end()) continue;  // buffers have no gradient
    auto w = slice_rows(tensor_at(c.module, sl.module, sl.attr), sl, c.group.channels);
    auto g = slice_rows(grad->second, sl, c.group.channels);
    score += (w * g).abs().sum(1).to(torch::kDouble);
  }
  return score;
}

std::map<std::string, torch::Tensor> parameter_gradients(torch::jit::Module& module, const torch::Tensor& x,
                                                         const c10::optional<torch::Tensor>& y, int64_t batch) {
  return parameter_gradients(module, std::vector<torch::Tensor>{x}, y, batch);
}

std::map<std::string, torch::Tensor> parameter_gradients(torch::jit::Module& module,
                                                         const std::vector<torch::Tensor>& inputs,
                                                         const c10::optional<torch::Tensor>& y, int64_t batch) {
  const int64_t samples = inputs.front().size(0);
  std::map<std::string, torch::Tensor> grads;
  std::vector<std::pair<std::string, torch::Tensor>> params;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) params.emplace_back(p.name, p.value);
  std::vector<bool> had_grad;
  for (auto& [name, p] : params) {
    had_grad.push_back(p.requires_grad());
    p.requires_grad_(true);
    p.mutable_grad() = torch::Tensor();
  }
  for (int64_t begin = 0; begin < samples; begin += batch) {
    throw_if_interrupted();
    int64_t n = std::min(batch, samples - begin);
    std::vector<c10::IValue> args;
    for (const auto& input : inputs) args.emplace_back(input.narrow(0, begin, n));
    auto out = module.forward(args);
    torch::Tensor logits = out.isTuple() ? out.toTuple()->elements()[0].toTensor() : out.toTensor();
    logits = logits.reshape({n, -1}).to(torch::kFloat);
    torch::Tensor target = y ? y->narrow(0, begin, n) : logits.argmax(1).detach();
    torch::nll_loss(torch::log_softmax(logits, 1), target, {}, at::Reduction::Sum).backward();
  }
  for (size_t i = 0; i < params.size(); ++i) {
    auto& [name, p] = params[i];
    if (p.grad().defined()) grads[name] = p.grad().detach().clone();
    p.mutable_grad() = torch::Tensor();
    p.requires_grad_(had_grad[i]);
  }
  return grads;
}

}  // namespace lite::prune
