#pragma once
// lite distill's options: what to train (teacher, student, data), how (epochs, batch, optimizer, schedule,
// loss weights) and where results go (checkpoints, artifact). Torch-free, so the CLI binds its flags onto
// these fields without torch headers, and recipes and --json reports share the same keys.
//
// Defaults are member initializers; from_json reads keys through OptionReader (unknown keys and wrong types
// name the key); validate() checks values and throws OptionError keyed by the option (never a CLI flag).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace lite::distill {

struct DistillOptions {
  std::filesystem::path teacher;  // TorchScript teacher (frozen: eval mode, no gradients)
  std::filesystem::path student;  // TorchScript student, trained from its current weights
  std::filesystem::path data;     // training data: torch.save tensor or {"x","y"} dict, .npy, idx
  // Labels of an idx data file (a dict's "y" is read from it). Key "labels" until this release: it is read, with a
  // warning, until the next one, when "labels" labels eval as in every other verb.
  std::optional<std::filesystem::path> data_labels;
  std::optional<std::filesystem::path> eval;         // validation data; unset: validate on the training data
  std::optional<std::filesystem::path> eval_labels;  // labels of an idx eval file
  int64_t samples = 0;         // train on the first N samples of data (0: all)
  int64_t eval_samples = 0;    // validate on the first N samples of eval (0: all)
  int epochs = 3;
  int64_t train_batch = 64;    // the global training batch; key "batch" until this release (read, with a warning)
  int64_t eval_batch = 256;    // batch of the no-grad passes (teacher logits, validation)
  double lr = 1e-3;
  std::string optimizer = "adam";  // a name of the optimizer table (optimizers.hpp)
  double momentum = 0.9;           // SGD only
  double weight_decay = 0;
  double warmup_fraction = 0.05;   // share of all steps spent warming the learning rate up from 0
  double temperature = 4.0;
  double alpha = 0.9;              // weight of the distillation term; 1 when the data has no labels
  uint64_t seed = 1;               // shuffling, dropout, everything random
  int threads = 0;                 // intra-op threads; 0 = libtorch's default
  int64_t teacher_cache_mb = 1024; // cache the teacher's logits of the whole data set up to this size
  std::filesystem::path checkpoint_dir;         // a checkpoint per epoch (and on Ctrl-C) when set
  std::optional<std::filesystem::path> resume;  // checkpoint to continue from
  std::filesystem::path output;                 // empty: STUDENT.distilled.pt beside the student
  int latency_iterations = 50;     // timed forwards per model at batch 1 (0: latency not measured)

  // Prune, then recover: instead of `student`, the teacher structurally pruned at this ratio (lite prune's
  // dependency graph, criterion and surgery, in memory), then distilled from the unpruned teacher.
  std::optional<double> student_from_prune;
  std::string prune_criterion = "l1";  // a name of lite prune's criterion table
  // Training data whose samples take more memory than this is streamed in chunks instead of loaded whole
  // (.npy and uncompressed idx; other formats are always loaded whole). 0: half of MemAvailable.
  int64_t data_memory_mb = 0;

  // Data parallelism (distributed.hpp, world.hpp). Unset fields fall back to torchrun's environment
  // variables (WORLD_SIZE, RANK, MASTER_ADDR, MASTER_PORT), then to one process.
  int world_size = 0;              // processes in the job; 0: WORLD_SIZE, else 1
  int rank = -1;                   // this process's rank in [0, world_size); -1: RANK, else 0
  std::string master;              // ADDR:PORT where rank 0 hosts the rendezvous; "": MASTER_ADDR:MASTER_PORT
  double timeout_s = 300;          // rendezvous and every collective; a lost rank ends the job after this
  int launch_local = 0;            // > 0: start this many local worker processes (apps/lite/launch_local.cpp)
  double bucket_mb = 1;            // gradients are all-reduced in flat buckets of about this size
};

void to_json(nlohmann::json& j, const DistillOptions& o);
void from_json(const nlohmann::json& j, DistillOptions& o);

// Throws OptionError(key, problem, fix) for the first value that cannot work.
void validate(const DistillOptions& o);

}  // namespace lite::distill
