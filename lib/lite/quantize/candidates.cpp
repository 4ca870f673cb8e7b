// Building the candidates and timing them: each planned mode built by its scheme, serialized and loaded back (what a
// consumer gets), then timed interleaved with frozen float at each batch size. An explicit mode is judged right after
// its build (with the tolerance search when its drop misses a given tolerance); auto's candidates are judged later,
// fastest first (auto_judging.cpp). A mode whose model fails ends the run when asked for, and for auto is recorded
// as that candidate's problem.
#include <algorithm>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/inputs.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

namespace {

// Times the candidate at each batch size. With `stop_when_slower` (auto mode, where an earlier candidate
// already meets the tolerance without being slower), a candidate found slower than frozen float at one batch
// size is not timed at the rest: the choice prefers candidates that are not slower, so it cannot win.
Speed measure_speed(Context& c, torch::jit::Module& m, const std::string& mode, bool stop_when_slower) {
  Speed s;
  for (auto& [batch, inputs] : c.inputs) {
    if (s.slower && stop_when_slower) {
      --c.measurements_left;
      c.note(fmt::format("{} was not timed at batch {}: slower than frozen float at batch {} already, while an "
                         "earlier candidate is not",
                         mode, batch, s.candidate.back().batch));
      continue;
    }
    measure::TimingOptions timing = c.timing;
    timing.budget_s = c.measurement_budget();
    auto [a, f] = measure::time_interleaved(m, c.source.path, c.frozen, c.source.path, inputs, timing, c.progress);
    if (c.load) c.load->sample();
    --c.measurements_left;
    if (!a.note.empty()) c.note(fmt::format("{} at batch {}: {}", mode, batch, a.note));
    s.candidate.push_back(to_latency(batch, a));
    s.frozen_float.push_back(to_latency(batch, f));
    auto ci = stats::bootstrap_median_ratio(a.ms, f.ms);
    s.ratio.push_back(ci.estimate);
    s.ratio_low.push_back(ci.low);
    s.ratio_high.push_back(ci.high);
    s.implausible.push_back(ci.estimate > 0 && measure::implausible_speedup(1 / ci.estimate));
    // Slower only when the whole 95% interval of the ratio lies above 1: noise alone does not fail.
    s.slower = s.slower || ci.low > 1.0;
  }
  return s;
}

}  // namespace

// Builds a plan (scheme build, then serialized and loaded back, as a consumer gets it). Regions that a
// build keeps float are remembered, so later builds need not rediscover them.
Built build(Context& c, const ModeEntry& mode, const Plan& plan, bool decoder) {
  auto t = Clock::now();
  AllCoresForWork all_cores(c.o.timing.threads > 0);  // calibration runs the float model over the data
  BuildContext b{c.source, plan, c.calibrator.get(), {}, nlohmann::json::object(), c.float_regions, {}, {}, decoder};
  mode.scheme->build(b);
  Built out;
  out.file = serialize(b.result);
  out.module = deserialize(out.file);
  out.bytes = out.file.size();
  out.details = b.details;
  for (const auto& note : b.notes) c.note(std::string(mode.name) + ": " + note);
  out.float_regions = b.float_regions;
  c.float_regions = b.float_regions;
  nlohmann::json steps = nlohmann::json::object();
  for (const auto& [name, seconds] : b.steps) {
    steps[name] = steps.value(name, 0.0) + seconds;
    if (name == "calibrate") out.calib_s += seconds;
  }
  out.steps = steps;  // report only: timings would make the artifact differ from run to run
  out.build_s = seconds_since(t) - out.calib_s;
  return out;
}

// The scheme's CPU rule decides (oneDNN's own message names a primitive descriptor, not the cause).
std::string missing_kernels(const ModeEntry& mode) {
  const Environment& env = cpu_rule_environment();
  if (mode.scheme->cpu_problem(env).empty()) return {};
  return fmt::format("oneDNN's kernels here (ISA {}) have no native {}",
                     env.onednn_isa.empty() ? "unknown" : env.onednn_isa, mode.name);
}

// Runs `work` on a candidate; a failure of the mode's model is recorded as the candidate's problem (auto) or ends the
// run (an explicit mode) with the reason.
void guarded(Context& c, const ModeEntry& requested, Candidate& cand, const std::function<void()>& work) {
  const std::string name = cand.mode;
  try {
    work();
  } catch (const Interrupted&) {
    throw;
  } catch (const model::ForwardError& e) {
    // The float model has run these very inputs: the graph this mode built is what fails on them.
    cand.built = false;
    cand.problem = "builds a model that fails where the float model runs (" + e.inputs() + "): " + e.reason();
    if (const std::string lack = requested.scheme ? missing_kernels(requested) : ""; !lack.empty())
      throw InputError(c.source.path.string(),
                       name + " quantization fails on this CPU: " + lack + " (" + e.reason() + ")",
                       "try another {mode}, or unset ONEDNN_MAX_CPU_ISA where it caps oneDNN below the CPU");
    if (requested.scheme)
      throw InputError(c.source.path.string(), name + " quantization " + cand.problem,
                       "keep the failing layer float with {skip} LAYER, or try another {mode}");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    if (requested.scheme) throw;
    cand.built = false;
    cand.problem = "failed: " + first_line(e.what());
  }
}

