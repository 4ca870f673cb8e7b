// How each verb runs as a recipe step: its options read by the verb's own from_json and validate() (errors under
// the step's key path), lite run's own outputs set (the work folder), the verb's run(), and its report, gates
// and artifact handed back. One runner per step verb, registered against its descriptor in one table; the verbs'
// structure (path keys, model input) is in their descriptors (lite/<area>/verb.hpp, listed in verbs.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "lite/cache/options.hpp"
#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/distill/distill.hpp"
#include "lite/distill/verb.hpp"
#include "lite/optimize/optimize.hpp"
#include "lite/optimize/verb.hpp"
#include "lite/profile/profile.hpp"
#include "lite/profile/verb.hpp"
#include "lite/prune/prune.hpp"
#include "lite/prune/verb.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/verb.hpp"
#include "lite/recipe/runner_internal.hpp"

namespace lite::recipe::detail {

void under_prefix(const std::string& prefix, const std::function<void()>& f) {
  try {
    f();
  } catch (const OptionError& e) {
    auto word = [&](const std::string& key) { return prefix + key; };
    throw OptionError(prefix + e.key(), render_option_refs(e.problem(), word), render_option_refs(e.fix(), word));
  }
}

namespace {

StepOutcome run_profile(const nlohmann::json& j, const StepContext& c) {
  auto o = read_options<profile::ProfileOptions>(j, c.prefix);
  under_prefix(c.prefix, [&] { profile::validate(o); });
  StepOutcome out;
  out.options = o;
  if (c.check_only) return out;
  out.report = profile::to_report(profile::run(o, *c.progress));
  return out;
}

// Whether a verb's options have allow_noisy (a speed gate that lite run --allow-noisy relaxes).
template <class Options, class = void>
struct HasAllowNoisy : std::false_type {};
template <class Options>
struct HasAllowNoisy<Options, std::void_t<decltype(std::declval<Options&>().allow_noisy)>> : std::true_type {};

// The verbs that write a model artifact (quantize, prune, distill, optimize) share one shape: options whose output the
// runner sets, lite run's context (its command line) passed on, the verb's validate() under the step's key path, run(), to_report(), gates.
// validate/run/to_report are found by argument-dependent lookup in the verb's namespace.
template <class Options>
StepOutcome run_model_step(const nlohmann::json& j, const StepContext& c) {
  auto o = read_options<Options>(j, c.prefix);
  o.output = decltype(o.output)(c.artifact_path.string());
  if constexpr (HasAllowNoisy<Options>::value) o.allow_noisy = o.allow_noisy || c.allow_noisy;
  under_prefix(c.prefix, [&] { validate(o); });
  StepOutcome out;
  out.options = o;
  if (c.check_only) return out;
  const auto r = run(o, *c.progress, c.run_context);
  out.report = to_report(r);
  out.gates = r.gates;
  out.artifact = r.output;
  return out;
}

StepOutcome run_cache_sim(const nlohmann::json& j, const StepContext& c) {
  auto o = read_options<cache::CacheSimOptions>(j, c.prefix);
  if (c.check_only) {
    // Reports of earlier steps do not exist yet: check the rules that do not read them.
    const size_t given = o.miss_latency_from.size();
    auto& from = o.miss_latency_from;
    from.erase(std::remove_if(from.begin(), from.end(),
                              [](const std::string& p) { return parse_step_reference(p).has_value(); }),
               from.end());
    if (given > o.miss_latency_from.size() && o.miss_latency_ms)
      throw OptionError(c.prefix + "miss_latency_ms", "cannot be combined with miss_latency_from",
                        "give one miss-latency source");
  }
  under_prefix(c.prefix, [&] { cache::validate(o); });
  StepOutcome out;
  out.options = o;
  if (c.check_only) return out;
  cache::CacheSimResult r = cache::run(o, *c.progress);
  out.report = cache::to_report(r);
  out.gates = r.gates;
  out.cache_sim = std::move(r);
  return out;
}

struct StepRunnerEntry {
  const VerbDescriptor* verb;
  StepRunner run;
};

// One row per verb with a recipe_step (tests/unit/recipe/test_step_runners.cpp checks that none is missing).
const std::vector<StepRunnerEntry>& step_runners() {
  static const std::vector<StepRunnerEntry> table = {
      {&profile::verb(), run_profile},
      {&quantize::verb(), run_model_step<quantize::QuantizeOptions>},
      {&prune::verb(), run_model_step<prune::PruneOptions>},
      {&distill::verb(), run_model_step<distill::DistillOptions>},
      {&optimize::verb(), run_model_step<optimize::OptimizeOptions>},
      {&cache::verb(), run_cache_sim},
  };
  return table;
}

}  // namespace

StepRunner step_runner(const std::string& verb) {
  for (const auto& e : step_runners())
    if (verb == e.verb->name) return e.run;
  throw InternalError(fmt::format("lite run has no runner for the step '{}'", verb));
}

}  // namespace lite::recipe::detail
