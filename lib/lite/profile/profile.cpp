#include "lite/profile/profile.hpp"

#include <chrono>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/memory.hpp"
#include "lite/core/stats.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/measure/speed_claim.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/facts_torch.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/load.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/profile/decoder_run.hpp"
#include "lite/profile/diagnosis.hpp"
#include "lite/profile/load_test.hpp"
#include "lite/profile/op_profiler.hpp"

namespace lite::profile {

namespace {
using Clock = std::chrono::steady_clock;

bool graph_is_frozen(torch::jit::Module& m) {
  auto method = m.find_method("forward");
  if (!method) return false;
  for (auto* node : method->graph()->nodes())
    if (node->kind() == c10::prim::GetAttr || node->kind() == c10::prim::CallMethod) return false;
  return true;
}

struct Loaded {
  model::LoadedModel model;
  ModelProfile profile;
};

Loaded load_one(const std::filesystem::path& path, Progress& progress) {
  ProgressPhase phase(progress, "loading " + path.string(), 0);
  Loaded l;
  l.profile.rss_before_load_bytes = current_rss_bytes();
  l.model = model::load_model(path);
  l.profile.path = path.string();
  l.profile.sha256 = l.model.sha256;
  l.profile.load_ms = l.model.load_ms;
  l.profile.frozen = graph_is_frozen(l.model.module);
  return l;
}

void first_inference(Loaded& l, const std::vector<torch::Tensor>& inputs, const measure::TimingOptions& timing) {
  torch::NoGradGuard no_grad;
  const StallDeadline stall = measure::hard_budget_deadline(timing);
  auto start = Clock::now();
  model::run_forward(l.model.module, inputs, l.model.path);
  l.profile.first_inference_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void fill_latency(ModelProfile& p, measure::LatencySamples s, int64_t batch) {
  p.samples_ms = std::move(s.ms);
  p.warmup_samples_ms = std::move(s.warmup_ms);
  p.page_faults_per_call = s.page_faults_per_call;
  p.latency_ms = stats::summarize(p.samples_ms);
  p.throughput = p.latency_ms.mean > 0 ? 1000.0 * double(batch) / p.latency_ms.mean : 0;
}

// Feeds one new input shape (batch + 1) a few times after the timed run: the first call shows whether
// the executor re-specializes, which in production shows up as a spike on every new batch size.
void check_shape_change(Loaded& l, const std::vector<torch::Tensor>& inputs, int64_t batch) {
  if (inputs.empty() || inputs[0].dim() == 0) return;
  ShapeChangeCheck c;
  int64_t new_batch = batch + 1;
  std::vector<torch::Tensor> changed;
  for (const auto& t : inputs) {
    if (t.dim() == 0) return;
    changed.push_back(model::fit_batch(t, new_batch));
  }
  c.new_shape = changed[0].sizes().vec();
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> args(changed.begin(), changed.end());
  for (int i = 0; i < 3; ++i) {
    auto start = Clock::now();
    try {
      l.model.module.forward(args);
    } catch (const std::exception&) {
      return;  // the model only accepts its fixed shape: nothing to diagnose
    }
    c.first_calls_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  c.expected_ms = l.profile.latency_ms.p50 * double(new_batch) / double(batch);
  l.profile.shape_change = c;
}

void profile_ops(Loaded& l, const std::vector<torch::Tensor>& inputs, const ProfileOptions& o, bool write_trace,
                 Progress& progress) {
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  ProgressPhase phase(progress, "per-op profile", static_cast<uint64_t>(o.op_iterations));
  OpRecorder recorder(write_trace);
  auto start = Clock::now();
  for (int i = 0; i < o.op_iterations; ++i) {
    l.model.module.forward(args);
    phase.advance();
  }
  double forward_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count() / o.op_iterations;
  l.profile.ops = recorder.summarize(o.op_iterations, forward_ms, o.top);
  if (write_trace) recorder.write_chrome_trace(o.chrome_trace);
}

// The inputs every measurement uses: --input specs or files, else shaped from the eval data or the model.
std::vector<torch::Tensor> profiled_inputs(const ProfileOptions& o, Loaded& first, const model::Dataset* eval,
                                           ProfileResult& r) {
  model::InputOptions in;
  in.specs = o.inputs;
  for (const auto& f : o.input_files) in.files.push_back(f);
  in.batch = o.batch.value_or(0);
  in.seed = o.seed;
  std::string inferred;
  auto inputs = model::resolve_inputs(first.model, in, eval, &inferred);
  if (!inferred.empty()) r.notes.push_back(inferred);
  r.inputs_guessed = !inferred.empty();
  r.inputs = model::describe_inputs(inputs);
  r.batch = inputs.empty() || inputs[0].dim() == 0 ? 1 : inputs[0].size(0);
  return inputs;
}

// Times one model, or two interleaved; returns the note on how the measurement budget shortened the timing.
std::string time_models(std::vector<Loaded>& loaded, const std::vector<torch::Tensor>& inputs, ProfileResult& r,
                        Progress& progress) {
  if (loaded.size() == 1) {
    auto samples = measure::time_forward(loaded[0].model.module, inputs, r.timing, loaded[0].model.path, progress);
    std::string note = samples.note;
    fill_latency(loaded[0].profile, std::move(samples), r.batch);
    return note;
  }
  auto [sa, sb] = measure::time_interleaved(loaded[0].model.module, loaded[0].model.path, loaded[1].model.module,
                                   loaded[1].model.path, inputs, r.timing, progress);
  std::string note = sa.note;
  fill_latency(loaded[0].profile, std::move(sa), r.batch);
  fill_latency(loaded[1].profile, std::move(sb), r.batch);
  return note;
}

// measure::Accuracy (with labels) and, for two models, their agreement, on the same data: the eval set when given, else
// seeded random inputs; a model with several inputs and no eval set is compared on the profiled inputs themselves.
void judge_outputs(std::vector<Loaded>& loaded, const std::vector<torch::Tensor>& inputs, const ProfileOptions& o,
                   const std::optional<model::Dataset>& eval, ProfileResult& r, Progress& progress) {
  std::vector<torch::Tensor> outputs;
  model::Dataset agreement_data;
  const bool on_profiled_inputs = !eval && inputs.size() > 1;
  if (eval) {
    agreement_data = *eval;
  } else if (loaded.size() == 2 && inputs.size() == 1) {
    // 256 samples shaped like the input, in batches of the profiled batch size.
    auto spec = r.inputs[0];
    spec.shape[0] = 256;
    agreement_data.x = model::random_input(spec, o.seed + 1000);
  }
  if (eval || loaded.size() == 2) {
    for (auto& l : loaded) {
      torch::Tensor out = on_profiled_inputs ? measure::forward_float(l.model.module, inputs, l.model.path)
                                             : measure::predict(l.model.module, agreement_data, eval ? o.eval_batch : r.batch,
                                                       l.model.path, progress);
      if (eval && eval->has_labels()) l.profile.accuracy = measure::top1_accuracy(out, *eval->y);
      outputs.push_back(out);
    }
  }
  if (loaded.size() != 2) return;
  Comparison c;
  c.speedup = stats::bootstrap_median_ratio(loaded[0].profile.samples_ms, loaded[1].profile.samples_ms);
  c.implausible = measure::implausible_speedup(c.speedup.estimate);
  if (c.implausible) r.findings.push_back(measure::implausible_speedup_finding(c.speedup.estimate, "B against A"));
  c.agreement = measure::compare_outputs(outputs[0], outputs[1]);
  c.agreement_data = eval                 ? o.eval->string() + " (" + std::to_string(eval->size()) + " samples)"
                     : on_profiled_inputs ? "the profiled inputs (" + std::to_string(r.batch) + " samples)"
                                          : "256 seeded random samples shaped like the input";
  r.comparison = c;
}

// The findings on each model's latency and on the host (load, BLAS), and the budget's note.
void diagnose(const std::vector<Loaded>& loaded, const std::string& budget_note, ProfileResult& r) {
  for (size_t i = 0; i < loaded.size(); ++i) {
    std::string label = loaded.size() == 2 ? (i == 0 ? "A" : "B") : "";
    auto f = diagnose_latency(loaded[i].profile, label);
    r.findings.insert(r.findings.end(), f.begin(), f.end());
  }
  HostLoad host;
  host.cores = r.load.cores;
  host.intra_op_threads = r.load.intra_op_threads;
  host.other_running_threads = r.load.other_runnable_threads;
  host.load_source = r.load.source;
  host.blas_library = mapped_blas_library();
  auto hf = diagnose_host(host);
  r.findings.insert(r.findings.begin(), hf.begin(), hf.end());
  if (!budget_note.empty())
    r.findings.push_back({"info", "latency " + budget_note, fmt::format("{} s per measurement", r.timing.budget_s),
                          "raise {budget_s} for more samples (or give {iterations})"});
}

}  // namespace

ProfileResult run(const ProfileOptions& o, Progress& progress) {
  validate(o);
  set_intra_op_threads(o.timing.threads);
  select_quantized_engine(o.qengine);

  ProfileResult r;
  r.timing = timing_of(o);
  r.environment = host_environment();
  add_torch_environment(r.environment);
  r.threads = r.environment.intra_op_threads;
  measure::LoadWatch load_watch(r.threads, r.environment.logical_cores);

  std::vector<Loaded> loaded;
  reset_peak_rss();
  loaded.push_back(load_one(o.models[0], progress));
  // Read after the model: a file with several inputs binds to its forward's arguments.
  std::optional<model::Dataset> eval;
  if (o.eval) eval = model::load_model_data(loaded[0].model.module, *o.eval, o.labels);
  if (is_decoder_run(o, loaded[0].model.module)) {
    run_decoder(o, loaded[0].model, loaded[0].profile, r, progress);
    r.load = load_watch.result();
    loaded[0].profile.peak_rss_bytes = peak_rss_bytes();
    diagnose(loaded, "", r);
    r.models.push_back(std::move(loaded[0].profile));
    return r;
  }
  const auto inputs = profiled_inputs(o, loaded[0], eval ? &*eval : nullptr, r);
  first_inference(loaded[0], inputs, r.timing);
  if (o.models.size() == 2) {
    loaded.push_back(load_one(o.models[1], progress));
    first_inference(loaded[1], inputs, r.timing);
  }

  const std::string budget_note = time_models(loaded, inputs, r, progress);
  r.load = load_watch.result();

  for (size_t i = 0; i < loaded.size(); ++i) {
    auto& l = loaded[i];
    l.profile.facts = model::measure_facts(l.model, inputs);
    check_shape_change(l, inputs, r.batch);
    if (o.ops) profile_ops(l, inputs, o, !o.chrome_trace.empty() && i == 0, progress);
    for (double qps : o.qps) l.profile.load.push_back(run_load(l.model.module, inputs, qps, o.requests, o.seed, progress));
  }
  // The peak covers the whole run (loading, timing, per-op profile, load test). With two models it is
  // one process's figure for both: it cannot be split between A and B. Read once: a second read could
  // already include memory allocated after the first.
  const auto peak = peak_rss_bytes();
  for (auto& l : loaded) l.profile.peak_rss_bytes = peak;

  judge_outputs(loaded, inputs, o, eval, r, progress);
  diagnose(loaded, budget_note, r);
  for (auto& l : loaded) r.models.push_back(std::move(l.profile));
  return r;
}

}  // namespace lite::profile
