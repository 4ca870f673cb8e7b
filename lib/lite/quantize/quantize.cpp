// lite quantize: check everything, plan, build each candidate mode and time it against the frozen float model on
// this machine. An explicit mode is then judged on the evaluation data (with the tolerance search when a tolerance
// is given); auto judges its candidates fastest first, each stopped once it cannot fit the tolerance, and stops at
// the first that meets it (judging.hpp), searching for float fallbacks only when none does; without calibration data
// it times static int8 uncalibrated when nothing it built is faster (static_probe.cpp). The best candidate is
// written. Nothing is written before every input has been checked and the artifact is final.
//
// run() is the list of those stages; each lives in the file that owns its idea (run_internal.hpp lists them).
#include "lite/quantize/quantize.hpp"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "lite/core/clock.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/quantize/decoder_quantize.hpp"
#include "lite/quantize/gates_internal.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

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
  apply_gates(chosen, requested, c.o, c.load->result(), c.source.file_bytes, r);
  r.notes.insert(r.notes.end(), c.notes.begin(), c.notes.end());
  r.time = c.time;
  r.wall_s = seconds_since(c.start);
}

// Both run()s: the decoder path takes the caller's float reference when there is one.
QuantizeResult run_with(const QuantizeOptions& o, Progress& progress, const RunContext& context,
                        const DecoderReference* decoder_reference) {
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
  if (is_decoder_run(o, source.module)) {
    Context dc{o, progress, context, source, start};
    dc.decoder_reference = decoder_reference;
    dc.spend("load", "", seconds_since(start));
    run_decoder(dc, requested, r);
    r.notes.insert(r.notes.end(), dc.notes.begin(), dc.notes.end());
    r.time = dc.time;
    r.wall_s = seconds_since(start);
    return r;
  }
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
  record_plans(planned, r);
  if (o.dry_run) {
    r.mode = planned.plans.front().first->name;
    r.wall_s = seconds_since(start);
    return r;
  }

  // ---- references, calibration, candidates, choice -----------------------------------------------
  c.measurements_left = static_cast<int>(planned.plans.size());
  c.load.emplace(r.threads);
  prepare_references(c, r);
  set_up_calibrator(c, calib_data, reused, method);
  const bool calibrates = c.calibrator && std::any_of(planned.plans.begin(), planned.plans.end(), [](const auto& p) {
    return p.first->scheme->needs_calibration();
  });
  announce_plan(c, r, planned.plans.size(), calibrates && calib_data ? calib_data->size() : 0);
  std::map<std::string, Built> built = build_candidates(c, planned, requested, r);
  if (!requested.scheme) {
    judge_candidates(c, requested, r, built);
    probe_uncalibrated(c, planned, r);
  }
  const Candidate& chosen = write_chosen(c, r, built, method, reused);
  finish_result(c, chosen, requested, r);
  return r;
}

}  // namespace

QuantizeResult run(const QuantizeOptions& o, Progress& progress, const RunContext& context) {
  return run_with(o, progress, context, nullptr);
}

QuantizeResult run(const QuantizeOptions& o, Progress& progress, const RunContext& context,
                   const DecoderReference& reference) {
  return run_with(o, progress, context, &reference);
}

}  // namespace lite::quantize
