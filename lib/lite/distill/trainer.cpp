// The training loop of lite distill (see trainer.hpp). State advances only after a complete optimizer
// step, so a Ctrl-C (polled before each step and inside validation) always finds a state that a
// checkpoint can hold and a resumed run can continue from bit for bit.
#include "lite/core/clock.hpp"
#include "lite/distill/trainer.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/measure/evaluate.hpp"
#include "lite/model/inputs.hpp"

namespace fs = std::filesystem;

namespace lite::distill {

namespace {



// Each epoch's order comes from its own generator, seeded by (seed, epoch): no shuffling state to save.
// Streamed data is shuffled chunk-major, so that an epoch reads each chunk once.
torch::Tensor epoch_order(const Session& s, int epoch, int64_t n) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(s.o.seed * 1000003ULL + uint64_t(epoch) + 1);
  if (s.stream) return model::chunk_major_order(n, s.stream->chunk_samples(), gen);
  return torch::randperm(n, gen, torch::TensorOptions().dtype(torch::kInt64));
}

struct StepLoop {
  Session& s;
  torch::optim::Optimizer& optimizer;
  const CosineSchedule& schedule;
  TrainState& state;
  TrainOutcome& outcome;
  TrainingProgress* training_progress;
};

// One optimizer step on the samples order[begin, begin + len). Returns the loss (not finite: no step).
double train_step(StepLoop& l, const torch::Tensor& order, int64_t begin, int64_t len) {
  Session& s = l.s;
  const BatchSlice part = s.sync->begin_step(l.state.global_step, begin, len);  // this rank's share
  auto idx = order.narrow(0, part.begin, part.length);
  auto x = s.stream ? s.stream->gather(idx) : s.train.x.index_select(0, idx);
  torch::Tensor target = s.cached_teacher ? s.cached_teacher->index_select(0, idx) : teacher_logits(s, x);
  std::optional<torch::Tensor> labels;
  if (s.train_labels) labels = s.train_labels->index_select(0, idx);
  const double lr = l.schedule.lr_at(l.state.global_step);
  for (auto& group : l.optimizer.param_groups()) group.options().set_lr(lr);
  auto output = model::primary_output(s.student.module.forward({x}), s.student.path);
  auto loss = distillation_loss(output, target, labels, s.weights);
  l.optimizer.zero_grad();
  loss.backward();
  const double value = s.sync->after_backward(s.student.module, loss.item<double>());  // the global batch's
  if (!std::isfinite(value)) return value;
  l.optimizer.step();
  return value;
}

fs::path checkpoint_path(const Session& s) { return s.o.checkpoint_dir / "last.ckpt"; }

void write_checkpoint(StepLoop& l) {
  if (!l.s.sync->writes_files()) return;  // rank 0 writes; every rank can resume from it
  fs::path dir = l.s.o.checkpoint_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(dir.string(), "cannot create the checkpoint folder: " + ec.message(), "pass another folder");
  save_checkpoint(checkpoint_path(l.s), l.s.student.module, l.optimizer, l.state, l.s.fingerprint);
  if (l.outcome.checkpoints.empty() || l.outcome.checkpoints.back() != checkpoint_path(l.s).string())
    l.outcome.checkpoints.push_back(checkpoint_path(l.s).string());
}

// The steps of one epoch from state.next_step on. Returns false when the loss stopped being finite.
bool run_epoch_steps(StepLoop& l, int epoch, int64_t steps, EpochRecord& record) {
  Session& s = l.s;
  const int64_t n = train_size(s), batch = s.o.train_batch;
  const auto order = epoch_order(s, epoch, n);
  ProgressPhase phase(s.progress, fmt::format("epoch {}/{}", epoch + 1, s.o.epochs), uint64_t(steps));
  phase.advance(uint64_t(l.state.next_step));
  double seconds = 0;
  int64_t samples = 0;
  s.student.module.train();
  const int64_t first_step = l.state.next_step;
  for (int64_t step = first_step; step < steps; ++step) {
    s.sync->throw_if_interrupted();
    const int64_t begin = step * batch, len = std::min(batch, n - begin);
    const auto t0 = Clock::now();
    const double loss = train_step(l, order, begin, step == steps - 1 ? n - begin : len);
    seconds += seconds_since(t0);
    if (!std::isfinite(loss)) {
      l.outcome.stopped = fmt::format("the loss became {} at epoch {}, step {}",
                                      std::isnan(loss) ? "NaN" : loss > 0 ? "+inf" : "-inf", epoch + 1, step + 1);
      return false;
    }
    samples += step == steps - 1 ? n - begin : len;
    l.state.global_step += 1;
    l.state.next_step = step + 1;
    l.state.epoch_loss_sum += loss;
    phase.advance();
    if (l.training_progress) {
      const double per_step = seconds / double(step + 1 - first_step);
      const int64_t left = (steps - step - 1) + int64_t(s.o.epochs - epoch - 1) * steps;
      l.training_progress->step({epoch + 1, s.o.epochs, step + 1, steps, l.state.epoch_loss_sum / double(step + 1),
                                 seconds > 0 ? double(samples) / seconds : 0, l.schedule.lr_at(l.state.global_step - 1),
                                 per_step * double(left)});
    }
  }
  l.outcome.seconds += seconds;
  l.outcome.samples += samples;
  record.seconds = seconds;
  record.samples_per_s = seconds > 0 ? double(samples) / seconds : 0;
  return true;
}

// Validation, best-epoch bookkeeping and the epoch's checkpoint.
void finish_epoch(StepLoop& l, int epoch, int64_t steps, EpochRecord& record) {
  Session& s = l.s;
  record.epoch = epoch + 1;
  record.train_loss = l.state.epoch_loss_sum / double(steps);
  record.lr_end = l.schedule.lr_at(l.state.global_step - 1);
  s.sync->end_epoch(s.student.module);
  record.metric = validation_metric(s, s.student.module);
  s.student.module.train();
  if (record.metric > l.state.best_metric) {
    record.best = true;
    l.state.best_metric = record.metric;
    l.state.best_epoch = epoch + 1;
    l.state.best_weights = copy_state(s.student.module);
  }
  l.state.history.push_back(record);
  l.state.next_epoch = epoch + 1;
  l.state.next_step = 0;
  l.state.epoch_loss_sum = 0;
  if (!s.o.checkpoint_dir.empty()) write_checkpoint(l);
  if (l.training_progress) l.training_progress->epoch_done(record, s.o.epochs);
}

}  // namespace

