// DistillOptions to and from JSON, and the value rules (see options.hpp). Torch-free.
#include "lite/distill/options.hpp"

#include <fmt/format.h>

#include "lite/core/options.hpp"
#include "lite/core/registry.hpp"
#include "lite/distill/optimizers.hpp"
#include "lite/prune/prune.hpp"

namespace lite::distill {

// The one field list of DistillOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void distill_fields(Fields& f, O& o) {
  f.field("teacher", o.teacher)
      .field("student", o.student)
      .field("data", o.data)
      .field("data_labels", o.data_labels)
      .field("eval", o.eval)
      .field("eval_labels", o.eval_labels)
      .field("samples", o.samples)
      .field("eval_samples", o.eval_samples)
      .field("epochs", o.epochs)
      .field("train_batch", o.train_batch)
      .field("eval_batch", o.eval_batch)
      .field("lr", o.lr)
      .field("optimizer", o.optimizer)
      .field("momentum", o.momentum)
      .field("weight_decay", o.weight_decay)
      .field("warmup_fraction", o.warmup_fraction)
      .field("temperature", o.temperature)
      .field("alpha", o.alpha)
      .field("seed", o.seed)
      .field("threads", o.threads)
      .field("teacher_cache_mb", o.teacher_cache_mb)
      .field("checkpoint_dir", o.checkpoint_dir)
      .field("resume", o.resume)
      .field("output", o.output)
      .field("latency_iterations", o.latency_iterations)
      .field("student_from_prune", o.student_from_prune)
      .field("prune_criterion", o.prune_criterion)
      .field("data_memory_mb", o.data_memory_mb)
      .field("world_size", o.world_size)
      .field("rank", o.rank)
      .field("master", o.master)
      .field("timeout_s", o.timeout_s)
      .field("launch_local", o.launch_local)
      .field("bucket_mb", o.bucket_mb);
}

void to_json(nlohmann::json& j, const DistillOptions& o) {
  OptionWriter w(j);
  distill_fields(w, o);
}

void from_json(const nlohmann::json& j, DistillOptions& o) {
  OptionReader r(j);
  distill_fields(r, o);
  r.renamed("labels", "data_labels", o.data_labels).renamed("batch", "train_batch", o.train_batch);
  r.finish();
}

namespace {

void positive(const std::string& key, double value, const std::string& fix) {
  option_rules::finite(key, value);
  if (!(value > 0)) throw OptionError(key, fmt::format("must be greater than 0, got {}", value), fix);
}

// Exactly one student: a model file, or the teacher pruned at a ratio in (0, 1) by a known criterion.
void check_student(const DistillOptions& o) {
  if (!o.student_from_prune) {
    if (o.student.empty())
      throw OptionError("student", "is required",
                        "pass the TorchScript student model (its architecture and weights), or "
                        "{student_from_prune} R to prune the teacher into one");
    return;
  }
  if (!o.student.empty())
    throw OptionError("student_from_prune", "contradicts {student}: the student is either a file or the pruned teacher",
                      "give one of the two");
  const double r = *o.student_from_prune;
  option_rules::finite("student_from_prune", r);
  if (!(r > 0 && r < 1))
    throw OptionError("student_from_prune", fmt::format("must be between 0 and 1 (exclusive), got {}", r),
                      "the fraction of each channel group's channels to remove, e.g. 0.5");
  find_named(prune::criterion_infos(), o.prune_criterion, "prune_criterion", "criterion",
             [](const prune::CriterionInfo& c) { return std::vector<std::string>{c.name}; });
}

// The data-parallel fields (the world itself is resolved with the environment in world.cpp).
void validate_data_parallel(const DistillOptions& o) {
  option_rules::at_least("world_size", o.world_size, 0, "0 reads WORLD_SIZE, else runs one process");
  option_rules::at_least("rank", o.rank, -1, "ranks count from 0; -1 reads RANK");
  if (o.world_size > 0 && o.rank >= o.world_size)
    throw OptionError("rank", fmt::format("is {} but world_size is {}", o.rank, o.world_size),
                      fmt::format("give each process a rank from 0 to {}", o.world_size - 1));
  positive("timeout_s", o.timeout_s, "300 waits five minutes for a slow or lost rank");
  option_rules::at_most("timeout_s", o.timeout_s, 7 * 86400, "300 waits five minutes for a slow or lost rank");
  option_rules::in_range("launch_local", o.launch_local, 0, 64, "one worker per core group, e.g. 2");
  positive("bucket_mb", o.bucket_mb, "1 MB buckets suit most students");
  option_rules::at_most("bucket_mb", o.bucket_mb, 4096, "1 MB buckets suit most students");
  const int planned = o.launch_local > 0 ? o.launch_local : o.world_size;
  if (planned > 1 && o.train_batch < 2 * planned)
    throw OptionError("train_batch", fmt::format("gives {} ranks fewer than 2 samples each", planned),
                      fmt::format("raise {{train_batch}} to at least {} (the global batch is split over the ranks)",
                                  2 * planned));
  if (o.launch_local > 0 && (o.world_size > 0 || o.rank >= 0 || !o.master.empty()))
    throw OptionError("launch_local", "starts its own workers, so world_size, rank and master must be unset",
                      "drop {world_size}, {rank} and {master}, or {launch_local}");
}

}  // namespace

