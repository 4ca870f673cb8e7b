// lite prune's run(): check everything, analyse the graph, plan, rebuild the model smaller (or sparser),
// prove it runs, measure it against the original (parameters, MACs, file and zstd bytes, accuracy or
// agreement, latency of both frozen the same way), write it with provenance. Nothing is written before
// every input has been checked and the pruned model has run.
#include <torch/jit.h>
#include <torch/script.h>

#include <fmt/format.h>
#include <zstd.h>

#include <chrono>
#include <exception>
#include <fstream>
#include <sstream>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/core/text.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/measure/frozen_float.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/facts_torch.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/prune/decoder_internal.hpp"
#include "lite/prune/plan_internal.hpp"

namespace fs = std::filesystem;

namespace lite::prune {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t zstd_bytes(const std::string& bytes) {
  std::string out(ZSTD_compressBound(bytes.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), bytes.data(), bytes.size(), 3);
  if (ZSTD_isError(n)) throw InternalError(std::string("zstd: ") + ZSTD_getErrorName(n));
  return n;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The deployment baseline both models are timed as: the frozen float baseline quantize compares against
// (torch::jit::freeze + optimize_for_inference, or freezing alone where that miscomputes the model on the
// timing input; `note` then says so). Falls back to the model as loaded when freezing fails.
torch::jit::Module deployed(const torch::jit::Module& module, const std::vector<torch::Tensor>& inputs, bool& frozen,
                            std::string& note) {
  try {
    measure::FrozenFloat f = measure::frozen_float(module, inputs);
    frozen = true;
    note = f.note;
    return f.module;
  } catch (const Interrupted&) {
    throw;  // not a failure to freeze
  } catch (const std::exception&) {
    frozen = false;
    torch::jit::Module m = module.clone();
    m.eval();
    return m;
  }
}

struct Context {
  const PruneOptions& o;
  Progress& progress;
  const RunContext& run_context;
  model::LoadedModel& source;
  std::optional<model::Dataset> eval;
  std::vector<model::InputSpec> specs;
  std::map<int64_t, std::vector<torch::Tensor>> inputs;  // per timed batch size
  std::vector<torch::Tensor> one;                        // batch 1: MACs and the run check
  fs::path out;                                          // the artifact (sensitivity files go beside it)
  std::string inputs_note;                               // set when the input shape was inferred
};

void prepare_inputs(Context& c) {
  const model::Dataset* data = c.eval ? &*c.eval : nullptr;
  auto make = [&](int64_t b) {
    if (c.specs.empty() && c.source.declared_inputs.empty() && data) return model::fit_batch_inputs(*data, b);
    return model::resolve_inputs(c.source, model::InputOptions{c.specs, {}, b, 0x5eed}, data, &c.inputs_note);
  };
  c.one = make(1);
  for (auto b : c.o.batches) c.inputs[b] = make(b);
}

Figures figures_of(torch::jit::Module& module, const std::string& bytes, uint64_t file_bytes, Context& c) {
  Figures f;
  model::LoadedModel m{module, c.source.path, file_bytes, {}, 0, nullptr, {}, {}};
  auto facts = model::measure_facts(m, c.one);
  f.parameters = count_parameters(module);
  f.macs = facts.total_macs;
  f.file_bytes = file_bytes;
  f.zstd_bytes = zstd_bytes(bytes);
  return f;
}

Quality measure_quality(Context& c, torch::jit::Module& original, torch::jit::Module& pruned) {
  Quality q;
  torch::Tensor ref, out;
  bool labels = false;
  if (c.eval) {
    q.data = c.o.eval->string();
    ref = measure::predict(original, *c.eval, c.o.eval_batch, c.source.path, c.progress);
    out = measure::predict(pruned, *c.eval, c.o.eval_batch, c.source.path, c.progress);
    labels = c.eval->has_labels();
  } else {
    auto inputs = model::resolve_inputs(c.source, model::InputOptions{c.specs, {}, 32, 0x5eed});
    q.data = "32 random inputs (pass {eval} for a real estimate)";
    ref = measure::forward_float(original, inputs, c.source.path);
    out = measure::forward_float(pruned, inputs, c.source.path);
  }
  q.samples = ref.dim() > 0 ? ref.size(0) : 1;
  q.agreement = measure::compare_outputs(ref, out);
  if (labels) {
    q.metric = "top-1 accuracy";
    q.before = measure::top1_accuracy(ref, *c.eval->y).percent();
    q.after = measure::top1_accuracy(out, *c.eval->y).percent();
  } else {
    q.metric = "top-1 agreement";
    q.before = 100;
    q.after = 100.0 * q.agreement.top1_agreement;
  }
  q.drop = q.before - q.after;
  return q;
}

// Times the pruned model against the original at each batch size, interleaved, each on fresh deployed copies. Every
// measurement keeps within measure::kMeasurementBudget (more when {duration_s} asks for more) and stops once the ratio is
// decided (settle_width); a batch size whose minimum measurement cannot fit is skipped with a note, judged before
// any call from the first batch size's cost (a call of b samples costs at least half of b/first calls of the first).
std::vector<Latency> measure_latency(Context& c, const std::string& pruned_bytes, std::vector<std::string>& notes) {
  measure::TimingOptions timing = measure::comparison_timing(c.o.timing);
  std::vector<Latency> out;
  bool unfrozen = false;
  std::string original_note, pruned_note;
  double first_pair_ms = 0;  // one call of each model at the first (smallest) batch size
  int64_t first_batch = 0;
  for (auto& [batch, inputs] : c.inputs) {
    const double estimate_ms = first_pair_ms * double(batch) / double(std::max<int64_t>(first_batch, 1)) / 2;
    if (first_batch && estimate_ms * (measure::kMinWarmup + measure::kMinTimed) > timing.budget_s * 1000) {
      notes.push_back(fmt::format("batch {} was not timed: a pair of calls at batch {} takes {:.0f} ms, so at batch {} "
                                  "about {:.0f} ms or more, and its minimum measurement overruns the {:.3g} s it may "
                                  "take; pick smaller {{batches}}",
                                  batch, first_batch, first_pair_ms, batch, estimate_ms, timing.budget_s));
      continue;
    }
    timing.may_skip = first_batch != 0;
    // Fresh copies per batch size: the profiling executor's specializations for other shapes stay out.
    bool frozen_a = false, frozen_b = false;
    std::string note_a, note_b;
    torch::jit::Module pruned = deployed(deserialize(pruned_bytes), inputs, frozen_a, note_a);
    torch::jit::Module original = deployed(c.source.module, inputs, frozen_b, note_b);
    unfrozen = unfrozen || !frozen_a || !frozen_b;
    if (original_note.empty()) original_note = note_b;  // one note per model: the first batch size's figures
    if (pruned_note.empty()) pruned_note = note_a;
    auto [a, b] = measure::time_interleaved(pruned, c.source.path, original, c.source.path, inputs, timing, c.progress);
    if (!first_batch) first_pair_ms = a.call_ms, first_batch = batch;
    if (a.skipped) {
      notes.push_back(fmt::format("batch {} was not timed: {}; pick smaller {{batches}}", batch, a.note));
      continue;
    }
    if (!a.note.empty()) notes.push_back(fmt::format("batch {}: {}", batch, a.note));
    Latency l;
    l.batch = batch;
    l.pruned_ms = stats::summarize(a.ms).p50;
    l.original_ms = stats::summarize(b.ms).p50;
    auto ci = stats::bootstrap_median_ratio(a.ms, b.ms);
    l.ratio = ci.estimate, l.ratio_low = ci.low, l.ratio_high = ci.high;
    out.push_back(l);
  }
  if (unfrozen) notes.push_back("torch::jit::freeze failed; latency compares the models as loaded (unfrozen)");
  if (!original_note.empty()) notes.push_back("original model: " + original_note);
  if (!pruned_note.empty()) notes.push_back("pruned model: " + pruned_note);
  return out;
}

// A latency taken on an oversubscribed machine, or a speedup beyond what the removed MACs explain, is no gain to
// report: each gets a finding, and the table marks it (report.cpp).
void judge_speed_claims(PruneResult& r) {
  if (r.load.oversubscribed())
    r.findings.push_back(measure::oversubscription_finding(r.load, "the latency comparison",
                                                           "its latencies and speedups are untrusted"));
  const std::optional<double> work =
      r.after.macs > 0 ? std::optional<double>(double(r.before.macs) / double(r.after.macs)) : std::nullopt;
  for (auto& l : r.latency) {
    const double speedup = l.ratio > 0 ? 1 / l.ratio : 0;
    l.implausible = measure::implausible_speedup(speedup, work);
    if (l.implausible)
      r.findings.push_back(measure::implausible_speedup_finding(
          speedup, fmt::format("batch {}", l.batch),
          work ? std::optional<double>(1 / *work) : std::nullopt));
  }
}

std::vector<c10::IValue> example_of(const Context& c) { return {c.one.begin(), c.one.end()}; }

struct Built {
  std::string bytes;
  nlohmann::json details;
};

void run_sensitivity(Context& c, PruneResult& r, const DependencyGraph& graph, const std::vector<torch::Tensor>& scores) {
  torch::jit::Module original = deserialize(serialize(c.source.module));
  Quality reference = measure_quality(c, original, original);
  auto measure = [&](torch::jit::Module& pruned) { return measure_quality(c, original, pruned).after; };
  r.sensitivity = analyse_sensitivity(c.source.module, graph, r.groups, scores, c.o, measure, reference.before, c.progress);
  const fs::path csv = sensitivity_path(c.o, ".sensitivity.csv"), svg = sensitivity_path(c.o, ".sensitivity.svg");
  write_file_atomically(csv, sensitivity_csv(r.sensitivity, reference.metric));
  write_file_atomically(svg, sensitivity_svg(r.sensitivity, reference.metric, reference.before));
  r.sensitivity_csv = csv.string();
  r.sensitivity_svg = svg.string();
  r.quality = reference;
  if (c.o.tolerance) {
    r.suggested = suggest_ratios(r.sensitivity, *c.o.tolerance);
    std::string flags;
    for (const auto& s : r.suggested) flags += fmt::format(" {{ratio}} '{}={}'", s.glob, s.ratio);
    r.notes.push_back("ratios within the tolerance, each group alone (drops add up when combined):" + flags);
  }
}

Built build_structured(Context& c, PruneResult& r, const Criterion& criterion) {
  const auto& o = c.o;
  const auto gradients = [&] {
    return taylor_gradients(c.source.module, model::take_first(model::load_model_data(c.source.module, *o.data), o.data_samples),
                            o.eval_batch, "pass {data} samples shaped like the model input, or use {criterion} l1");
  };
  ScoredGroups scored =
      score_groups(c.source.module, example_of(c), c.source.path.string(), o, criterion, gradients, r.findings,
                   "lite prune removes channels between conv/linear layers; try {unstructured} {sparsity} S");
  const DependencyGraph& graph = scored.graph;
  const std::vector<torch::Tensor>& scores = scored.scores;
  r.groups = std::move(scored.plans);
  if (o.sensitivity && !o.dry_run) {
    run_sensitivity(c, r, graph, scores);
    return {};
  }
  // --tolerance without a ratio: the analysis picks each group's ratio (the largest within the tolerance).
  if (o.tolerance && !o.ratio && o.layer_ratios.empty() && !o.dry_run) {
    run_sensitivity(c, r, graph, scores);
    for (auto& g : r.groups)
      for (const auto& s : r.suggested)
        if (s.glob == g.name) g.ratio = s.ratio;
  }
  Removal removal = choose_channels(scores, r.groups, o);
  r.planned_parameters = planned_parameter_count(c.source.module, graph, removal);
  if (o.dry_run) return {};
  Built b;
  b.bytes = cut_copy(c.source.module, graph, removal);
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.groups) groups.push_back(g);
  b.details = {{"method", "structured"}, {"criterion", criterion.name}, {"ratio", o.ratio ? nlohmann::json(*o.ratio) : nlohmann::json()},
               {"layer_ratios", o.layer_ratios}, {"global", o.global}, {"round_to", o.round_to},
               {"exclude", o.exclude}, {"groups", groups}};
  return b;
}

Built build_unstructured(Context& c, PruneResult& r) {
  const auto& o = c.o;
  DependencyGraph graph = build_dependency_graph(c.source.module, example_of(c));
  if (graph.weights.empty())
    throw InputError(c.source.path.string(), "has nothing prunable: no convolution or linear weight in forward",
                     "lite prune works on models with conv or linear layers");
  std::vector<std::string> names;
  for (const auto& w : graph.weights) names.push_back(w.module);
  for (const auto& glob : o.exclude)
    if (std::none_of(names.begin(), names.end(), [&](const std::string& n) { return glob_match(glob, n); }))
      r.findings.push_back({"warning", "exclude glob '" + glob + "' matches no layer", "", "layers: " + join(names, ", ")});
  torch::jit::Module pruned = deserialize(serialize(c.source.module));
  r.layers = zero_smallest(pruned, graph.weights, *o.sparsity, o.global, o.exclude);
  r.planned_parameters = count_parameters(c.source.module);
  r.notes.push_back("unstructured sparsity keeps every shape: dense kernels run no faster; the gain is the compressed size (zstd)");
  if (o.dry_run) return {};
  Built b;
  b.bytes = serialize(pruned);
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : r.layers) layers.push_back(l);
  b.details = {{"method", "unstructured"}, {"sparsity", *o.sparsity}, {"global", o.global}, {"exclude", o.exclude},
               {"layers", layers}};
  return b;
}

