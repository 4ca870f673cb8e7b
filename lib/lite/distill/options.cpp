// DistillOptions to and from JSON, and the value rules (see options.hpp). Torch-free.
#include "lite/distill/options.hpp"

#include <fmt/format.h>

#include "lite/core/options.hpp"
#include "lite/distill/optimizers.hpp"

namespace lite::distill {

void to_json(nlohmann::json& j, const DistillOptions& o) {
  j = nlohmann::json{{"teacher", o.teacher},
                     {"student", o.student},
                     {"data", o.data},
                     {"labels", o.labels},
                     {"eval", o.eval},
                     {"eval_labels", o.eval_labels},
                     {"samples", o.samples},
                     {"eval_samples", o.eval_samples},
                     {"epochs", o.epochs},
                     {"batch", o.batch},
                     {"eval_batch", o.eval_batch},
                     {"lr", o.lr},
                     {"optimizer", o.optimizer},
                     {"momentum", o.momentum},
                     {"weight_decay", o.weight_decay},
                     {"warmup_fraction", o.warmup_fraction},
                     {"temperature", o.temperature},
                     {"alpha", o.alpha},
                     {"seed", o.seed},
                     {"threads", o.threads},
                     {"teacher_cache_mb", o.teacher_cache_mb},
                     {"checkpoint_dir", o.checkpoint_dir},
                     {"resume", o.resume},
                     {"output", o.output},
                     {"latency_iterations", o.latency_iterations}};
}

void from_json(const nlohmann::json& j, DistillOptions& o) {
  OptionReader r(j);
  r.read("teacher", o.teacher)
      .read("student", o.student)
      .read("data", o.data)
      .read("labels", o.labels)
      .read("eval", o.eval)
      .read("eval_labels", o.eval_labels)
      .read("samples", o.samples)
      .read("eval_samples", o.eval_samples)
      .read("epochs", o.epochs)
      .read("batch", o.batch)
      .read("eval_batch", o.eval_batch)
      .read("lr", o.lr)
      .read("optimizer", o.optimizer)
      .read("momentum", o.momentum)
      .read("weight_decay", o.weight_decay)
      .read("warmup_fraction", o.warmup_fraction)
      .read("temperature", o.temperature)
      .read("alpha", o.alpha)
      .read("seed", o.seed)
      .read("threads", o.threads)
      .read("teacher_cache_mb", o.teacher_cache_mb)
      .read("checkpoint_dir", o.checkpoint_dir)
      .read("resume", o.resume)
      .read("output", o.output)
      .read("latency_iterations", o.latency_iterations);
  r.finish();
}

namespace {

void positive(const std::string& key, double value, const std::string& fix) {
  option_rules::finite(key, value);
  if (!(value > 0)) throw OptionError(key, fmt::format("must be greater than 0, got {}", value), fix);
}

}  // namespace

void validate(const DistillOptions& o) {
  option_rules::not_empty("teacher", o.teacher, "pass the TorchScript teacher model");
  option_rules::not_empty("student", o.student, "pass the TorchScript student model (its architecture and weights)");
  option_rules::not_empty("data", o.data, "pass the training data (torch.save file, .npy or idx)");
  if (!o.eval_labels.empty() && o.eval.empty())
    throw OptionError("eval_labels", "gives the labels of eval, which is not set", "pass eval too");
  option_rules::at_least("samples", double(o.samples), 0, "0 trains on every sample");
  option_rules::at_least("eval_samples", double(o.eval_samples), 0, "0 validates on every sample");
  option_rules::at_least("epochs", o.epochs, 1);
  option_rules::at_least("batch", double(o.batch), 1);
  option_rules::at_least("eval_batch", double(o.eval_batch), 1);
  positive("lr", o.lr, "try 1e-3 for adam, 0.05 for sgd");
  find_optimizer(o.optimizer);
  option_rules::in_range("momentum", o.momentum, 0, 0.999, "0.9 is the usual value");
  option_rules::at_least("weight_decay", o.weight_decay, 0);
  option_rules::in_range("warmup_fraction", o.warmup_fraction, 0, 1, "0.05 warms up over the first 5% of steps");
  positive("temperature", o.temperature, "1 keeps the logits as they are; 2-8 softens them");
  option_rules::in_range("alpha", o.alpha, 0, 1, "alpha weighs the teacher term, 1 - alpha the labels");
  option_rules::thread_count("threads", o.threads);
  option_rules::at_least("teacher_cache_mb", double(o.teacher_cache_mb), 0, "0 recomputes teacher logits every step");
  option_rules::at_least("latency_iterations", o.latency_iterations, 0, "0 skips the latency measurement");
}

}  // namespace lite::distill
