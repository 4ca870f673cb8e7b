#pragma once
// lite distill: the library verb. Trains a TorchScript student to imitate a TorchScript teacher
// (knowledge distillation, Hinton et al. 2015) and writes the best epoch's student as a lite artifact.
// Torch-free: the CLI fills DistillOptions, calls validate() and run(), and prints to_report(result).
// run() never prints and never exits: bad input is an InputError/OptionError before anything is written,
// Ctrl-C is Interrupted (CheckpointSaved when a checkpoint folder was given), and a failed gate (a loss
// that became NaN) is named in result.gates with the best epoch's artifact still written.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/error.hpp"
#include "lite/core/gates.hpp"
#include "lite/core/progress.hpp"
#include "lite/core/report.hpp"
#include "lite/core/run_context.hpp"
#include "lite/distill/options.hpp"

namespace lite::distill {

// What a training step or epoch reports. A Progress that is also a TrainingProgress receives these (the
// CLI draws epoch, step, loss, samples/s and ETA from them); any other Progress sees phases only.
struct StepStatus {
  int epoch = 0;  // 1-based
  int epochs = 0;
  int64_t step = 0;  // 1-based within the epoch
  int64_t steps = 0;
  double loss = 0;          // running mean over the epoch so far
  double samples_per_s = 0; // training samples per second over the epoch so far
  double lr = 0;
  double eta_s = 0;          // training steps left (this and later epochs) at the current step rate
};

struct EpochRecord {
  int epoch = 0;
  double train_loss = 0;       // mean loss over the epoch's steps
  double metric = 0;           // validation accuracy or teacher agreement, percent
  double lr_end = 0;           // rate of the last step
  double samples_per_s = 0;    // training throughput of the epoch (forward, backward, step)
  double seconds = 0;
  bool best = false;
};

class TrainingProgress : public Progress {
 public:
  virtual void step(const StepStatus& status) = 0;
  virtual void epoch_done(const EpochRecord& record, int epochs) = 0;
};

// Ctrl-C after a checkpoint was saved: exit 130 like any interrupt, and the path to --resume from.
struct CheckpointSaved : Interrupted {
  explicit CheckpointSaved(std::string path)
      : Interrupted("checkpoint saved to " + path + "; continue with --resume " + path), checkpoint(std::move(path)) {}
  std::string checkpoint;
};

// A rank was lost during training (its process died, or a collective timed out): exit 1, the last
// checkpoint kept. The message names this rank, the peer and the cause.
struct RankLost : Error {
  explicit RankLost(const std::string& message) : Error(ErrorKind::run_failed, message) {}
};

// One rank's figures of a data-parallel run (distributed.cpp gathers them on rank 0).
struct RankFigures {
  int rank = 0;
  std::string host;
  int64_t samples = 0;          // trained on by this rank (its slices of the global batches)
  double train_s = 0;           // in training steps, all-reduce included
  double allreduce_s = 0;       // in gradient all-reduces, waiting for slower ranks included
  double samples_per_s = 0;     // samples / train_s
  double allreduce_share = 0;   // allreduce_s / train_s
  std::string weights_sha256;   // of the final parameters and buffers: equal on every rank
};

struct DistributedSummary {
  int world_size = 1;
  int rank = 0;                 // of the process that made this summary
  std::string master;           // ADDR:PORT of the rendezvous
  std::string source;           // where the world came from (options, torchrun's environment)
  std::string backend = "gloo";
  int buckets = 0;              // flat gradient buckets all-reduced per step
  int64_t allreduce_bytes_per_step = 0;  // gradient bytes each rank contributes per step
  std::vector<RankFigures> ranks;        // every rank on rank 0, only its own elsewhere
  double samples_per_s = 0;     // global: all ranks' samples / the slowest rank's train_s
  double allreduce_share = 0;   // mean over ranks
  // samples_per_s / (world_size x mean compute-only rate), compute-only = samples / (train_s - allreduce_s):
  // the share of perfect scaling that communication left (docs/distill.md "Data parallel").
  double scaling_efficiency = 0;
  bool weights_identical = true;
  std::string batchnorm;        // how batch-norm statistics are kept
};

struct ModelSummary {
  std::string path;
  std::string sha256;
  uint64_t file_bytes = 0;
  uint64_t parameters = 0;
  uint64_t macs = 0;               // per sample
  double metric = 0;               // on the validation data, percent
  std::optional<double> latency_ms;  // median forward at batch 1
};

// Prune, then recover: what lite prune's surgery removed from the teacher to make the student, and what
// distillation won back.
struct PruneStage {
  double ratio = 0;
  std::string criterion;
  int64_t groups = 0, groups_pruned = 0;            // channel dependency groups found / pruned
  int64_t channels_before = 0, channels_after = 0;  // over the pruned groups
  uint64_t parameters_before = 0, parameters_after = 0;
  uint64_t macs_before = 0, macs_after = 0;         // per sample
  double metric_teacher = 0;    // percent, on the validation data
  double metric_pruned = 0;     // the pruned teacher before recovery
  double metric_recovered = 0;  // after distillation (the best epoch)
};

struct DistillResult {
  std::string metric;          // "top-1 accuracy" or "top-1 agreement with the teacher"
  std::string validation_data; // the file validated on
  int64_t train_samples = 0, validation_samples = 0;
  bool labels = false;         // cross-entropy term used
  double alpha = 1;            // as used (1 without labels)
  std::string teacher_logits;  // "cached" or "recomputed every step"
  std::string teacher_logits_reason;
  ModelSummary teacher, student_before, student;
  std::vector<EpochRecord> epochs;
  int best_epoch = 0;          // 0: the initial weights stayed best
  double best_metric = 0;
  int start_epoch = 1;         // > 1 when resumed
  std::string resumed_from;
  double train_samples_per_s = 0;  // over every training step of this run
  double train_seconds = 0;
  std::string output;
  std::vector<std::string> checkpoints;  // files written in checkpoint_dir
  std::string stopped;         // why training stopped early ("" when it ran every epoch)
  Gates gates;
  std::vector<std::string> notes;
  DistillOptions options;
  double wall_s = 0;
  std::optional<PruneStage> prune;  // set with student_from_prune
  std::string data_path;            // "loaded whole" or "streamed in chunks of N samples"
  std::string data_path_reason;
  int64_t data_chunk_samples = 0;   // 0 when loaded whole
  std::optional<DistributedSummary> distributed;  // set when the world has more than one process
};

void to_json(nlohmann::json& j, const StepStatus& s);
void to_json(nlohmann::json& j, const EpochRecord& e);
void from_json(const nlohmann::json& j, EpochRecord& e);  // OptionError naming a missing or mistyped key
void to_json(nlohmann::json& j, const ModelSummary& m);
void to_json(nlohmann::json& j, const PruneStage& p);
void to_json(nlohmann::json& j, const DistillResult& r);
void to_json(nlohmann::json& j, const RankFigures& f);
void from_json(const nlohmann::json& j, RankFigures& f);
void to_json(nlohmann::json& j, const DistributedSummary& d);

// `context`: how it was invoked, recorded in the artifact (lite/core/run_context.hpp).
DistillResult run(const DistillOptions& options, Progress& progress, const RunContext& context = {});

report::Report to_report(const DistillResult& result);

}  // namespace lite::distill
