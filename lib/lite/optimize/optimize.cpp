// lite optimize's run(): the search. Every variant of the space (prune family: a ratio or the sensitivity
// analysis' ratios, recovered by distillation with training data; x mode) is built with the verbs and screened
// (quality on a subset of the evaluation samples with a 95% interval, a short timing interleaved with the
// original); a variant whose screen already shows it cannot win is not measured further, and a prune family whose
// float variant loses the accuracy budget takes its quantized variants with it. The survivors are measured fully,
// fastest screened speedup first, each checked again against those measured before it (a slower variant than one
// already within the budget cannot be cheaper). With a trace, one cache-sim pass sizes a cache in front of every
// variant within the budget. The cheapest feasible variant is chosen (objective.hpp) and written with the whole
// search in its lite.json. Every build and measurement is a record in the work folder, so a re-run resumes.
#include <torch/script.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "lite/core/atomic_file.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/memory.hpp"
#include "lite/measure/machine_load.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/optimize/cache_fit.hpp"
#include "lite/optimize/decoder_search_internal.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/outputs.hpp"
#include "lite/optimize/search_internal.hpp"
#include "lite/optimize/verb.hpp"

namespace lite::optimize {

namespace fs = std::filesystem;

namespace {


// A family's base (its pruned or recovered model) could not be made: every variant of the family fails with it.
struct BaseFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Search {
 public:
  Search(const OptimizeOptions& o, const RunContext& context, Progress& progress, OptimizeResult& r,
         Clock::time_point start)
      : o_(o), context_(context), progress_(progress), r_(r), start_(start) {}

  void prepare();
  void screen_all();
  void measure_survivors();
  void size_caches();
  void decide();
  void write_outputs();

 private:
  bool out_of_budget() const;
  double baseline_p50() const { return r_.original_latency ? r_.original_latency->p50_ms : 0.0; }
  double fastest_within_budget() const;
  void timed(const std::string& stage, const std::function<void()>& work);
  void screen(Variant& v);
  void measure(Variant& v);
  void skip_rest_of_family(const std::string& family, size_t from, const std::string& reason);
  detail::PrunedBase build_base(const VariantSpec& spec);
  void write_artifact(const Variant& v);