// The pruned model must load and run before anything is written. The original runs first on the same inputs:
// when it fails, the input is at fault (a shape lite guessed, or --input), not the pruning.
void check_runs(Context& c, const std::string& bytes) {
  {
    torch::NoGradGuard no_grad;
    torch::jit::Module original = deserialize(serialize(c.source.module));
    model::run_forward(original, c.one, c.source.path);
  }
  torch::jit::Module m = deserialize(bytes);
  try {
    torch::NoGradGuard no_grad;
    m.forward(std::vector<c10::IValue>(c.one.begin(), c.one.end()));
  } catch (const std::exception& e) {
    throw InternalError("the pruned model does not run (" + model::torch_error_reason(e) +
                        "); nothing was written. Please report this with the model; {exclude} the layers named may help");
  }
}

// Without a tolerance, the "agreement" gate fails when top-1 agreement with the original fell by more than
// {agreement_floor} points on more than one sample (quantize's rule: one flipped sample of a small set is noise).
void check_agreement_floor(const PruneOptions& o, PruneResult& r) {
  r.agreement_floor = o.agreement_floor;
  if (r.tolerance_given) return;
  const measure::AgreementLoss loss = measure::agreement_loss(r.quality.agreement, o.agreement_floor);
  if (!loss.breaks_floor) return;
  const double lost = loss.points;
  r.gates.fail("agreement");
  r.findings.push_back(
      {"warning",
       fmt::format("the pruned model agrees with the original's top-1 on {:.2f}% of {} ({:.2f} points lost)",
                   100.0 - lost, r.quality.data, lost),
       fmt::format("{{agreement_floor}} {:.2f} points", o.agreement_floor),
       "lower {ratio}, {exclude} the most sensitive layers ({sensitivity} shows them), recover with lite distill "
       "--student-from-prune, or raise {agreement_floor}"});
}