void validate(const DistillOptions& o) {
  if (o.teacher.empty()) throw OptionError("teacher", "is required", "pass the TorchScript teacher model");
  check_student(o);
  if (o.data.empty()) throw OptionError("data", "is required", "pass the training data (torch.save file, .npy or idx)");
  if (o.eval_labels && !o.eval)
    throw OptionError("eval_labels", "gives the labels of eval, which is not set", "pass eval too");
  option_rules::at_least("samples", double(o.samples), 0, "0 trains on every sample");
  option_rules::at_least("eval_samples", double(o.eval_samples), 0, "0 validates on every sample");
  option_rules::at_least("epochs", o.epochs, 1);
  // A batch is one tensor dimension: --input's bound (2^31). Past int64, CLI11 reads the largest int64, which lands
  // here too.
  option_rules::in_range("train_batch", double(o.train_batch), 1, double(1LL << 31), "e.g. 64");
  option_rules::in_range("eval_batch", double(o.eval_batch), 1, double(1LL << 31), "e.g. 64");
  positive("lr", o.lr, "try 1e-3 for adam, 0.05 for sgd");
  // Past float32's range (3.4e38) the step itself is inf (an lr of 1e300 ended in an internal error); a merely
  // too-large lr diverges to a NaN loss, which the finite_loss gate reports (the unit test uses 1e30).
  option_rules::at_most("lr", o.lr, 1e30, "try 1e-3 for adam, 0.05 for sgd");
  find_optimizer(o.optimizer);
  option_rules::in_range("momentum", o.momentum, 0, 0.999, "0.9 is the usual value");
  option_rules::in_range("weight_decay", o.weight_decay, 0, 1, "1e-4 to 1e-2 are usual");
  option_rules::in_range("warmup_fraction", o.warmup_fraction, 0, 1, "0.05 warms up over the first 5% of steps");
  positive("temperature", o.temperature, "1 keeps the logits as they are; 2-8 softens them");
  option_rules::at_most("temperature", o.temperature, 1000, "1 keeps the logits as they are; 2-8 softens them");
  option_rules::in_range("alpha", o.alpha, 0, 1, "alpha weighs the teacher term, 1 - alpha the labels");
  option_rules::thread_count("threads", o.threads);
  option_rules::at_least("teacher_cache_mb", double(o.teacher_cache_mb), 0, "0 recomputes teacher logits every step");
  option_rules::at_least("latency_iterations", o.latency_iterations, 0, "0 skips the latency measurement");
  option_rules::at_least("data_memory_mb", double(o.data_memory_mb), 0, "0 allows half of the available memory");
  validate_data_parallel(o);
}

}  // namespace lite::distill
