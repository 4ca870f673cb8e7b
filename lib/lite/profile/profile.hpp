#pragma once
// lite profile: latency, throughput, memory, per-op cost and output agreement of TorchScript models.
// Torch-free interface; the CLI calls run() and prints to_report(result).
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

// Profiles one model, or compares two (A = options.models[0] as baseline, B = models[1]) timed in
// alternation on the same inputs. Throws UsageError/InputError for bad options or files.
ProfileResult run(const ProfileOptions& options, Progress& progress = no_progress());

report::Report to_report(const ProfileResult& result);

}  // namespace lite::profile
