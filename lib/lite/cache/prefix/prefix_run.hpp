#pragma once
// The prefix mode's entry points: check a configuration before any work, run the study, and its report.
#include <functional>

#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"

namespace lite::cache::prefix {

// The prefix policies' names, as the policy table (prefix_policies.cpp) lists them.
std::vector<std::string> prefix_policy_names();
// True for a policy that reads the future (a reference, never deployable); false for engines and unknown names.
bool is_offline_policy(const std::string& name);
// Their table for --policy list: name, prefix-closed, offline, description.
report::Table prefix_policy_list();

// Every rule that needs no trace: policies, sizes, KV formats, the prefill model, instances, targets.
// OptionError by key.
void check_config(const PrefixConfig& c);
// One process's share of a study run by several (MPI ranks, apps/lite/mpi_prefix.cpp): it replays job i (a policy
// x capacity x KV format, in the rows' order) when i % size == rank. `join`, given the rows with those it did not
// replay left default, and which of its rows it found in results_dir (reused[i] = 1), brings every process's rows
// and flags in and says whether this process finishes the study (the curve and the recommendation); a process that
// does not returns its result unfinished. `on_stored`, if set, is called after each row written to results_dir.
struct StudyShare {
  int rank = 0, size = 1;
  std::function<bool(std::vector<PrefixRow>& rows, std::vector<uint8_t>& reused)> join;
  std::function<void(const PrefixRow& row)> on_stored;
};

// Reads the trace, replays every policy x capacity (x KV format) over `threads` (taking those results_dir holds,
// and writing there each one replayed as it finishes), and the curve with mrc.
PrefixResult run_study(const PrefixConfig& c, Progress& progress = no_progress(), const StudyShare& share = {});

// A row from the JSON to_json(PrefixRow) writes (the ranks' wire format; prefix_wire.cpp).
PrefixRow row_from_json(const nlohmann::json& j);

// The smallest capacity meeting the target and the policy doing best there (prefix_recommend.cpp).
std::optional<PrefixRecommendation> recommend(const PrefixConfig& c, const std::vector<PrefixRow>& rows);

report::Report to_report(const PrefixResult& r);
// The --plot SVG: token hit ratio (and TTFT) against capacity (prefix_plot.cpp).
std::string render_prefix_svg(const PrefixResult& r);

}  // namespace lite::cache::prefix
