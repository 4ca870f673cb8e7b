#pragma once
// Runs models over data sets and compares outputs. Used by profile (A/B compare, --eval) and by every
// transform to report accuracy or agreement before and after.
#include <torch/script.h>

#include <filesystem>

#include "lite/core/progress.hpp"
#include "lite/measure/agreement.hpp"
#include "lite/model/dataset.hpp"

namespace lite::measure {

// One forward on `inputs`: the primary output (model::primary_output), dequantized, as float32. Runs
// under NoGradGuard.
torch::Tensor forward_float(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs,
                            const std::filesystem::path& model_path);

// Forward over all samples of `data` in batches; returns the outputs concatenated along dim 0 as
// float32. Runs under NoGradGuard.
torch::Tensor predict(torch::jit::Module& module, const model::Dataset& data, int64_t batch,
                      const std::filesystem::path& model_path, Progress& progress);

// Label-free agreement of `candidate` with `reference` (same shape). Softmax and argmax are taken
// over dim 1 (classes); a 1-D output counts as one sample.
Agreement compare_outputs(const torch::Tensor& reference, const torch::Tensor& candidate);

// Top-1 accuracy of logits [N, C] against labels [N].
Accuracy top1_accuracy(const torch::Tensor& logits, const torch::Tensor& labels);

}  // namespace lite::measure