// Size, MACs, quality and latency of the original and the pruned model, each measured on a fresh copy.
void measure_both(Context& c, const model::LoadedModel& source, const Built& built, bool unstructured, PruneResult& r) {
  {
    torch::jit::Module original_copy = deserialize(serialize(source.module));
    r.before = figures_of(original_copy, read_file(source.path), source.file_bytes, c);
    torch::jit::Module pruned_copy = deserialize(built.bytes);
    r.after = figures_of(pruned_copy, built.bytes, built.bytes.size(), c);
  }
  if (!unstructured && r.after.parameters != r.planned_parameters)
    throw InternalError("the pruned model has " + std::to_string(r.after.parameters) + " parameters, the plan " +
                        std::to_string(r.planned_parameters));
  {
    torch::jit::Module original_copy = deserialize(serialize(source.module));
    torch::jit::Module pruned_copy = deserialize(built.bytes);
    r.quality = measure_quality(c, original_copy, pruned_copy);
  }
  {
    std::vector<std::string> batches;
    for (const auto& [batch, inputs] : c.inputs) batches.push_back(std::to_string(batch));
    const double budget = measure::comparison_budget_s(c.o.timing);
    c.progress.announce(fmt::format("lite prune: timing the pruned model against the original at batch {}: at most "
                                    "{:.0f} s ({:.0f} s a batch size)",
                                    join(batches, ", "), budget * double(batches.size()), budget));
    measure::LoadWatch load(r.threads);
    r.latency = measure_latency(c, built.bytes, r.notes);
    r.load = load.result();
  }
  judge_speed_claims(r);
  r.measured = true;
}

