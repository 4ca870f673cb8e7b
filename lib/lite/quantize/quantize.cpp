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
