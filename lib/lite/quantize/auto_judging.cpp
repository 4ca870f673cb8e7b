// Auto's second pass: the built candidates judged in the order judging.hpp's rules give (those not slower than frozen
// float, fastest first), each evaluation stopped once its drop cannot fit the tolerance, the tolerance search tried
// only when no candidate meets it, and the slower candidates only after that. The rules are torch-free and unit-tested
// in judging.cpp; this file applies them to built models, so it stays apart from them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lite/quantize/choice.hpp"
#include "lite/quantize/judging.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

namespace {

std::string ratio_of(double ratio) { return fmt::format("{:.2f}x", ratio); }

// Whether `cand` can no longer be chosen over `best`, which meets the tolerance (choice.hpp's rule).
bool cannot_beat(const Candidate& cand, const Candidate& best, size_t batches) {
  if (cand.speed.slower != best.speed.slower) return cand.speed.slower;
  return speed_score(cand.speed, batches) >= speed_score(best.speed, batches);
}

// The candidate the choice would take now, when it meets the tolerance; else null.
const Candidate* best_meeting(const QuantizeResult& r) {
  const Choice choice = choose_candidate(r.candidates);
  return choice.index >= 0 && choice.tolerance_met ? &r.candidates[size_t(choice.index)] : nullptr;
}

// Auto: evaluates the candidates of `group` in order, each stopped once it cannot fit the tolerance, until one meets
// it (true) or the next cannot beat a candidate that does.
bool evaluate_until_one_meets(Context& c, const ModeEntry& requested, const std::vector<size_t>& group,
                              QuantizeResult& r, std::map<std::string, Built>& built) {
  for (size_t i : group) {
    Candidate& cand = r.candidates[i];
    if (const Candidate* best = best_meeting(r); best && cannot_beat(cand, *best, common_batches(r.candidates)))
      return true;
    guarded(c, requested, cand, [&] {
      cand.quality = measure_quality(c, built.at(cand.mode).module, c.progress, cand.mode, r.tolerance);
      cand.evaluated = true;
      cand.meets_tolerance = !cand.quality.stopped_early && cand.quality.drop <= r.tolerance;
    });
    if (cand.quality.stopped_early)
      c.note(fmt::format("{}: evaluation stopped after {} samples: its drop of {:.2f} points cannot fit the {:.2f}-point "
                         "tolerance (above it at the low end of the 99% interval)",
                         cand.mode, cand.quality.samples, cand.quality.drop, r.tolerance));
    if (cand.built && cand.meets_tolerance) return true;
  }
  return false;
}

// Seconds a tolerance search on `cand` would take: a build and an evaluation per layer to rank them, and about
// log2(layers) more to search.
double search_estimate_s(const Context& c, const Candidate& cand, const Built& b) {
  const auto per_sample = c.seconds_per_sample.find(cand.mode);
  const double trial = b.build_s + b.calib_s +
                       (per_sample == c.seconds_per_sample.end() ? 0.0 : per_sample->second * double(c.judged));
  const double layers = double(cand.plan.quantized_layers());
  return (layers + std::ceil(std::log2(std::max(layers, 1.0))) + 1) * trial;
}

// Auto: the tolerance search (keep the most sensitive layers float) on the evaluated candidates of `group` in order,
// each searched candidate retimed, until one meets the tolerance (true), and with `stay_not_slower` is still not
// slower than frozen float after keeping layers float. Without {budget_s}, a search estimated to take more than
// kSearchSeconds is not run (a note says what it would cost).
bool search_until_one_meets(Context& c, const ModeEntry& requested, const std::vector<size_t>& group,
                            bool stay_not_slower, QuantizeResult& r, std::map<std::string, Built>& built) {
  for (size_t i : group) {
    Candidate& cand = r.candidates[i];
    if (!cand.built || !cand.evaluated || cand.plan.quantized_layers() <= 1) continue;
    if (c.budget_spent()) {
      c.note(cand.mode + ": no tolerance search: the {budget_s} was spent");
      continue;
    }
    Built& b = built.at(cand.mode);
    if (const double estimate = search_estimate_s(c, cand, b); !c.o.budget_s && estimate > kSearchSeconds) {
      c.note(fmt::format("{}: no tolerance search: ranking its {} layers would build and evaluate about {} models "
                         "(~{:.0f} s); give {{budget_s}} to allow it, or {{mode}} {} with {{tolerance}}",
                         cand.mode, cand.plan.quantized_layers(), cand.plan.quantized_layers(), estimate, cand.mode));
      continue;
    }
    const ModeEntry& mode = find_mode(cand.mode);
    float_reference(c, 0, c.judged);  // the search's trials judge every sample: the float outputs first
    guarded(c, requested, cand, [&] {
      timed(c, "tolerance search", cand.mode,
            [&] { search_tolerance(c, mode, r.tolerance, r.layers, r.engine, cand, b); });
      if (cand.search && !cand.search->float_layers.empty()) time_candidate(c, cand, b, false);
      cand.meets_tolerance = cand.quality.drop <= r.tolerance;
    });
    if (cand.built && cand.meets_tolerance && !(stay_not_slower && cand.speed.slower)) return true;
  }
  return false;
}

}  // namespace

// Auto, second pass: judges the built candidates in the order the choice prefers (judging.hpp's evaluation_order):
// those not slower than frozen float, fastest first, each stopped as soon as its drop cannot fit the tolerance; when
// none meets it, the tolerance search on them; only then the slower candidates, the same way. Once one meets the
// tolerance, the candidates after it cannot be chosen and are not evaluated.
void judge_candidates(Context& c, const ModeEntry& requested, QuantizeResult& r, std::map<std::string, Built>& built) {
  std::vector<size_t> not_slower, slower;
  for (size_t i : evaluation_order(r.candidates)) (r.candidates[i].speed.slower ? slower : not_slower).push_back(i);
  for (const auto* group : {&not_slower, &slower})
    if (evaluate_until_one_meets(c, requested, *group, r, built) ||
        search_until_one_meets(c, requested, *group, group == &not_slower, r, built))
      break;
  const Candidate* best = best_meeting(r);
  if (!best) return;
  const size_t batches = common_batches(r.candidates);
  for (const auto& cand : r.candidates)
    if (cand.built && !cand.evaluated)
      c.note(fmt::format("{} was not evaluated: {} of frozen float's latency{}, so it cannot beat {} ({}), which "
                         "meets the tolerance",
                         cand.mode, ratio_of(speed_score(cand.speed, batches)),
                         cand.speed.slower ? " (slower than frozen float)" : "", best->mode,
                         ratio_of(speed_score(best->speed, batches))));
}

}  // namespace lite::quantize
