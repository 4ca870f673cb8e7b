// lite quantize: check everything, plan, build each candidate mode and time it against the frozen float model on
// this machine. An explicit mode is then judged on the evaluation data (with the tolerance search when a tolerance
// is given); auto judges its candidates fastest first, each stopped once it cannot fit the tolerance, and stops at
// the first that meets it (judging.hpp), searching for float fallbacks only when none does. The best candidate is
// written. Nothing is written before every input has been checked and the artifact is final.
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "lite/core/atomic_file.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/core/stats.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/quantize/choice.hpp"
#include "lite/quantize/judging.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/quantize_internal.hpp"
#include "lite/quantize/run_internal.hpp"

namespace fs = std::filesystem;

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
Built build(Context& c, const ModeEntry& mode, const Plan& plan) {
  auto t = Clock::now();
  AllCoresForWork all_cores(c.o.timing.threads > 0);  // calibration runs the float model over the data
  BuildContext b{c.source, plan, c.calibrator.get(), {}, nlohmann::json::object(), c.float_regions, {}, {}};
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

namespace {

// Layers ordered by how much quantizing each one alone moves the output (KL divergence against the
// float model on the quality data), most sensitive first.
std::vector<std::string> rank_sensitivity(Context& c, const ModeEntry& mode, const Plan& plan, nlohmann::json& record) {
  std::vector<std::pair<double, std::string>> scored;
  std::vector<std::string> quantized;
  std::vector<LayerInfo> layers;
  std::set<std::string> all;
  for (const auto& l : plan.layers) {
    if (l.quantized) quantized.push_back(l.layer.name);
    layers.push_back(l.layer);
    all.insert(l.layer.name);
  }
  ProgressPhase phase(c.progress, "sensitivity", quantized.size());
  std::vector<std::string> unranked;
  for (const auto& name : quantized) {
    if (c.budget_spent()) {  // rank what was measured; the rest follow in model order
      unranked.push_back(name);
      continue;
    }
    std::set<std::string> keep = all;  // every other layer in float
    keep.erase(name);
    Plan p = make_plan(layers, mode, plan.engine, {}, {}, keep, plan.file_bytes_before);
    Built b = build(c, mode, p);
    Quality q = measure_quality(c, b.module, no_progress(), "");
    scored.emplace_back(q.agreement.kl_divergence, name);
    record[name] = {{"kl_divergence", q.agreement.kl_divergence}, {"drop_points", q.drop}};
    phase.advance();
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> order;
  for (const auto& s : scored) order.push_back(s.second);
  if (!unranked.empty())
    c.note(fmt::format("{}: {} of {} layers were not ranked by sensitivity: the {{budget_s}} was spent", mode.name,
                       unranked.size(), quantized.size()));
  order.insert(order.end(), unranked.begin(), unranked.end());
  return order;
}

}  // namespace

// Keeps the most sensitive layers in float until the drop fits the tolerance (tolerance.hpp's search) and
// replaces the candidate's plan, module and quality with the configuration the search chose.
void search_tolerance(Context& c, const ModeEntry& mode, double tolerance, const std::vector<LayerInfo>& layers,
                      const std::string& engine, Candidate& cand, Built& b) {
  nlohmann::json sensitivity = nlohmann::json::object();
  auto order = rank_sensitivity(c, mode, cand.plan, sensitivity);
  // The search returns the fitting configuration with the fewest float layers, else the one with the
  // smallest drop (fewest float layers on ties). Only the trial that is best by that rule so far is kept,
  // so the one returned needs no second build and measurement.
  struct Trial {
    std::vector<std::string> keep;
    Plan plan;
    Built built;
    Quality quality;
  };
  std::optional<Trial> best;
  auto better = [&](const Trial& x, const Trial& y) {
    bool x_fits = x.quality.drop <= tolerance, y_fits = y.quality.drop <= tolerance;
    if (x_fits != y_fits) return x_fits;
    if (!x_fits && x.quality.drop != y.quality.drop) return x.quality.drop < y.quality.drop;
    return x.keep.size() < y.keep.size();
  };
  auto make = [&](const std::vector<std::string>& keep) {
    return make_plan(layers, mode, engine, c.o.skip, c.o.only, {keep.begin(), keep.end()}, c.source.file_bytes);
  };
  ProgressPhase searching(c.progress, "tolerance search", 0);
  auto search = search_float_layers(order, tolerance, [&](const std::vector<std::string>& keep) {
    searching.advance();
    if (keep.empty()) return cand.quality.drop;
    Trial trial{keep, make(keep), {}, {}};
    trial.built = build(c, mode, trial.plan);
    apply_float_regions(trial.plan, trial.built.float_regions);
    trial.quality = measure_quality(c, trial.built.module, no_progress(), "");
    double drop = trial.quality.drop;
    if (!best || better(trial, *best)) best = std::move(trial);
    return drop;
  });
  cand.search = search;
  if (!search.float_layers.empty()) {
    if (!best || best->keep != search.float_layers) {  // not expected: build the choice again
      best = Trial{search.float_layers, make(search.float_layers), {}, {}};
      best->built = build(c, mode, best->plan);
      apply_float_regions(best->plan, best->built.float_regions);
      best->quality = measure_quality(c, best->built.module, c.progress, "");
    }
    cand.plan = std::move(best->plan);
    b = std::move(best->built);
    cand.quality = best->quality;
  }
  b.details["sensitivity"] = sensitivity;
}

namespace {

std::string ratio_of(double ratio) { return fmt::format("{:.2f}x", ratio); }

}  // namespace

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

namespace {

// Provenance of the chosen candidate (lite.json inside the artifact) and its calibration record.
model::ArtifactInfo describe_artifact(const Context& c, const ModeEntry& mode, const Candidate& chosen,
                                      const Built& artifact, const CalibMethodEntry& method,
                                      const std::optional<CalibrationStats>& reused, const fs::path& out,
                                      QuantizeResult& r) {
  const auto& o = c.o;
  model::ArtifactInfo info;
  info.transform = "quantize";
  info.command_line = c.run_context.command_line;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : chosen.plan.layers)
    layers.push_back({{"name", l.layer.name},
                      {"kind", l.layer.kind},
                      {"scheme", l.scheme},
                      {"quantized", l.quantized},
                      {"reason", l.reason}});
  info.details = {
      {"mode", r.mode},     {"requested_mode", r.requested_mode},
      {"engine", r.engine}, {"consumer_engine_setting", "torch.backends.quantized.engine = '" + r.engine + "'"},
      {"layers", layers},   {"scheme", artifact.details}};
  if (mode.scheme->needs_calibration() && c.calibrator) {
    CalibrationInfo ci;
    ci.method = method.name;
    ci.reused = reused.has_value() && c.calibrator->passes() == 0;
    ci.source = ci.reused ? o.calib_stats->string() : c.calibrator->stats().source;
    ci.samples = c.calibrator->stats().samples;
    ci.observed_values = static_cast<int64_t>(c.calibrator->stats().values.size());
    if (o.write_calib_json) {
      fs::path stats_file = out;
      stats_file.replace_extension(".calib.json");
      ci.stats_file = stats_file.string();
    }
    r.calibration = ci;
    info.details["calibration"] = ci;
  }
  if (chosen.search) info.details["tolerance_search"] = *chosen.search;
  // Latencies stay in the report: they vary run to run, the artifact may not.
  info.figures = {{"size_bytes", {{"before", c.source.file_bytes}, {"after", chosen.file_bytes}}},
                  {"quality", chosen.quality}};
  // Declared inputs carry over by themselves (make_provenance); otherwise the ones timed here.
  if (c.source.declared_inputs.empty()) info.inputs = model::describe_inputs(c.inputs.begin()->second);
  return info;
}

// An explicit mode given no tolerance: the "agreement" gate fails when top-1 agreement with the float model
// fell by more than {agreement_floor} points and on more than one sample (auto and {tolerance} have their
// own gate).
void check_agreement_floor(const Candidate& chosen, const ModeEntry& requested, const QuantizeOptions& o,
                           QuantizeResult& r) {
  r.agreement_floor = o.agreement_floor;
  r.agreement_floor_applied = requested.scheme && !o.tolerance;
  if (!r.agreement_floor_applied) return;
  const measure::AgreementLoss loss = measure::agreement_loss(chosen.quality.agreement, o.agreement_floor);
  if (!loss.breaks_floor) return;
  const double lost = loss.points;
  r.gates.fail("agreement");
  r.findings.push_back(
      {"warning",
       fmt::format("{} mode agrees with the float model's top-1 on {:.2f}% of {} ({:.2f} points lost)", r.mode,
                   100.0 - lost, chosen.quality.data, lost),
       fmt::format("{{agreement_floor}} {:.2f} points", o.agreement_floor),
       "give {tolerance} POINTS to keep the most sensitive layers float, keep layers float with {skip}, try another "
       "{mode} (auto, fp16, bf16), or raise {agreement_floor}"});
}

// An explicit mode that changed nothing that matters (the file kept >= 95% of its size and the outputs are
// bit-identical to float) bought nothing: a fused fast path (nn.TransformerEncoderLayer's, nn.MultiheadAttention's)
// may still read the float weights. The "effect" gate fails, with a finding.
void check_material_effect(const Candidate& chosen, const ModeEntry& requested, uint64_t source_bytes,
                           QuantizeResult& r) {
  if (!requested.scheme) return;
  const auto& agreement = chosen.quality.agreement;
  const bool identical = chosen.evaluated && agreement.samples > 0 && agreement.max_abs_error == 0;
  const double size_ratio = source_bytes ? double(chosen.file_bytes) / double(source_bytes) : 1.0;
  if (!identical || size_ratio < 0.95) return;
  r.gates.fail("effect");
  r.findings.push_back(
      {"warning",
       fmt::format("{} mode changed nothing material: the file is {:.2f}x the input and the outputs are bit-identical "
                   "to the float model's on {}",
                   r.mode, size_ratio, chosen.quality.data),
       "a smaller file or a changed output",
       "most weights sit where this mode does not reach (the layer table lists what it quantized; outside dynamic "
       "mode Embedding, LSTM and GRU weights stay float) or run through a fused op that reads the float weights "
       "(a traced nn.TransformerEncoderLayer or nn.MultiheadAttention): try another {mode}"});
}

// The speed comparison cannot be trusted when it ran on an oversubscribed machine or found a speedup beyond belief:
// the "speed" gate, which judges it, fails then unless {allow_noisy}, and a finding names the cause.
void check_speed_trust(const Candidate& chosen, const QuantizeOptions& o, const measure::MachineLoad& load,
                       QuantizeResult& r) {
  r.load = load;
  r.allow_noisy = o.allow_noisy;
  bool untrusted = false;
  if (r.load.oversubscribed()) {
    untrusted = true;
    r.findings.push_back(measure::oversubscription_finding(
        r.load, "the speed comparison with frozen float",
        o.allow_noisy ? "its speedups are untrusted"
                      : "its speedups are untrusted, so the speed gate fails ({allow_noisy} accepts them)",
        o.allow_noisy));
  }
  for (size_t i = 0; i < chosen.speed.implausible.size(); ++i) {
    if (!chosen.speed.implausible[i]) continue;
    untrusted = true;
    r.findings.push_back(measure::implausible_speedup_finding(
        1 / chosen.speed.ratio[i], fmt::format("{} at batch {}", r.mode, chosen.speed.candidate[i].batch)));
  }
  if (untrusted && !o.allow_noisy) r.gates.fail("speed");
}

}  // namespace

// Picks the candidate (choice.cpp), writes its artifact (and the calibration sidecar) after the last
// interruption point; returns the chosen candidate.
const Candidate& write_chosen(Context& c, QuantizeResult& r, const std::map<std::string, Built>& built,
                              const CalibMethodEntry& method, const std::optional<CalibrationStats>& reused) {
  const QuantizeOptions& o = c.o;
  const model::LoadedModel& source = c.source;
  const Choice choice = choose_candidate(r.candidates);
  if (choice.index < 0) {
    std::vector<std::string> why;
    for (const auto& cand : r.candidates) why.push_back(cand.mode + " " + cand.problem);
    throw InputError(source.path.string(), "no quantization mode works on this model (" + join(why, "; ") + ")",
                     "keep the failing layers float with {skip} LAYER, or pass {mode} with one mode to see its error");
  }
  Candidate& chosen = r.candidates[size_t(choice.index)];
  chosen.chosen = true;
  r.tolerance_met = choice.tolerance_met;
  r.mode = chosen.mode;
  r.slower = chosen.speed.slower;
  const ModeEntry& mode = find_mode(r.mode);
  const Built& artifact = built.at(r.mode);
  const fs::path out = output_path(o, mode.tag);
  model::ArtifactInfo info = describe_artifact(c, mode, chosen, artifact, method, reused, out, r);
  throw_if_interrupted();  // the last moment a Ctrl-C leaves every file untouched
  timed(c, "write", "", [&] { model::save_artifact(deserialize(artifact.file), out, source, info); });
  r.output = out.string();
  r.output_bytes = fs::file_size(out);
  if (r.calibration && !r.calibration->stats_file.empty())
    write_file_atomically(r.calibration->stats_file,
                          calibration_document(c.calibrator->stats(), method).dump(1) + "\n");
  return chosen;
}

namespace {

// The result's header: what was asked for, the engine and threads, and the settings the report repeats.
QuantizeResult start_result(const QuantizeOptions& o, const ModeEntry& requested) {
  QuantizeResult r;
  r.requested_mode = requested.name;
  r.engine = current_quantized_engine();
  r.threads = at::get_num_threads();
  if (const int cores = static_cast<int>(std::thread::hardware_concurrency()); o.timing.threads == 0 && cores > r.threads)
    r.notes.push_back(fmt::format("calibration and quality evaluation ran on {} threads (every core), latency was "
                                  "timed with {}; pass {{threads}} to use one count for both",
                                  cores, r.threads));
  r.dry_run = o.dry_run;
  r.allow_slower = o.allow_slower;
  r.tolerance_given = o.tolerance.has_value();
  r.tolerance = o.tolerance.value_or(kAutoTolerance);
  r.budget_s = o.budget_s;
  return r;
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

namespace {

// The gates on the chosen candidate, then the notes and time the run gathered.
void finish_result(Context& c, const Candidate& chosen, const ModeEntry& requested, QuantizeResult& r) {
  if (!r.tolerance_met) r.gates.fail("tolerance");
  if (r.slower && !c.o.allow_slower) r.gates.fail("speed");
  check_speed_trust(chosen, c.o, c.load->result(), r);
  check_agreement_floor(chosen, requested, c.o, r);
  check_material_effect(chosen, requested, c.source.file_bytes, r);
  r.notes.insert(r.notes.end(), c.notes.begin(), c.notes.end());
  r.time = c.time;
  r.wall_s = seconds_since(c.start);
}

}  // namespace

QuantizeResult run(const QuantizeOptions& o, Progress& progress, const RunContext& context) {
  const auto start = Clock::now();
  validate(o);
  const ModeEntry& requested = find_mode(o.mode);
  const CalibMethodEntry& method = find_calib_method(o.calib_method);
  set_intra_op_threads(o.timing.threads);
  select_quantized_engine(o.qengine);
  QuantizeResult r = start_result(o, requested);

  // ---- inputs: model, layers, data -------------------------------------------------------------
  model::LoadedModel source = model::load_model(o.model);
  find_model_layers(source, o, r);
  const auto todo = modes_to_try(requested);
  const bool wants_static =
      std::any_of(todo.begin(), todo.end(), [](const ModeEntry* m) { return m->scheme->needs_calibration(); });
  Context c{o, progress, context, source, start};
  c.auto_mode = !requested.scheme;
  load_data(c);
  std::optional<CalibrationStats> reused;
  if (o.calib_stats) reused = read_calibration_stats(*o.calib_stats, source, r);
  const CalibrationFallback fallback = calibration_fallback(c, wants_static, reused.has_value(), requested, r);
  const model::Dataset* calib_data = c.calib ? &*c.calib : fallback.from_eval ? &*fallback.from_eval : nullptr;
  c.spend("load", "", seconds_since(start));

  // ---- plans -----------------------------------------------------------------------------------
  Planned planned = plan_modes(todo, requested, o, r, source, fallback.problem);
  for (const auto& [m, p] : planned.plans) r.plans.push_back(p);
  for (const auto& [m, why] : planned.skipped) {
    Candidate cand;
    cand.mode = m->name;
    cand.problem = why;
    r.candidates.push_back(cand);
  }
  if (o.dry_run) {
    r.mode = planned.plans.front().first->name;
    r.wall_s = seconds_since(start);
    return r;
  }

  // ---- references, calibration, candidates, choice -----------------------------------------------
  c.measurements_left = static_cast<int>(planned.plans.size());
  c.load.emplace(r.threads);
  prepare_references(c, r);
  if (calib_data || reused) {
    c.calibrator =
        std::make_unique<Calibrator>(calib_data, calibration_batch(calib_data, o.eval_batch), method, source.path, progress);
    if (reused) c.calibrator->preload(*reused);
    c.calibrator->stats().model_sha256 = source.sha256;
  }
  const bool calibrates = c.calibrator && std::any_of(planned.plans.begin(), planned.plans.end(), [](const auto& p) {
    return p.first->scheme->needs_calibration();
  });
  announce_plan(c, r, planned.plans.size(), calibrates && calib_data ? calib_data->size() : 0);
  std::map<std::string, Built> built = build_candidates(c, planned, requested, r);
  if (!requested.scheme) judge_candidates(c, requested, r, built);
  const Candidate& chosen = write_chosen(c, r, built, method, reused);
  finish_result(c, chosen, requested, r);
  return r;
}

}  // namespace lite::quantize
