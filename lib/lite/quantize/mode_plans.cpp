// Which modes a run tries (the requested one, or every scheme for auto) and a plan for each (plan.hpp). A mode that
// cannot apply to this model, engine or data is an input error when it was asked for, and for auto a candidate
// recorded with its reason.
#include "lite/core/error.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/quantize/run_internal.hpp"

namespace lite::quantize {

// The modes to try: the requested one, or every mode for auto.
std::vector<const ModeEntry*> modes_to_try(const ModeEntry& requested) {
  std::vector<const ModeEntry*> todo;
  if (requested.scheme) {
    todo.push_back(&requested);
  } else {
    for (const auto& m : modes())
      if (m.scheme) todo.push_back(&m);
  }
  return todo;
}

namespace {

// The plan of a mode that needs calibration data the run lacks: only timed (static_probe.cpp), so a mode that
// cannot apply for another reason is simply not planned.
void plan_without_data(const ModeEntry& m, const QuantizeOptions& o, const QuantizeResult& r,
                       const model::LoadedModel& source, Planned& out) {
  try {
    Plan plan = make_plan(r.layers, m, r.engine, o.skip, o.only, {}, source.file_bytes);
    if (plan.quantized_layers() > 0) out.uncalibrated.emplace(&m, std::move(plan));
  } catch (const InputError&) {
  }
}

}  // namespace

// A plan per mode that applies; for auto, the others are recorded with the reason. An explicit mode that
// cannot apply is an input error.
Planned plan_modes(const std::vector<const ModeEntry*>& todo, const ModeEntry& requested, const QuantizeOptions& o,
                   const QuantizeResult& r, const model::LoadedModel& source, const std::string& calib_problem) {
  Planned out;
  const Environment& env = cpu_rule_environment();
  for (const ModeEntry* m : todo) {
    std::string problem = m->scheme->engine_problem(r.engine);
    if (problem.empty() && !requested.scheme) problem = m->scheme->cpu_problem(env);
    if (problem.empty() && m->scheme->needs_calibration() && !calib_problem.empty()) {
      problem = calib_problem;
      plan_without_data(*m, o, r, source, out);
    }
    if (problem.empty()) {
      try {
        out.plans.emplace_back(m, make_plan(r.layers, *m, r.engine, o.skip, o.only, {}, source.file_bytes));
        if (out.plans.back().second.quantized_layers() == 0) {
          out.plans.pop_back();
          problem = "no layer left to quantize after {skip}/{only}";
        }
      } catch (const InputError& e) {
        if (requested.scheme) throw;  // already names {mode} and its fix
        problem = e.what();
      }
    }
    if (!problem.empty()) {
      if (requested.scheme) throw InputError(source.path.string(), problem, "try another {mode}");
      out.skipped.emplace_back(m, problem);
    }
  }
  if (out.plans.empty())
    throw InputError(source.path.string(), "no quantization mode applies to this model",
                     "see the reasons with {dry_run} {mode} auto");
  return out;
}

void record_plans(const Planned& planned, QuantizeResult& r) {
  for (const auto& [m, p] : planned.plans) r.plans.push_back(p);
  for (const auto& [m, why] : planned.skipped) {
    Candidate cand;
    cand.mode = m->name;
    cand.problem = why;
    r.candidates.push_back(cand);
  }
}

}  // namespace lite::quantize
