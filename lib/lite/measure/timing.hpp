#pragma once
// The timing loop: the one place lite measures forward latency, used by profile, compare and by every
// transform that reports what it bought. Runs under NoGradGuard like a deployment; each sample is one
// forward call timed with steady_clock around nothing but module.forward.
#include <torch/script.h>

#include <filesystem>
#include <string>
#include <vector>

#include "lite/core/deadline.hpp"
#include "lite/core/progress.hpp"
#include "lite/measure/timing_options.hpp"

namespace lite::measure {


struct LatencySamples {
  std::vector<double> warmup_ms;  // the warm-up iterations, kept for drift diagnosis
  std::vector<double> ms;         // timed iterations
  std::string note;               // how the budget (TimingOptions::budget_s) shortened it; "" when it did not
  bool skipped = false;           // TimingOptions::may_skip and even the minimum did not fit (ms is empty)
  double call_ms = 0;             // the cheapest step seen (one call, or one pair when interleaved)
  // Minor page faults per timed call (this thread). Many mean the allocator hands activation buffers back
  // to the OS after each call and the next call faults them in again, which can cost more than the compute.
  double page_faults_per_call = 0;
};

// While the returned guard lives, a forward that never returns ends the process (exit 2, naming {budget_s})
// 2 x budget_s + 30 s after it was made, when the budget was the user's (TimingOptions::hard_budget); else it
// arms nothing. The timing loops hold one per measurement; a caller's own first calls may hold one too.
StallDeadline hard_budget_deadline(const TimingOptions& o);

// Under a budget (TimingOptions::budget_s) the loop adapts to the model's cost: the first warm-up call
// measures it, then the warm-up shrinks to what fits in about a third of the budget (at least kMinWarmup
// calls) and the timed calls stop when the next one would overrun it (at least kMinTimed).
//
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

}  // namespace lite::measure
