#pragma once
// What data parallelism asks of the training loop, as one interface the trainer calls at fixed points:
// before a step (this rank's slice of the global batch, the agreed interrupt), after backward (gradients
// and loss of the global batch), at the end of an epoch (batch-norm statistics), and whether this process
// writes files; and the no-grad work each rank does a part of instead of the whole (the teacher's logits
// of the training data, validation): shard, gather, sum. The default implementation is the null object of a one-process run, so trainer.cpp has no
// branches on the world size; DataParallel (distributed.hpp) implements it over c10d's Gloo process group.
#include <torch/script.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/interrupt.hpp"

namespace lite::distill {

struct BatchSlice {
  int64_t begin = 0;
  int64_t length = 0;
};

class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual int world_size() const { return 1; }
  // Rank 0 writes checkpoints, the artifact and the report; the other ranks only train.
  virtual bool writes_files() const { return true; }
  // Before any other collective: refuses a run whose fingerprint (options and inputs) differs from rank 0's.
  virtual void agree(const nlohmann::json& fingerprint) {}
  // Before training (after a resume): every rank takes rank 0's weights and buffers.
  virtual void start(torch::jit::Module& student) {}
  // This rank's contiguous part of `n` rows (rank r: [n r / W, n (r + 1) / W)).
  virtual BatchSlice shard(int64_t n) const { return {0, n}; }
  // Every rank's `part` (the rows of its shard(n)), concatenated in rank order: the whole [n, ...] tensor.
  virtual torch::Tensor gather_shards(const torch::Tensor& part, int64_t n) { return part; }
  // The element-wise sums of `values` over the ranks (e.g. counts of a sharded validation).
  virtual std::vector<double> sum(std::vector<double> values) { return values; }
  // Polled before each step. One process: the local Ctrl-C. Several: the interrupt every rank agreed on at
  // the last all-reduce, so all ranks stop after the same step.
  virtual void throw_if_interrupted() { lite::throw_if_interrupted(); }
  // This rank's part of the global batch order[begin, begin + length) of step `global_step`.
  virtual BatchSlice begin_step(int64_t global_step, int64_t begin, int64_t length) { return {begin, length}; }
  // After backward: the student's gradients become those of the whole global batch; returns its loss.
  virtual double after_backward(torch::jit::Module& student, double local_loss) { return local_loss; }
  // Before validation: buffers (batch-norm running statistics) made equal on every rank.
  virtual void end_epoch(torch::jit::Module& student) {}
};

// The null object: one process.
GradientSync& single_process();

}  // namespace lite::distill
