// lite distill's run(): check every input before anything is written (paths, data shapes against both
// models, output shapes, labels), prepare the teacher's logits (cached when they fit the budget: lite has
// no augmentation, so every epoch sees the same inputs), train (trainer.cpp), keep the best epoch, write
// it as an artifact with provenance, then measure teacher and student alike (params, MACs, size,
// latency through the profile core, validation metric).
// The training data is loaded whole, or streamed in chunks when it exceeds the memory budget
// (model/chunked_dataset.hpp); the student is a model file, or the teacher pruned in memory
// (pruned_student.cpp: prune, then recover).
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <unistd.h>

#include <chrono>
#include <fmt/format.h>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"
#include "lite/core/stats.hpp"
#include "lite/distill/distill.hpp"
#include "lite/distill/distributed.hpp"
#include "lite/distill/optimizers.hpp"
#include "lite/distill/pruned_student.hpp"
#include "lite/distill/trainer.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/measure/timing.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/facts_torch.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/model/torch_errors.hpp"

namespace fs = std::filesystem;

namespace lite::distill {

namespace {

using Clock = std::chrono::steady_clock;

// The profiling executor builds differentiable graphs with TorchScript's own gradient formulas; training
// runs ~1.1-1.2x faster with it off (libtorch-notes.md). Restored before latency is measured, so the
// figures are what a deployment sees.
class ProfilingExecutorOff {
 public:
  ProfilingExecutorOff() : was_(torch::jit::getProfilingMode().exchange(false)) {}
  ~ProfilingExecutorOff() { torch::jit::getProfilingMode() = was_; }

