#pragma once
// Load mode (MLPerf "Server" style): requests arrive as a seeded Poisson process at a fixed offered
// rate and are served one at a time by a single worker; each request's latency runs from its arrival
// to its completion, so queueing delay is included and the tail shows where the rate saturates.
#include <torch/script.h>

#include <filesystem>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

// Arrival times in milliseconds from 0 for `n` requests at `qps` (exponential gaps, seeded).
std::vector<double> poisson_arrivals_ms(double qps, int64_t n, uint64_t seed);

// Summarizes one load run from per-request arrival, service start and finish times (ms from the same
// origin). Exposed for tests.
LoadRun summarize_load(double offered_qps, const std::vector<double>& arrivals_ms,
                       const std::vector<double>& start_ms, const std::vector<double>& finish_ms);

LoadRun run_load(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs, double qps, int64_t requests,
                 uint64_t seed, Progress& progress);

}  // namespace lite::profile
