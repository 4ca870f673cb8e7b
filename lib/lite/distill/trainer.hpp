#pragma once
// The training loop of lite distill, over a loaded teacher and student (torch side; distill.cpp prepares
// the Session and writes the result). Per epoch: a seeded permutation of the samples, batches of
// `batch`, teacher logits (cached or computed under no-grad), the distillation loss, backward, the
// optimizer step at the schedule's rate; then validation in eval mode, best-epoch bookkeeping and a
// checkpoint. The student is in train mode while it learns and in eval mode while it is judged.
#include <torch/script.h>
#include <torch/torch.h>

#include <optional>
#include <string>

#include "lite/core/progress.hpp"
#include "lite/distill/checkpoint.hpp"
#include "lite/distill/distill.hpp"
#include "lite/distill/gradient_sync.hpp"
#include "lite/distill/loss.hpp"
#include "lite/distill/schedule.hpp"
#include "lite/model/chunked_dataset.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/load.hpp"

namespace lite::distill {

struct Session {
  Session(const DistillOptions& options, Progress& p, const RunContext& r) : o(options), progress(p), run_context(r) {}
  const DistillOptions& o;
  Progress& progress;
  const RunContext& run_context;
  model::LoadedModel teacher, student;
  model::Dataset train, validation;
  std::optional<torch::Tensor> train_labels;       // used by the loss (absent: soft term only)
  std::optional<torch::Tensor> cached_teacher;     // teacher logits of every training sample
  bool cache_teacher = false;                      // decided before the fingerprint, filled after it
  int64_t teacher_values_per_sample = 0;           // numel of the teacher's output for one sample
  torch::Tensor teacher_validation;                // teacher logits of this rank's shard of the validation data
  LossWeights weights;
  nlohmann::json fingerprint;                      // what a checkpoint must match to be resumed
  // Training data larger than the memory budget, streamed in chunks (train then holds its first chunk,
  // for probes and shapes); epochs follow model::chunk_major_order.
  std::optional<model::ChunkedDataset> stream;
  double train_checksum = 0;                       // sum of every training input value
  GradientSync* sync = &single_process();          // data parallelism (gradient_sync.hpp); one process by default
};

// Samples in the training data, streamed or loaded whole.
int64_t train_size(const Session& s);

// Rows `part` of `d` (views).
model::Dataset rows_of(const model::Dataset& d, BatchSlice part);

// The student's metric on the validation data in eval mode (percent): top-1 accuracy with labels, top-1
// agreement with the teacher without. Each rank scores its shard (s.sync->shard) and the counts are summed,
// so the ranks split the work and agree on the result. Leaves the student in eval mode.
double validation_metric(Session& s, torch::jit::Module& student);

// Fills s.teacher_validation (this rank's shard) and returns the teacher's metric on the validation data
// (top-1 accuracy; 100 without labels), sharded like validation_metric.
double teacher_validation_metric(Session& s);

// Optimizer steps per epoch: ceil(samples / batch), except that a last batch of fewer than `min_last`
// samples joins the batch before it (batch norm cannot train on a single sample; with W ranks, min_last is
// 2W so that every rank's slice has two).
int64_t steps_per_epoch(int64_t samples, int64_t batch, int64_t min_last = 2);

// The teacher's logits for `x` under no-grad, as float32.
torch::Tensor teacher_logits(Session& s, const torch::Tensor& x);

struct TrainOutcome {
  TrainState state;
  std::string stopped;    // "" or why training stopped early (a NaN loss)
  double seconds = 0;     // in training steps (forward, backward, optimizer), this run only
  int64_t samples = 0;    // trained on in this run
  std::vector<std::string> checkpoints;
};

// Trains s.student.module from `state` (fresh or resumed) to the last epoch. Ctrl-C: saves a checkpoint
// when a checkpoint folder is set and throws CheckpointSaved, else throws Interrupted. A loss that is not
// finite stops training (outcome.stopped) with the best weights kept in the state.
TrainOutcome train(Session& s, torch::optim::Optimizer& optimizer, const CosineSchedule& schedule, TrainState state);

}  // namespace lite::distill