 private:
  bool was_;
};

fs::path output_path(const DistillOptions& o) {
  if (!o.output.empty()) return o.output;
  return o.student_from_prune ? derive_output_path(o.teacher, "pruned-distilled") : derive_output_path(o.student, "distilled");
}

// The file rule (core/file_roles.hpp): the artifact and the checkpoint may overwrite no input and not each
// other. Resuming from the checkpoint it will rewrite (CHECKPOINT_DIR/last.ckpt) is what --resume is for.
void check_file_roles(const DistillOptions& o, const fs::path& out) {
  FileRoles roles;
  roles.reads("{teacher}", o.teacher).reads("{student}", o.student).reads("{data}", o.data);
  roles.reads_optional("{data_labels}", o.data_labels).reads_optional("{eval}", o.eval).reads_optional("{eval_labels}", o.eval_labels);
  roles.writes("output", out);
  std::error_code ec;
  if (fs::is_directory(o.checkpoint_dir, ec)) {  // a folder distill creates holds no input yet
    const fs::path checkpoint = o.checkpoint_dir / "last.ckpt";
    if (o.resume && !same_file(*o.resume, checkpoint)) roles.reads("{resume}", *o.resume);
    roles.writes("checkpoint_dir", checkpoint, "the checkpoint");
  } else if (o.resume) {
    roles.reads("{resume}", *o.resume);
  }
  roles.check();
}

void check_paths(const DistillOptions& o) {
  const fs::path out = output_path(o);
  check_file_roles(o, out);  // also that the output's folder exists and is writable
  std::error_code ec;
  if (!o.checkpoint_dir.empty()) {
    fs::path dir = o.checkpoint_dir;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw OptionError("checkpoint_dir", dir.string() + " is a file, not a folder", "pass a folder");
    fs::path above = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
    if (!fs::exists(dir, ec) && !fs::is_directory(above, ec))
      throw OptionError("checkpoint_dir", "the folder above " + dir.string() + " does not exist",
                        "create " + above.string() + " first");
  }
  if (o.resume && !fs::is_regular_file(*o.resume, ec))
    throw InputError(o.resume->string(), "no such checkpoint file", "pass CHECKPOINT_DIR/last.ckpt of an earlier run");
}

model::Dataset load_data(const fs::path& path, const std::optional<fs::path>& labels, int64_t samples) {
  return model::take_first(model::load_dataset(path, labels), samples);
}

uint64_t memory_budget(const DistillOptions& o) {
  return o.data_memory_mb > 0 ? uint64_t(o.data_memory_mb) << 20 : model::default_data_memory_budget();
}

std::string megabytes(uint64_t bytes) { return fmt::format("{:.1f} MB", double(bytes) / (1024.0 * 1024.0)); }

// The training data: loaded whole when it fits the memory budget (or its format cannot be read at an
// offset), else streamed in chunks of at most a quarter of the budget (64 MiB at most: the cache holds
// two), s.train then holding the first chunk. Either way every value is read once here: NaN check and the
// checksum a checkpoint records.
void load_training(Session& s, DistillResult& r) {
  const auto& o = s.o;
  const uint64_t budget = memory_budget(o);
  const std::string limit = o.data_memory_mb > 0 ? fmt::format("data_memory_mb {}", o.data_memory_mb)
                                                 : "half of MemAvailable, " + megabytes(budget);
  std::optional<model::InflatedCopy> inflated;  // a .gz over the budget streams from its inflated copy
  std::optional<model::RecordLayout> layout = model::streamed_gzip_layout(o.data, budget, inflated);
  if (!layout) layout = model::record_layout(o.data);
  if (layout) {
    const int64_t n = o.samples > 0 ? std::min(o.samples, layout->count) : layout->count;
    const uint64_t per_sample = std::max<uint64_t>(1, model::sample_bytes_in_memory(*layout));
    if (uint64_t(n) * per_sample > budget) {
      const uint64_t chunk_bytes = std::min<uint64_t>(budget / 4, uint64_t(64) << 20);
      const int64_t chunk = std::max<int64_t>(o.train_batch, int64_t(chunk_bytes / per_sample));
      s.stream.emplace(*layout, o.data_labels, o.samples, chunk);
      s.train_checksum = s.stream->scan(s.progress);
      s.train = s.stream->chunk(0);
      r.data_chunk_samples = s.stream->chunk_samples();
      r.data_path = fmt::format("streamed in chunks of {} samples", r.data_chunk_samples);
      r.data_path_reason = fmt::format("{} in memory exceeds {}; each epoch reads the chunks in a seeded order and "
                                       "shuffles within each", megabytes(uint64_t(n) * per_sample), limit);
      if (inflated) r.data_path_reason += "; the .gz was inflated once into a temporary file in TMPDIR to be read in chunks";
      return;
    }
  }
  s.train = load_data(o.data, o.data_labels, o.samples);
  s.train_checksum = s.train.x.sum().item<double>();
  const uint64_t bytes = uint64_t(s.train.x.nbytes());
  r.data_path = "loaded whole";
  r.data_path_reason = bytes <= budget ? fmt::format("{} fits {}", megabytes(bytes), limit)
                                       : fmt::format("{} exceeds {}, but only .npy and idx files (gzip-compressed or "
                                                     "not) can be read in chunks", megabytes(bytes), limit);
}

// Bytes the training data holds in memory: the whole set, or the two chunks of the stream's cache.
uint64_t data_bytes_in_memory(const Session& s) {
  const uint64_t first_chunk = uint64_t(s.train.x.nbytes());
  return s.stream ? 2 * first_chunk : first_chunk;
}

// Two samples through `m` in eval mode: data it rejects is reported against the data file.
torch::Tensor probe(model::LoadedModel& m, const model::Dataset& data, const char* role) {
  torch::NoGradGuard no_grad;
  m.module.eval();
  auto x = data.x.narrow(0, 0, std::min<int64_t>(2, data.size()));
  c10::IValue out;
  try {
    out = m.module.forward({x});
  } catch (const std::exception& e) {
    throw InputError(data.source.string(),
                     fmt::format("samples of shape {} do not fit the {} {}: {}", c10::str(data.x.sizes()), role,
                                 m.path.string(), model::torch_error_reason(e)),
                     "pass data shaped like the models' input");
  }
  return model::primary_output(out, m.path).to(torch::kFloat32);
}

void check_labels(const model::Dataset& d, int64_t classes, const std::optional<fs::path>& labels_file) {
  if (!d.y) return;
  const std::string file = (labels_file ? *labels_file : d.source).string();
  if (d.y->dim() != 1)
    throw InputError(file, "labels must be one class index per sample, got shape " + c10::str(d.y->sizes()),
                     "store a 1-D tensor of class indices");
  auto low = d.y->min().item<int64_t>(), high = d.y->max().item<int64_t>();
  if (low < 0 || high >= classes)
    throw InputError(file, fmt::format("labels range over [{}, {}] but the models output {} classes", low, high, classes),
                     "pass labels of the task the teacher was trained on");
}

// Teacher and student must produce logits of one shape ([N, C], or [N, C, ...]).
void check_models(Session& s) {
  auto t = probe(s.teacher, s.train, "teacher");
  auto st = probe(s.student, s.train, "student");
  if (t.dim() < 2)
    throw InputError(s.teacher.path.string(), "returns shape " + c10::str(t.sizes()) + ", not logits [N, classes]",
                     "distill a classifier (or a model returning per-class scores)");
  s.teacher_values_per_sample = t.numel() / std::max<int64_t>(1, t.size(0));
  if (t.sizes() != st.sizes())
    throw InputError(s.student.path.string(),
                     fmt::format("outputs shape {} but the teacher outputs {} for the same input",
                                 c10::str(st.sizes()), c10::str(t.sizes())),
                     "give the student the teacher's output layer (same number of classes)");
  model::Dataset all_labels = s.train;
  if (s.stream) all_labels.y = s.stream->labels();
  check_labels(all_labels, t.size(1), s.o.data_labels);
  if (s.o.eval) {
    probe(s.teacher, s.validation, "teacher");
    check_labels(s.validation, t.size(1), s.o.eval_labels);
  }
  int64_t trainable = 0;
  for (const auto& p : s.student.module.parameters()) trainable += p.numel();
  if (trainable == 0)
    throw InputError(s.student.path.string(), "has no parameters to train", "pass a student with weights");
}

// The teacher's logits of every training sample: each rank computes its shard (chunk-sized reads when the
// data is streamed) and the ranks gather the whole.
torch::Tensor all_teacher_logits(Session& s) {
  const int64_t n = train_size(s);
  const BatchSlice part = s.sync->shard(n);
  if (!s.stream)
    return s.sync->gather_shards(measure::predict(s.teacher.module, rows_of(s.train, part), s.o.eval_batch,
                                                  s.teacher.path, s.progress), n);
  const int64_t step = s.stream->chunk_samples();
  ProgressPhase phase(s.progress, "teacher logits", uint64_t((part.length + step - 1) / step));
  std::vector<torch::Tensor> parts;
  for (int64_t begin = part.begin; begin < part.begin + part.length; begin += step) {
    model::Dataset piece;
    piece.x = s.stream->read(begin, std::min(step, part.begin + part.length - begin));
    piece.source = s.stream->source();
    parts.push_back(measure::predict(s.teacher.module, piece, s.o.eval_batch, s.teacher.path, no_progress()));
    phase.advance();
  }
  return s.sync->gather_shards(torch::cat(parts), n);
}

// Whether to cache the teacher's logits: when they fit both teacher_cache_mb and what the memory budget
// leaves beside the data. Decided before the ranks compare fingerprints; filled after (all_teacher_logits).
void decide_teacher_cache(Session& s, DistillResult& r) {
  const int64_t n = train_size(s);
  const uint64_t bytes = uint64_t(n) * uint64_t(s.teacher_values_per_sample) * 4;
  const double mb = double(bytes) / (1024.0 * 1024.0);
  const uint64_t budget = memory_budget(s.o), data = data_bytes_in_memory(s);
  const uint64_t left = budget > data ? budget - data : 0;
  s.cache_teacher = false;
  if (mb > double(s.o.teacher_cache_mb)) {
    r.teacher_logits = "recomputed every step";
    r.teacher_logits_reason = fmt::format("{:.1f} MB for {} samples exceeds teacher_cache_mb {}", mb, n, s.o.teacher_cache_mb);
  } else if (bytes > left) {
    r.teacher_logits = "recomputed every step";
    r.teacher_logits_reason = fmt::format("{:.1f} MB for {} samples exceeds the {} the memory budget leaves beside the "
                                          "data (raise data_memory_mb)", mb, n, megabytes(left));
  } else {
    s.cache_teacher = true;
    r.teacher_logits = "cached";
    r.teacher_logits_reason = fmt::format("{:.1f} MB for {} samples, within teacher_cache_mb {}; no augmentation, so "
                                          "every epoch reuses them", mb, n, s.o.teacher_cache_mb);
  }
}

nlohmann::json fingerprint(const Session& s) {
  const auto& o = s.o;
  std::vector<int64_t> train_shape = s.train.x.sizes().vec();
  train_shape[0] = train_size(s);
  // A pruned student is named by how it was made (its serialized bytes need not be stable across runs).
  const nlohmann::json student = o.student_from_prune
                                     ? nlohmann::json{{"pruned_ratio", *o.student_from_prune},
                                                      {"criterion", o.prune_criterion}}
                                     : nlohmann::json(s.student.sha256);
  // The keys are a file format, so checkpoints of earlier releases still resume ("batch" is train_batch's old key).
  return {{"teacher_sha256", s.teacher.sha256}, {"student_sha256", student},
          {"train_samples", train_size(s)},     {"train_shape", train_shape},
          {"train_checksum", s.train_checksum}, {"data_chunk_samples", s.stream ? s.stream->chunk_samples() : 0},
          {"epochs", o.epochs},                 {"batch", o.train_batch},
          {"lr", o.lr},                         {"optimizer", find_optimizer(o.optimizer).names.front()},
          {"momentum", o.momentum},             {"weight_decay", o.weight_decay},
          {"warmup_fraction", o.warmup_fraction}, {"temperature", o.temperature},
          {"alpha", s.weights.alpha},           {"seed", o.seed},
          {"teacher_cached", s.cache_teacher},
          {"eval_batch", o.eval_batch},         {"threads", o.threads},
          {"validation_samples", s.validation.size()},
          {"validation_checksum", s.validation.x.sum().item<double>()}};
}

ModelSummary summarize(model::LoadedModel& m, const torch::Tensor& sample, double metric) {
  ModelSummary sum;
  sum.path = m.path.string();
  sum.sha256 = m.sha256;
  sum.file_bytes = m.file_bytes;
  auto facts = model::measure_facts(m, {sample});
  sum.parameters = facts.parameters;
  sum.macs = facts.total_macs;
  sum.metric = metric;
  return sum;
}

void measure_latency(const DistillOptions& o, model::LoadedModel& teacher, model::LoadedModel& student,
                     const torch::Tensor& sample, DistillResult& r, Progress& progress) {
  if (o.latency_iterations <= 0) return;
  measure::TimingOptions timing;
  timing.warmup = 5;
  timing.iterations = o.latency_iterations;
  timing.min_iterations = 1;
  torch::jit::Module t = teacher.module.clone();  // fresh executors, with the profiling executor back on
  t.eval();
  auto [a, b] = measure::time_interleaved(t, teacher.path, student.module, student.path, {sample}, timing, progress);
  r.teacher.latency_ms = stats::summarize(a.ms).p50;
  r.student.latency_ms = stats::summarize(b.ms).p50;
}

void write_artifact(Session& s, const DistillResult& r, const fs::path& out) {
  model::ArtifactInfo info;
  info.transform = "distill";
  info.command_line = s.run_context.command_line;
  nlohmann::json hyper;
  to_json(hyper, s.o);
  info.details = {{"teacher", {{"path", s.teacher.path.string()}, {"sha256", s.teacher.sha256}}},
                  {"hyperparameters", hyper},
                  {"alpha_used", r.alpha},
                  {"epochs_run", r.epochs.size()},
                  {"best_epoch", r.best_epoch},
                  {"metric", r.metric},
                  {"best_metric_percent", r.best_metric},
                  {"teacher_logits", r.teacher_logits},
                  {"data", {{"path", r.data_path}, {"chunk_samples", r.data_chunk_samples}}}};
  if (r.prune) {
    info.details["student_from_prune"] = {{"ratio", r.prune->ratio}, {"criterion", r.prune->criterion},
                                          {"groups_pruned", r.prune->groups_pruned}, {"groups", r.prune->groups}};
  }
  info.figures = {{"teacher_metric_percent", r.teacher.metric},
                  {"student_before_percent", r.student_before.metric},
                  {"student_percent", r.best_metric}};  // throughput stays in the report: it varies run to run
  if (r.prune) info.figures["prune"] = *r.prune;
  info.inputs = model::describe_inputs({s.train.x.narrow(0, 0, 1)});
  s.student.module.eval();
  model::save_artifact(s.student.module, out, s.student, info);
}

// Optimizer, schedule, fresh or resumed state, the loop; the best epoch's weights end up in the student.
void train_student(Session& s, DistillResult& r) {
  const auto& o = s.o;
  std::vector<torch::Tensor> parameters;
  for (auto p : s.student.module.parameters()) {
    p.requires_grad_(true);  // saved in the file: a student scripted with frozen layers would not learn
    parameters.push_back(p);
  }
  auto optimizer = find_optimizer(o.optimizer).make(parameters, o);
  const int64_t steps = steps_per_epoch(train_size(s), o.train_batch, 2 * s.sync->world_size());
  const auto schedule = make_schedule(o.lr, steps * o.epochs, o.warmup_fraction);
  TrainState state;
  if (o.resume) {
    load_checkpoint(*o.resume, s.student.module, *optimizer, state, s.fingerprint);
    r.resumed_from = o.resume->string();
    r.start_epoch = state.next_epoch + 1;
  } else {
    torch::manual_seed(o.seed);
    state.best_metric = r.student_before.metric;
    state.best_weights = copy_state(s.student.module);
  }
  s.sync->start(s.student.module);  // rank 0's weights everywhere (data parallel)
  TrainOutcome outcome = train(s, *optimizer, schedule, std::move(state));
  r.epochs = outcome.state.history;
  r.best_epoch = outcome.state.best_epoch;
  r.best_metric = outcome.state.best_metric;
  r.train_seconds = outcome.seconds;
  r.train_samples_per_s = outcome.seconds > 0 ? double(outcome.samples) / outcome.seconds : 0;
  r.checkpoints = outcome.checkpoints;
  r.stopped = outcome.stopped;
  restore_state(s.student.module, outcome.state.best_weights);
}

// Training feeds the models one tensor per batch (the trainer's shuffled rows, the streamed chunks, the cached
// logits): a teacher whose forward needs several inputs is refused before any data is read.
void require_one_input(const model::LoadedModel& teacher) {
  const model::ForwardArguments forward = model::forward_arguments(teacher.module);
  if (forward.required < 2) return;
  throw InputError(teacher.path.string(),
                   fmt::format("its forward takes {} inputs ({}); lite distill trains models of one input",
                               forward.required, model::argument_list(forward)),
                   "distill a model with one input; lite quantize and lite prune read data with several inputs");
}

// The models and data of the run: teacher, training data, the student (given, or the pruned teacher), validation data,
// and what the report says of them (labels, metric, sizes).
void load_models_and_data(Session& s, DistillResult& r) {
  const DistillOptions& o = s.o;
  s.teacher = model::load_model(o.teacher);
  require_one_input(s.teacher);
  load_training(s, r);
  if (o.student_from_prune) {
    r.prune.emplace();
    s.student = prune_teacher(s.teacher, o, s.train, *r.prune);
  } else {
    s.student = model::load_model(o.student);
  }
  s.validation = o.eval ? load_data(*o.eval, o.eval_labels, o.eval_samples) : s.train;
  if (!o.eval)
    r.notes.push_back(s.stream ? fmt::format("validated on the first {} training samples (the training data is "
                                             "streamed): pass eval data for a held-out estimate", s.train.size())
                               : "validated on the training data: pass eval data for a held-out estimate");
  check_models(s);

  r.labels = s.train.has_labels() && o.alpha < 1.0;
  r.alpha = s.train.has_labels() ? o.alpha : 1.0;
  if (!s.train.has_labels())
    r.notes.push_back("the training data has no labels: the loss is the teacher term alone (alpha 1)");
  if (r.labels) s.train_labels = (s.stream ? *s.stream->labels() : *s.train.y).to(torch::kInt64);
  s.weights = {o.temperature, r.alpha};
  r.metric = s.validation.has_labels() ? "top-1 accuracy" : "top-1 agreement with the teacher";
  r.validation_data = s.validation.source.string();
  r.train_samples = train_size(s);
  r.validation_samples = s.validation.size();
}

// With --student-from-prune: the prune step's before/after figures, and the metric the recovery reached.
void record_prune_figures(DistillResult& r) {
  if (!r.prune) return;
  r.prune->parameters_before = r.teacher.parameters;
  r.prune->macs_before = r.teacher.macs;
  r.prune->parameters_after = r.student_before.parameters;
  r.prune->macs_after = r.student_before.macs;
  r.prune->metric_teacher = r.teacher.metric;
  r.prune->metric_pruned = r.student_before.metric;
  r.prune->metric_recovered = r.best_metric;
}

}  // namespace

DistillResult run(const DistillOptions& o, Progress& progress, const RunContext& context) {
  const auto start = Clock::now();
  validate(o);
  set_intra_op_threads(o.threads);
  const World world = resolve_world(o);
  if (world.distributed() && o.train_batch < 2 * world.size)
    throw OptionError("train_batch", fmt::format("gives {} ranks fewer than 2 samples each", world.size),
                      fmt::format("raise {{batch}} to at least {} (the global batch is split over the ranks)", 2 * world.size));
  std::unique_ptr<DataParallel> data_parallel = join_world(world, o);  // rendezvous first: a bad setup fails fast
  DistillResult r;
  r.options = o;
  Session s(o, progress, context);
  if (data_parallel) s.sync = data_parallel.get();
  std::optional<ProfilingExecutorOff> executor_off(std::in_place);  // before the models' first forward
  try {  // each rank reads its inputs on its own host: one that fails there tells the others (refuse)
    check_paths(o);
    load_models_and_data(s, r);
    decide_teacher_cache(s, r);
    s.fingerprint = fingerprint(s);
  } catch (const Error& e) {
    if (data_parallel) data_parallel->refuse(e.what());
    throw;
  }
  if (s.sync->world_size() > 1) s.fingerprint["world_size"] = s.sync->world_size();
  s.sync->agree(s.fingerprint);  // before the first collective: a rank with other options or inputs refuses
  const double teacher_metric = teacher_validation_metric(s);
  if (s.cache_teacher) s.cached_teacher = all_teacher_logits(s);
  const torch::Tensor sample = s.train.x.narrow(0, 0, 1);
  r.student_before = summarize(s.student, sample, validation_metric(s, s.student.module));
  train_student(s, r);
  if (!r.stopped.empty()) {
    r.gates.fail("finite_loss");
    r.notes.push_back("training stopped: " + r.stopped + "; the artifact holds the best epoch before it (" +
                      (r.best_epoch ? "epoch " + std::to_string(r.best_epoch) : std::string("the initial weights")) +
                      "); lower lr or temperature");
  }
  if (data_parallel) {
    r.distributed = data_parallel->summarize(s.student.module, r.train_seconds);
    if (!data_parallel->writes_files()) {  // ranks other than 0 only train
      r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
      return r;
    }
    if (!r.distributed->weights_identical)
      r.notes.push_back("the ranks' final weights differ (see weights_sha256): a bug in lite's data parallelism");
  }
  executor_off.reset();

  r.teacher = summarize(s.teacher, sample, teacher_metric);
  record_prune_figures(r);
  const fs::path out = output_path(o);
  write_artifact(s, r, out);
  r.output = out.string();
  auto written = model::load_model(out);
  r.student = summarize(written, sample, r.best_metric);
  measure_latency(o, s.teacher, written, sample, r, progress);
  r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace lite::distill
