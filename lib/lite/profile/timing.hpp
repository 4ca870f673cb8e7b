#pragma once
// The timing loop: the one place lite measures forward latency, used by profile, compare and by every
// transform that reports what it bought. Runs under NoGradGuard like a deployment; each sample is one
// forward call timed with steady_clock around nothing but module.forward.
#include <torch/script.h>

#include <filesystem>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/profile/options.hpp"

namespace lite::profile {


struct LatencySamples {
  std::vector<double> warmup_ms;  // the warm-up iterations, kept for drift diagnosis
  std::vector<double> ms;         // timed iterations
};

// Times `module.forward(inputs)`. Throws InputError when the forward fails (see run_forward) and
// lite::Interrupted on Ctrl-C.
LatencySamples time_forward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs,
                            const TimingOptions& options, const std::filesystem::path& model_path,
                            Progress& progress);

// Two models timed in alternation (A, B, A, B, ...) on the same inputs, so drift in machine state
// (frequency, other load) hits both equally. Returns {samples of A, samples of B}.
std::pair<LatencySamples, LatencySamples> time_interleaved(torch::jit::Module& a, const std::filesystem::path& a_path,
                                                           torch::jit::Module& b, const std::filesystem::path& b_path,
                                                           const std::vector<torch::Tensor>& inputs,
                                                           const TimingOptions& options, Progress& progress);

}  // namespace lite::profile