// The artifact, with what was done to it and its figures in lite.json.
void write_pruned(const Context& c, const model::LoadedModel& source, const Built& built, const fs::path& out,
                  PruneResult& r) {
  model::ArtifactInfo info;
  info.transform = "prune";
  info.command_line = c.run_context.command_line;
  info.details = built.details;
  info.figures = {{"parameters", {{"before", r.before.parameters}, {"after", r.after.parameters}}},
                  {"macs", {{"before", r.before.macs}, {"after", r.after.macs}}},
                  {"zstd_bytes", {{"before", r.before.zstd_bytes}, {"after", r.after.zstd_bytes}}},
                  {"quality", r.quality}};  // latencies stay in the report: they vary run to run
  if (source.declared_inputs.empty()) info.inputs = model::describe_inputs(c.one);
  model::save_artifact(deserialize(built.bytes), out, source, info);
  r.output = out.string();
  r.after.file_bytes = fs::file_size(out);
}

}  // namespace

PruneResult run(const PruneOptions& o, Progress& progress, const RunContext& context) {
  const auto start = Clock::now();
  validate(o);
  const bool unstructured = o.unstructured || o.sparsity.has_value();
  const Criterion* criterion = unstructured ? nullptr : &find_criterion(o.criterion);
  set_intra_op_threads(o.timing.threads);
  const fs::path out = output_path(o);  // validate() checked it and the sidecars against every input

  PruneResult r;
  r.method = unstructured ? "unstructured" : "structured";
  r.criterion = criterion ? criterion->name : "magnitude";
  r.dry_run = o.dry_run;
  r.global = o.global;
  r.threads = at::get_num_threads();
  r.tolerance_given = o.tolerance.has_value();
  r.tolerance = o.tolerance.value_or(0);

  model::LoadedModel source = model::load_model(o.model);
  r.model = source.path.string();
  if (!unstructured && is_decoder_run(o, source.module)) {
    run_decoder(o, source, progress, context, r);
    r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }
  Context c{o, progress, context, source, {}, {}, {}, {}, out, {}};
  c.specs = o.inputs;
  if (o.eval) c.eval = model::load_model_data(source.module, *o.eval, o.labels);
  if (o.data && criterion && !criterion->needs_data)
    r.notes.push_back("{data} is only used by the taylor criterion; " + r.criterion + " ignores it");

  // The analysis decides the branches that depend on the input on the batch-1 input. A model it finds nothing
  // prunable in is told so first, and a dry run whose input cannot be resolved still prints the plan (those
  // branches undecided): an input error waits until the build is done.
  std::exception_ptr input_error;
  try {
    prepare_inputs(c);
  } catch (const InputError&) {
    input_error = std::current_exception();
  }
  Built built = unstructured ? build_unstructured(c, r) : build_structured(c, r, *criterion);
  if (o.dry_run || o.sensitivity) {
    r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }
  if (input_error) std::rethrow_exception(input_error);
  if (!c.inputs_note.empty()) {
    r.notes.push_back(c.inputs_note);
    std::vector<std::string> shapes;
    for (const auto& spec : model::describe_inputs(c.one)) shapes.push_back(model::to_string(spec));
    r.guessed_inputs = join(shapes, ", ");
  }
  check_runs(c, built.bytes);
  throw_if_interrupted();

  measure_both(c, source, built, unstructured, r);
  throw_if_interrupted();  // a signal during the timing ends the command here: nothing is written (exit 130/143)
  write_pruned(c, source, built, out, r);

  if (r.tolerance_given && r.quality.drop > r.tolerance) r.gates.fail("tolerance");
  check_agreement_floor(o, r);
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace lite::prune
