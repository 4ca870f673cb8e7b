#pragma once
// Data-parallel training, the DDP way, over c10d's Gloo process group (rendezvous.hpp). Every rank holds
// the whole student; per step, rank r trains on its contiguous slice of the global batch (the epoch's
// seeded permutation is the same on every rank, so each epoch's slices form a disjoint shard per rank, and
// the global batch is exactly the one a single process would take). Then:
//   - parameters and buffers are broadcast from rank 0 before the first step (and after a resume);
//   - gradients, each weighted by its slice's share of the global batch, are copied into ~bucket_mb flat
//     buckets (parameters in reverse order) by hooks on the parameters as backward produces them; a full
//     bucket's all-reduce starts at once, overlapping the rest of backward (as DDP does), buckets in the same
//     order on every rank; after backward the rest start and all are waited for, so every rank steps with
//     the global batch's gradient and the weights stay identical (Gloo hands every rank the same sum);
//   - the teacher's logits of the training data and each validation are split into one contiguous shard per
//     rank: logits are all-gathered, validation counts summed;
//   - the loss and an "interrupted" flag ride along, so NaN stops and Ctrl-C stops happen after the same
//     step on every rank;
//   - batch norm normalises each rank's slice with its own batch statistics; at each epoch's end the
//     running statistics are averaged over ranks, so validation, checkpoints and the artifact see the same
//     buffers everywhere;
//   - dropout draws from a generator reseeded per (seed, rank, step), so no RNG state needs to travel in a
//     checkpoint and a resumed run repeats the same masks.
// Collective failures (a rank died, a timeout) become RankLost naming this rank and the peer (exit 1).
#include <memory>

#include "lite/distill/distill.hpp"
#include "lite/distill/gradient_sync.hpp"
#include "lite/distill/world.hpp"

namespace lite::distill {

class DataParallel : public GradientSync {
 public:
  // After training, on the final weights: each rank posts its figures through the store; rank 0 returns
  // every rank's (waiting up to the timeout), the others their own.
  virtual DistributedSummary summarize(torch::jit::Module& student, double train_seconds) = 0;
  // This rank cannot start (its inputs failed, `why` is its error line's message): tells the others, which
  // then end with exit 2 naming this rank and its host.
  virtual void refuse(const std::string& why) = 0;
};

// Rendezvous (exit-2 errors) and the trainer's hooks; a null pointer for a one-process world.
std::unique_ptr<DataParallel> join_world(const World& world, const DistillOptions& o);

}  // namespace lite::distill
