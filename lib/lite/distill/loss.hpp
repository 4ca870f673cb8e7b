#pragma once
// The distillation loss (Hinton, Vinyals, Dean 2015):
//   alpha * T^2 * KL(softmax(teacher / T) || softmax(student / T)) + (1 - alpha) * cross_entropy(student, labels)
// KL is summed over classes (dim 1) and averaged over the batch ("batchmean", the mathematically correct
// KL); T^2 keeps the soft term's gradients on the scale of the hard term's as T grows. Without labels
// the hard term is dropped (alpha = 1).
#include <torch/torch.h>

#include <optional>

namespace lite::distill {

struct LossWeights {
  double temperature = 4;
  double alpha = 0.9;
};

// Soft term alone: T^2 * KL(softmax(teacher/T) || softmax(student/T)), batch mean.
torch::Tensor soft_loss(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits, double temperature);

// The full loss. `labels` absent: the soft term only, whatever alpha says.
torch::Tensor distillation_loss(const torch::Tensor& student_logits, const torch::Tensor& teacher_logits,
                                const std::optional<torch::Tensor>& labels, const LossWeights& weights);

}  // namespace lite::distill
