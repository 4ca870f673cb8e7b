#pragma once
// Training checkpoints: everything a run needs to continue bit for bit where it stopped. One file
// (torch::serialize archive, written atomically) holds the student's parameters and buffers, the
// optimizer's state, the position (epoch and step within it), the global RNG state (dropout), the best
// epoch's weights and metric, the epochs' records, and a fingerprint of the options and inputs that
// decide the result; a checkpoint whose fingerprint differs from the current run's is refused.
// Shuffling needs no saved state: each epoch's order is drawn from its own generator seeded by
// (seed, epoch).
#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/distill/distill.hpp"

namespace lite::distill {

struct TrainState {
  int next_epoch = 0;        // 0-based epoch to run next
  int64_t next_step = 0;     // steps of next_epoch already done (a Ctrl-C checkpoint stops mid-epoch)
  int64_t global_step = 0;   // optimizer steps so far (the schedule's position)
  double epoch_loss_sum = 0; // loss summed over the done steps of next_epoch
  int best_epoch = 0;        // 0: the initial weights
  double best_metric = -1;
  std::vector<torch::Tensor> best_weights;  // in named_state order
  std::vector<EpochRecord> history;
};

// Parameters then buffers of `module` and its submodules, by dotted name.
std::vector<std::pair<std::string, torch::Tensor>> named_state(const torch::jit::Module& module);
std::vector<torch::Tensor> copy_state(const torch::jit::Module& module);
void restore_state(torch::jit::Module& module, const std::vector<torch::Tensor>& weights);

void save_checkpoint(const std::filesystem::path& path, const torch::jit::Module& student,
                     const torch::optim::Optimizer& optimizer, const TrainState& state,
                     const nlohmann::json& fingerprint);

// Restores student weights, optimizer state, RNG state and `state`. Throws InputError naming `path` for
// an unreadable file or a fingerprint (options, inputs, architecture) that differs from `fingerprint`.
void load_checkpoint(const std::filesystem::path& path, torch::jit::Module& student, torch::optim::Optimizer& optimizer,
                     TrainState& state, const nlohmann::json& fingerprint);

}  // namespace lite::distill