// Times a built candidate against frozen float on a fresh copy: one that was evaluated has run other batch sizes,
// and the profiling executor's specializations for them would be timed too.
void time_candidate(Context& c, Candidate& cand, const Built& b, bool stop_when_slower) {
  torch::jit::Module fresh = deserialize(b.file);
  cand.speed = timed(c, "timing", cand.mode, [&] { return measure_speed(c, fresh, cand.mode, stop_when_slower); });
}

namespace {

// Builds one mode's plan into a candidate (not yet judged).
Built build_mode(Context& c, const ModeEntry& mode, Candidate& cand) {
  Built b = build(c, mode, cand.plan);
  cand.build_steps_s = b.steps;
  c.spend("build", mode.name, b.build_s);
  if (b.calib_s > 0) c.spend("calibration", mode.name, b.calib_s);
  apply_float_regions(cand.plan, b.float_regions);
  cand.file_bytes = b.bytes;
  cand.built = true;
  return b;
}

// An explicit mode: builds it, measures its quality on the judged samples (the tolerance search when a tolerance is
// given and missed), then times it.
Candidate build_explicit(Context& c, const ModeEntry& mode, const Plan& plan, const QuantizeResult& r,
                         std::map<std::string, Built>& built) {
  Candidate cand;
  cand.mode = mode.name;
  cand.plan = plan;
  const auto t = Clock::now();
  guarded(c, mode, cand, [&] {
    Built b = build_mode(c, mode, cand);
    cand.quality = measure_quality(c, b.module, c.progress, cand.mode);
    if (r.tolerance_given) {
      if (cand.quality.drop > r.tolerance && cand.plan.quantized_layers() > 1) {
        if (c.budget_spent()) {
          c.note(cand.mode + ": no tolerance search: the {budget_s} was spent");
        } else {
          float_reference(c, 0, c.judged);  // the search's trials judge every sample: the float outputs first
          timed(c, "tolerance search", cand.mode,
                [&] { search_tolerance(c, mode, r.tolerance, r.layers, r.engine, cand, b); });
        }
      }
      cand.meets_tolerance = cand.quality.drop <= r.tolerance;
    }
    time_candidate(c, cand, b, false);
    built.emplace(cand.mode, std::move(b));
  });
  cand.build_s = seconds_since(t);
  return cand;
}

// Auto, first pass: builds one mode and times it against frozen float; its quality is judged later
// (judge_candidates), fastest candidate first. A candidate found slower than frozen float at the first batch size,
// while an earlier one is not, is not timed at the others: the choice prefers the candidates that are not slower.
Candidate build_and_time(Context& c, const ModeEntry& mode, const Plan& plan, const ModeEntry& requested,
                         const QuantizeResult& r, std::map<std::string, Built>& built) {
  Candidate cand;
  cand.mode = mode.name;
  cand.plan = plan;
  cand.evaluated = false;  // until judge_candidates evaluates it
  cand.meets_tolerance = false;
  const auto t = Clock::now();
  const bool stop_when_slower =
      std::any_of(r.candidates.begin(), r.candidates.end(), [](const Candidate& k) { return k.built && !k.speed.slower; });
  guarded(c, requested, cand, [&] {
    Built b = build_mode(c, mode, cand);
    time_candidate(c, cand, b, stop_when_slower);
    built.emplace(cand.mode, std::move(b));
  });
  cand.build_s = seconds_since(t);
  return cand;
}

}  // namespace

// Every planned mode built (and for an explicit mode judged and timed; auto judges later). Under {budget_s}, auto
// does not try the modes it has no time left for.
std::map<std::string, Built> build_candidates(Context& c, const Planned& planned, const ModeEntry& requested,
                                              QuantizeResult& r) {
  std::map<std::string, Built> built;
  for (const auto& [mode, plan] : planned.plans) {
    if (c.budget_spent() && !built.empty()) {
      Candidate skipped;
      skipped.mode = mode->name;
      skipped.problem = fmt::format("not tried: the {{budget_s}} of {} s was spent", *c.o.budget_s);
      r.candidates.push_back(skipped);
      c.measurements_left -= static_cast<int>(c.inputs.size());
      continue;
    }
    r.candidates.push_back(requested.scheme ? build_explicit(c, *mode, plan, r, built)
                                            : build_and_time(c, *mode, plan, requested, r, built));
  }
  return built;
}

}  // namespace lite::quantize
