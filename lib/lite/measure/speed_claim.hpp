#pragma once
// When a measured speedup cannot be believed. A speedup far beyond what the work removed says the baseline was
// disturbed (another process took its cores while it ran), not that the model got faster: prune once printed
// "205.32x faster" for 0.51x MACs. The rule: any speedup above kImplausibleSpeedup, or, where the work ratio is
// known (MACs before / MACs after), above kImplausibleOverWork times it. The report then says so as a finding and
// shows no gain. Torch-free.
#include <optional>
#include <string>

#include "lite/core/report.hpp"

namespace lite::measure {

inline constexpr double kImplausibleSpeedup = 50;   // no transform lite makes buys this much on its own
inline constexpr double kImplausibleOverWork = 3;   // memory effects explain some gain beyond the MACs, not 3x

// `work_ratio`: work before / work after (MACs), when known (pruning); unset or <= 0: only the absolute bound.
bool implausible_speedup(double speedup, std::optional<double> work_ratio = std::nullopt);

// "implausible: batch 1: 205.3x faster for 0.51x MACs; the baseline was probably disturbed; rerun on a quiet
// machine", for `what` ("batch 1"); `macs_after_over_before` unset: no MACs named.
report::Finding implausible_speedup_finding(double speedup, const std::string& what,
                                            std::optional<double> macs_after_over_before = std::nullopt);

// The note beside a speedup's interval that may not be trusted: " (untrusted: the machine was oversubscribed)",
// " (implausible: see the findings)", both, or "" when it may.
std::string untrusted_mark(bool oversubscribed, bool implausible);

}  // namespace lite::measure