int64_t steps_per_epoch(int64_t samples, int64_t batch, int64_t min_last) {
  int64_t steps = (samples + batch - 1) / batch;
  if (steps > 1 && samples % batch != 0 && samples % batch < min_last) --steps;
  return std::max<int64_t>(1, steps);
}

int64_t train_size(const Session& s) { return s.stream ? s.stream->size() : s.train.size(); }

torch::Tensor teacher_logits(Session& s, const torch::Tensor& x) {
  return measure::forward_float(s.teacher.module, {x}, s.teacher.path);
}

model::Dataset rows_of(const model::Dataset& d, BatchSlice part) {
  model::Dataset rows;
  rows.x = d.x.narrow(0, part.begin, part.length);
  if (d.y) rows.y = d.y->narrow(0, part.begin, part.length);
  rows.source = d.source;
  return rows;
}

double validation_metric(Session& s, torch::jit::Module& student) {
  student.eval();
  const int64_t n = s.validation.size();
  const BatchSlice part = s.sync->shard(n);
  double hits = 0;  // this shard's correct (or teacher-agreeing) samples
  if (part.length > 0) {
    const model::Dataset mine = rows_of(s.validation, part);
    auto out = measure::predict(student, mine, s.o.eval_batch, s.student.path, no_progress());
    hits = mine.y ? double(measure::top1_accuracy(out, *mine.y).correct)
                  : measure::compare_outputs(s.teacher_validation, out).top1_agreement * double(part.length);
  }
  return 100.0 * s.sync->sum({hits})[0] / double(n);
}

double teacher_validation_metric(Session& s) {
  const int64_t n = s.validation.size();
  const BatchSlice part = s.sync->shard(n);
  double hits = 0;
  if (part.length > 0) {
    const model::Dataset mine = rows_of(s.validation, part);
    s.teacher_validation = measure::predict(s.teacher.module, mine, s.o.eval_batch, s.teacher.path, s.progress);
    if (mine.y) hits = double(measure::top1_accuracy(s.teacher_validation, *mine.y).correct);
  }
  const double total = s.sync->sum({hits})[0];  // every rank takes part, labels or not
  return s.validation.has_labels() ? 100.0 * total / double(n) : 100.0;
}

TrainOutcome train(Session& s, torch::optim::Optimizer& optimizer, const CosineSchedule& schedule, TrainState state) {
  TrainOutcome outcome;
  StepLoop l{s, optimizer, schedule, state, outcome, dynamic_cast<TrainingProgress*>(&s.progress)};
  const int64_t steps = steps_per_epoch(train_size(s), s.o.train_batch, 2 * s.sync->world_size());
  try {
    for (int epoch = state.next_epoch; epoch < s.o.epochs; ++epoch) {
      EpochRecord record;
      if (!run_epoch_steps(l, epoch, steps, record)) break;
      finish_epoch(l, epoch, steps, record);
    }
  } catch (const Interrupted&) {
    if (s.o.checkpoint_dir.empty()) throw;
    // the interrupt flag stays set: a second Ctrl-C while saving ends the process at once
    write_checkpoint(l);
    throw CheckpointSaved(checkpoint_path(s).string());
  }
  outcome.state = std::move(state);
  return outcome;
}

}  // namespace lite::distill
