#pragma once
// The prefix mode's entry points: check a configuration before any work, run the study, and its report.
#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"

namespace lite::cache::prefix {

// The prefix policies' names, as the policy table (prefix_policies.cpp) lists them.
std::vector<std::string> prefix_policy_names();
// Their table for --policy list: name, prefix-closed, offline, description.
report::Table prefix_policy_list();

// Every rule that needs no trace: policies, sizes, KV formats, the prefill model, instances, targets.
// OptionError by key.
void check_config(const PrefixConfig& c);
// Reads the trace, replays every policy x capacity (x KV format) over `threads`, and the curve with mrc.
PrefixResult run_study(const PrefixConfig& c, Progress& progress = no_progress());

// The smallest capacity meeting the target and the policy doing best there (prefix_recommend.cpp).
std::optional<PrefixRecommendation> recommend(const PrefixConfig& c, const std::vector<PrefixRow>& rows);

report::Report to_report(const PrefixResult& r);

}  // namespace lite::cache::prefix
