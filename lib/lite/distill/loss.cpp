// The distillation loss (see loss.hpp). log_target=true hands KL both sides as log-probabilities, which
// stays finite where a softmax would underflow to 0.
#include "lite/distill/loss.hpp"

namespace lite::distill {

namespace F = torch::nn::functional;

torch::Tensor soft_loss(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits, double temperature) {
  auto log_student = torch::log_softmax(student_logits / temperature, 1);
  auto log_teacher = torch::log_softmax(teacher_logits / temperature, 1);
  auto kl = F::kl_div(log_student, log_teacher, F::KLDivFuncOptions().reduction(torch::kBatchMean).log_target(true));
  return kl * (temperature * temperature);
}

torch::Tensor distillation_loss(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                                const std::optional<torch::Tensor>& labels, const LossWeights& w) {
  auto soft = soft_loss(student_logits, teacher_logits, w.temperature);
  if (!labels || w.alpha >= 1.0) return soft;
  auto hard = F::cross_entropy(student_logits, *labels);
  if (w.alpha <= 0.0) return hard;
  return w.alpha * soft + (1.0 - w.alpha) * hard;
}

}  // namespace lite::distill
