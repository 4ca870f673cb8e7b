#pragma once
// The timing flags profile, quantize and prune share, bound onto the one fragment of their options that holds them
// (measure::TimingKnobs): one wording, one set of rules (profile/timing_options.cpp), defaults from each verb's own.
#include <CLI/CLI.hpp>
#include <string>

#include "flag_wording.hpp"
#include "lite/measure/timing_options.hpp"

namespace lite::cli {

// `group`: the help section, or "" for the verb's default one (CLI11 hides an option whose group is "").
inline void add_timing_flags(CLI::App& app, measure::TimingKnobs& k, const std::string& group = {}) {
  name_flag("duration_s", "--duration");
  auto in_group = [&](CLI::Option* option) { return group.empty() ? option : option->group(group); };
  in_group(app.add_option("--warmup", k.warmup, "Untimed calls before each measurement"));
  auto* iterations = in_group(
      app.add_option("--iterations", k.iterations, "Timed calls per measurement, instead of running for --duration"));
  in_group(app.add_option("--duration", k.duration_s, "Seconds per measurement when --iterations is not given"))
      ->excludes(iterations);
  in_group(app.add_option("--threads", k.threads, "Intra-op threads, or 0 for libtorch's default"));
}

}  // namespace lite::cli