  const OptimizeOptions& o_;
  const RunContext& context_;
  Progress& progress_;
  OptimizeResult& r_;
  Clock::time_point start_;
  Objective objective_;
  std::optional<WorkFolder> folder_;
  std::optional<model::LoadedModel> original_;
  detail::Reference reference_;
  detail::BuildSettings build_;
  nlohmann::json build_settings_, settings_;
  std::optional<measure::LoadWatch> load_;  // the machine's load over every timing of the search
  std::map<std::string, double> stage_seconds_;
  std::vector<std::string> stage_order_;
  int skipped_for_cpu_ = 0;  // default modes this CPU cannot run well, skipped before the budget mattered
};

bool Search::out_of_budget() const {
  if (!o_.budget_s) return false;
  // A trace's cache pass comes after the measurements: leave it a tenth of the budget.
  const double usable = *o_.budget_s * (o_.trace ? 0.9 : 1.0);
  return seconds_between(start_, Clock::now()) >= usable;
}

void Search::timed(const std::string& stage, const std::function<void()>& work) {
  const auto begin = Clock::now();
  if (!stage_seconds_.count(stage)) stage_order_.push_back(stage);
  try {
    work();
  } catch (...) {
    stage_seconds_[stage] += seconds_between(begin, Clock::now());
    throw;
  }
  stage_seconds_[stage] += seconds_between(begin, Clock::now());
}

void Search::prepare() {
  timed("original", [&] {
    load_.emplace(at::get_num_threads());
    original_ = model::load_model(o_.model);
    r_.model = o_.model.string();
    r_.model_sha256 = original_->sha256;
    r_.model_bytes = original_->file_bytes;
    reference_ = detail::make_reference(*original_, o_, r_.notes, no_progress());
    folder_.emplace(work_dir(o_), original_->sha256);  // after the inputs and data are checked: a refusal writes nothing
    r_.work_dir = folder_->folder().string();
    std::vector<std::string> shapes;
    for (const auto& spec : model::describe_inputs(reference_.timing_inputs)) shapes.push_back(model::to_string(spec));
    r_.input = join(shapes, ", ");
    r_.eval_source = reference_.eval_source;
    r_.metric = reference_.metric;
    const int64_t n = reference_.eval.size();
    r_.original_quality = make_quality(r_.metric, n, reference_.percent_on(n), reference_.percent_on(n));
    r_.original_latency = detail::measure_original(reference_, o_.duration_s, o_.warmup, no_progress());
  });
  objective_.target = r_.target;
  objective_.accuracy_budget = r_.accuracy_budget;
  objective_.cost_cache_gib = o_.cost_cache_gib;
  objective_.cost_core_ms = o_.cost_core_ms;
  objective_.cores = o_.threads > 0 ? o_.threads : at::get_num_threads();
  objective_.cache_unit = o_.cache_objects ? "objects" : "bytes";
  r_.cache_unit = objective_.cache_unit;
  r_.objective = objective_.describe();
  build_.options = &o_;
  build_.context = &context_;
  build_.calib = o_.calib ? o_.calib : o_.eval;
  build_.inputs = o_.inputs.empty() ? model::describe_inputs(reference_.timing_inputs) : o_.inputs;
  build_settings_ = {{"calib", build_.calib ? file_identity(*build_.calib) : nlohmann::json()},
                     {"calib_samples", o_.calib_samples},
                     {"inputs", r_.input}};
  if (o_.data)
    build_settings_["recovery"] = {{"data", file_identity(*o_.data)},
                                   {"labels", o_.data_labels ? file_identity(*o_.data_labels) : nlohmann::json()},
                                   {"epochs", o_.recover_epochs},
                                   {"samples", o_.recover_samples}};
  settings_ = {{"build", build_settings_},
               {"eval", o_.eval ? file_identity(*o_.eval) : nlohmann::json()},
               {"labels", o_.labels ? file_identity(*o_.labels) : nlohmann::json()},
               {"batch", o_.batch},
               {"threads", o_.threads},
               {"screen", {o_.screen_samples, o_.screen_duration_s}},
               {"measure", {o_.duration_s, o_.warmup, o_.eval_batch}}};
  std::set<double> ratios(o_.prune_ratios.begin(), o_.prune_ratios.end());
  ratios.insert(0.0);
  std::vector<std::string> modes = o_.modes;
  std::stable_partition(modes.begin(), modes.end(), [](const std::string& m) { return m == "float"; });
  std::vector<VariantSpec> bases;
  for (double ratio : ratios) bases.push_back({ratio, "", ratio > 0 && o_.data.has_value()});
  if (o_.prune_sensitivity) bases.push_back({0.0, "", o_.data.has_value(), /*by_sensitivity=*/true});
  for (const VariantSpec& base : bases)
    for (const auto& mode : modes) {
      Variant v;
      v.spec = base;
      v.spec.mode = mode;
      v.key = WorkFolder::key(v.spec, settings_);
      v.status = "proposed";
      if (v.reason = detail::mode_cpu_problem(o_, mode); !v.reason.empty()) {
        v.status = "skipped";
        ++skipped_for_cpu_;
      }
      r_.variants.push_back(v);
    }
  r_.proposed = int(r_.variants.size());
}

void Search::skip_rest_of_family(const std::string& family, size_t from, const std::string& reason) {
  for (size_t i = from; i < r_.variants.size(); ++i)
    if (r_.variants[i].spec.prune_family() == family && r_.variants[i].status == "proposed") {
      r_.variants[i].status = "skipped";
      r_.variants[i].reason = reason;
    }
}

// Quality first: a variant already over the accuracy budget on the screen's samples is not timed at all.
void Search::screen(Variant& v) {
  if (auto record = folder_->read(v.key, "screen")) {
    v.screen_quality = record->at("quality").get<Quality>();
    if (!record->at("latency").is_null()) v.screen_latency = record->at("latency").get<Latency>();
    v.reused = true;
  } else {
    const auto begin = Clock::now();
    model::LoadedModel m = model::load_model(v.artifact);
    v.screen_quality = detail::measure_quality(m.module, m.path, reference_, o_.screen_samples, o_.eval_batch,
                                               no_progress());
    if (v.screen_quality->drop_low <= objective_.accuracy_budget) {
      const SettleRule settle = screen_settle_rule();
      v.screen_latency = detail::measure_latency(m.module, m.path, reference_, o_.screen_duration_s, o_.warmup,
                                                 &settle, no_progress());
    }
    v.screen_s = seconds_between(begin, Clock::now());
    folder_->write(v.key, "screen", {{"quality", *v.screen_quality},
                                     {"latency", v.screen_latency ? nlohmann::json(*v.screen_latency) : nullptr}});
    load_->sample();
  }
  v.status = "screened";
}

// The model every variant of a family starts from: the original, or it pruned (and recovered).
detail::PrunedBase Search::build_base(const VariantSpec& spec) {
  detail::PrunedBase base{o_.model, nullptr};
  if (!spec.pruned()) return base;
  bool reused = false;
  try {
    timed("build", [&] { base = detail::build_pruned(spec, build_, *folder_, build_settings_, no_progress(), reused); });
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    throw BaseFailed("prune refused the model: " + first_line(e.what()));
  }
  if (!spec.recovered) return base;
  try {
    timed("recover", [&] {
      base.path = detail::build_recovered(spec, base.path, build_, *folder_, build_settings_, no_progress(), reused);
    });
  } catch (const Interrupted&) {
    throw;
  } catch (const Error& e) {
    throw BaseFailed("recovery failed: " + first_line(e.what()));
  }
  return base;
}

void Search::screen_all() {
  ProgressPhase phase(progress_, "optimize: building and screening", r_.variants.size());
  std::map<std::string, detail::PrunedBase> bases;
  for (size_t i = 0; i < r_.variants.size(); ++i, phase.advance()) {
    Variant& v = r_.variants[i];
    if (v.status != "proposed") continue;
    throw_if_interrupted();
    if (out_of_budget()) {
      v.status = "skipped";
      v.reason = "the budget ran out before it was built";
      r_.budget_exhausted = true;
      continue;
    }
    const std::string family = v.spec.prune_family();
    if (!bases.count(family)) {
      try {
        bases[family] = build_base(v.spec);
      } catch (const BaseFailed& e) {
        for (Variant& w : r_.variants)
          if (w.spec.prune_family() == family) {
            w.status = "failed";
            w.reason = e.what();
          }
        continue;
      }
    }
    v.layer_ratios = bases[family].layer_ratios;
    timed("build", [&] { detail::build_variant(v, bases[family].path, build_, *folder_, no_progress()); });
    if (v.status == "failed") continue;
    if (o_.exhaustive) {  // the grid: every variant goes straight to its full measurement
      v.status = "screened";
      continue;
    }
    timed("screen", [&] { screen(v); });
    const std::string reason = screen_out_reason(v, objective_, {}, o_.trace.has_value(), baseline_p50());
    if (!reason.empty()) {
      v.status = "screened out";
      v.reason = reason;
      if (v.spec.mode == "float" && v.spec.pruned() && v.screen_quality->drop_low > r_.accuracy_budget)
        skip_rest_of_family(family, i + 1, fmt::format("{} alone already loses {:.2f} points; quantization does "
                                                       "not win accuracy back", family, v.screen_quality->drop));
    }
  }
}

// The highest speedup low end of the variants measured so far within the accuracy budget (0: none).
double Search::fastest_within_budget() const {
  double fastest = 0;
  for (const Variant& m : r_.variants)
    if (m.status == "measured" && m.meets_accuracy && m.latency) fastest = std::max(fastest, m.latency->speedup_low);
  return fastest;
}

void Search::measure(Variant& v) {
  if (auto record = folder_->read(v.key, "measure")) {
    v.quality = record->at("quality").get<Quality>();
    v.latency = record->at("latency").get<Latency>();
    v.peak_rss_bytes = record->value("peak_rss_bytes", uint64_t(0));
    v.rss_before_bytes = record->value("rss_before_bytes", uint64_t(0));
    v.reused = true;
  } else {
    const auto begin = Clock::now();
    const bool peak_reset = reset_peak_rss();
    v.rss_before_bytes = current_rss_bytes();
    {
      model::LoadedModel m = model::load_model(v.artifact);
      v.quality = detail::measure_quality(m.module, m.path, reference_, 0, o_.eval_batch, no_progress());
      // The grid times every variant for the whole duration; the search stops once the figures it decides on
      // are settled (a variant over the accuracy budget only needs the screen's precision).
      const SettleRule settle = v.quality->drop > objective_.accuracy_budget
                                    ? screen_settle_rule()
                                    : measure_settle_rule(objective_.target, fastest_within_budget(), baseline_p50());
      v.latency = detail::measure_latency(m.module, m.path, reference_, o_.duration_s, o_.warmup,
                                          o_.exhaustive ? nullptr : &settle, no_progress());
    }
    if (peak_reset) v.peak_rss_bytes = peak_rss_bytes();
    load_->sample();
    v.measure_s = seconds_between(begin, Clock::now());
    folder_->write(v.key, "measure", {{"quality", *v.quality}, {"latency", *v.latency},
                                      {"peak_rss_bytes", v.peak_rss_bytes}, {"rss_before_bytes", v.rss_before_bytes}});
  }
  v.status = "measured";
  judge(v, objective_);
}

void Search::measure_survivors() {
  std::vector<Variant*> order;
  for (Variant& v : r_.variants)
    if (v.status == "screened") order.push_back(&v);
  // Fastest screen first (as speedups over the original: comparable across moments); the grid keeps its order.
  auto speed = [](const Variant* v) { return v->screen_latency ? v->screen_latency->speedup : 0.0; };
  std::stable_sort(order.begin(), order.end(), [&](const Variant* a, const Variant* b) { return speed(a) > speed(b); });
  ProgressPhase phase(progress_, "optimize: measuring", order.size());
  for (Variant* v : order) {
    phase.advance();
    throw_if_interrupted();
    const std::string reason =
        o_.exhaustive ? std::string()
                      : screen_out_reason(*v, objective_, r_.variants, o_.trace.has_value(), baseline_p50());
    if (!reason.empty()) {
      v->status = "screened out";
      v->reason = reason;
      continue;
    }
    if (out_of_budget()) {
      v->status = "skipped";
      v->reason = "the budget ran out before its full measurement";
      r_.budget_exhausted = true;
      continue;
    }
    timed("measure", [&] { measure(*v); });
  }
}

void Search::size_caches() {
  if (!o_.trace) return;
  r_.cache_searched = true;
  std::vector<Variant*> within_budget;
  // A variant that meets the target alone needs no cache: only the others are sized.
  for (Variant& v : r_.variants)
    if (v.status == "measured" && v.meets_accuracy && !v.meets_latency_alone) within_budget.push_back(&v);
  timed("cache", [&] { fit_caches(within_budget, o_, r_.target, r_.cache_unit, r_.notes, progress_); });
  objective_.cache_unit = r_.cache_unit;
}

std::string verdict_of(const Variant& v, const Target& t) {
  if (v.chosen) return "chosen: the cheapest variant that meets the target and the accuracy budget";
  if (v.status != "measured") return v.status + (v.reason.empty() ? "" : ": " + v.reason);
  if (!v.meets_accuracy) return fmt::format("over the accuracy budget ({:.2f} points lost)", v.quality->drop);
  if (!v.feasible)
    return v.cache ? fmt::format("misses the target even behind the largest cache ({:.3g} ms at best)", v.cache->best_ms)
                   : "misses the target";
  return v.on_frontier ? "meets the target; on the frontier, but costs more" : "meets the target; dominated";
}

void Search::decide() {
  for (Variant& v : r_.variants)
    if (v.status == "measured") judge(v, objective_);
  r_.chosen = choose(r_.variants, objective_);
  for (Variant& v : r_.variants) {
    v.verdict = verdict_of(v, r_.target);
    r_.screened_out += v.status == "screened out";
    r_.skipped += v.status == "skipped";
    r_.failed += v.status == "failed";
    r_.measured += v.status == "measured";
    r_.reused += v.reused;
  }
  r_.family_verdicts = family_verdicts(r_.variants, objective_);
  r_.machine_load = load_->result();
  if (r_.machine_load.oversubscribed())
    r_.findings.push_back(measure::oversubscription_finding(
        r_.machine_load, "the search's timings",
        "latencies and speedups swing with the load, so screening and the choice may differ on a quiet machine"));
  if (!r_.chosen) {
    r_.nearest_misses = nearest_misses(r_.variants, objective_);
    r_.gates.fail("target");
  }
  if (r_.budget_exhausted)
    r_.notes.push_back(fmt::format("the budget of {:g} s ran out: {} variant{} not measured; the choice is the best of "
                                   "those measured", *o_.budget_s, r_.skipped - skipped_for_cpu_,
                                   r_.skipped - skipped_for_cpu_ == 1 ? " was" : "s were"));
}

void Search::write_artifact(const Variant& v) {
  model::LoadedModel chosen = model::load_model(v.artifact);
  model::ArtifactInfo info;
  info.transform = verb().name;
  info.command_line = context_.command_line;
  nlohmann::json variants = nlohmann::json::array();
  for (const Variant& w : r_.variants)
    variants.push_back({{"variant", w.spec.label()}, {"status", w.status}, {"verdict", w.verdict},
                        {"file_bytes", w.file_bytes},
                        {"drop", w.quality ? nlohmann::json(w.quality->drop) : nlohmann::json()}});
  info.details = {{"target", r_.target.describe()},
                  {"accuracy_budget", r_.accuracy_budget},
                  {"metric", r_.metric},
                  {"objective", r_.objective},
                  {"chosen", v.spec},
                  {"cache", cache_size_needed(v) ? nlohmann::json(*v.cache) : nlohmann::json()},
                  {"cache_unit", r_.cache_unit},
                  {"search", {{"proposed", r_.proposed}, {"screened_out", r_.screened_out}, {"skipped", r_.skipped},
                              {"failed", r_.failed}, {"measured", r_.measured}}},
                  {"variants", variants},
                  {"family_verdicts", r_.family_verdicts}};
  info.figures = {{"file_bytes", v.file_bytes}, {"original_bytes", r_.model_bytes},
                  {"quality", *v.quality}};
  info.inputs = chosen.declared_inputs.empty() ? build_.inputs : chosen.declared_inputs;
  model::save_artifact(chosen.module, output_path(o_), chosen, info);
}

void Search::write_outputs() {
  throw_if_interrupted();
  timed("write", [&] {
    if (r_.chosen) {
      const Variant& v = r_.variants[*r_.chosen];
      write_artifact(v);
      r_.output = output_path(o_).string();
      if (!o_.emit_recipe.empty()) {
        write_file_atomically(o_.emit_recipe, emitted_recipe(r_, o_).dump(2) + "\n");
        r_.emitted_recipe = o_.emit_recipe.string();
      }
    } else if (!o_.emit_recipe.empty()) {
      r_.notes.push_back("no recipe emitted: nothing met the target");
    }
    if (!o_.plot.empty()) {
      write_file_atomically(o_.plot, frontier_svg(r_));
      r_.plot = o_.plot.string();
    }
  });
  for (const auto& stage : stage_order_) r_.time.push_back({stage, stage_seconds_[stage]});
}

}  // namespace

OptimizeResult run(const OptimizeOptions& o, Progress& progress, const RunContext& context) {
  const auto start = Clock::now();
  validate(o);
  if (o.trace && !detail::is_prefix_search(o)) validate_cache_options(o);
  set_intra_op_threads(o.threads);
  OptimizeResult r;
  r.target = target_of(o);
  r.accuracy_budget = accuracy_budget(o);
  if (detail::is_prefix_search(o)) {
    detail::run_decoder_search(o, progress, context, r);
    r.wall_s = seconds_between(start, Clock::now());
    return r;
  }
  Search search(o, context, progress, r, start);
  search.prepare();
  search.screen_all();
  search.measure_survivors();
  search.size_caches();
  search.decide();
  search.write_outputs();
  r.wall_s = seconds_between(start, Clock::now());
  return r;
}

}  // namespace lite::optimize
