// Training checkpoints (see checkpoint.hpp). Tensors travel as lists in a torch::serialize archive
// (their names and shapes in the JSON "meta" entry, checked on load); the optimizer writes its own
// nested archive; the file is written through write_atomically, so a crash leaves the previous one.
#include "lite/distill/checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/model/tensor_bounds.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/model/zip_directory.hpp"

namespace fs = std::filesystem;

namespace lite::distill {

std::vector<std::pair<std::string, torch::Tensor>> named_state(const torch::jit::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> out;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) out.emplace_back(p.name, p.value);
  for (const auto& b : module.named_buffers(/*recurse=*/true)) out.emplace_back(b.name, b.value);
  return out;
}

std::vector<torch::Tensor> copy_state(const torch::jit::Module& module) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> out;
  for (const auto& [name, t] : named_state(module)) out.push_back(t.detach().clone());
  return out;
}

void restore_state(torch::jit::Module& module, const std::vector<torch::Tensor>& weights) {
  torch::NoGradGuard no_grad;
  auto state = named_state(module);
  if (state.size() != weights.size())
    throw InternalError("restore_state: " + std::to_string(weights.size()) + " tensors for " +
                        std::to_string(state.size()));
  for (size_t i = 0; i < state.size(); ++i) state[i].second.copy_(weights[i]);
}

namespace {

nlohmann::json describe_state(const torch::jit::Module& module) {
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [name, t] : named_state(module)) names.push_back({name, t.sizes().vec()});
  return names;
}

c10::List<torch::Tensor> as_list(const std::vector<torch::Tensor>& v) {
  c10::List<torch::Tensor> list;
  for (const auto& t : v) list.push_back(t);
  return list;
}

std::vector<torch::Tensor> from_list(const c10::IValue& v) {
  std::vector<torch::Tensor> out;
  for (const auto& t : v.toTensorList()) out.push_back(t);
  return out;
}

at::Generator& default_generator() {
  static at::Generator gen = at::detail::getDefaultCPUGenerator();
  return gen;
}

// The first key of `expected` whose value differs in `actual`, as "key (checkpoint: X, now: Y)".
std::string first_difference(const nlohmann::json& actual, const nlohmann::json& expected) {
  for (auto it = expected.begin(); it != expected.end(); ++it) {
    auto found = actual.find(it.key());
    if (found == actual.end()) return it.key() + " (missing in the checkpoint)";
    if (*found != *it) {
      std::string a = found->dump(), b = it->dump();
      if (a.size() > 60) a = a.substr(0, 57) + "...";
      if (b.size() > 60) b = b.substr(0, 57) + "...";
      return it.key() + " (checkpoint: " + a + ", now: " + b + ")";
    }
  }
  return {};
}

// The training state's counters and history in the checkpoint's meta record, read and written through one field
// list (beside the record's format, fingerprint and state description).
template <class Fields, class S>
Fields& train_state_fields(Fields& f, S& s) {
  return f.field("next_epoch", s.next_epoch)
      .field("next_step", s.next_step)
      .field("global_step", s.global_step)
      .field("epoch_loss_sum", s.epoch_loss_sum)
      .field("best_epoch", s.best_epoch)
      .field("best_metric", s.best_metric)
      .field("history", s.history);
}

}  // namespace

void save_checkpoint(const fs::path& path, const torch::jit::Module& student, const torch::optim::Optimizer& optimizer,
                     const TrainState& state, const nlohmann::json& fingerprint) {
  nlohmann::json meta;
  OptionWriter writer(meta);
  train_state_fields(writer, state);
  meta["format"] = "lite-distill-checkpoint/1";
  meta["fingerprint"] = fingerprint;
  meta["state"] = describe_state(student);
  torch::serialize::OutputArchive archive;
  archive.write("meta", c10::IValue(meta.dump()));
  archive.write("weights", c10::IValue(as_list(copy_state(student))));
  archive.write("best_weights", c10::IValue(as_list(state.best_weights)));
  {
    std::lock_guard<std::mutex> lock(default_generator().mutex());
    archive.write("rng", default_generator().get_state());
  }
  torch::serialize::OutputArchive optimizer_archive;
  optimizer.save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  write_atomically(path, [&](const fs::path& temp) {
    try {
      archive.save_to(temp.string());
    } catch (const c10::Error& e) {
      throw InputError(path.string(), "cannot write the checkpoint: " + first_line(e.what_without_backtrace()),
                       "check free disk space and permissions of the checkpoint folder");
    }
  });
}

void load_checkpoint(const fs::path& path, torch::jit::Module& student, torch::optim::Optimizer& optimizer,
                     TrainState& state, const nlohmann::json& fingerprint) {
  const std::string file = path.string();
  const std::string fix = "pass a CHECKPOINT_DIR/last.ckpt written by lite distill";
  // A checkpoint is a TorchScript archive: its record sizes are checked before libtorch allocates them.
  std::error_code ec;
  const auto file_bytes = fs::file_size(path, ec);
  if (!ec) model::check_declared_sizes(model::zip_directory(file), file_bytes, file, fix);
  torch::serialize::InputArchive archive;
  nlohmann::json meta;
  try {
    archive.load_from(file);
    c10::IValue meta_text;
    archive.read("meta", meta_text);
    meta = parse_json_input(meta_text.toStringRef(), file, "pass a CHECKPOINT_DIR/last.ckpt written by lite distill");
  } catch (const std::exception& e) {
    throw InputError(file, "not a lite distill checkpoint (" + model::torch_error_reason(e) + ")",
                     "pass a CHECKPOINT_DIR/last.ckpt written by lite distill");
  }
  if (meta.value("format", "") != "lite-distill-checkpoint/1")
    throw InputError(file, "not a lite distill checkpoint", "pass a CHECKPOINT_DIR/last.ckpt written by lite distill");
  if (meta["state"] != describe_state(student))
    throw InputError(file, "holds weights of another architecture than the student",
                     "resume with the student the checkpoint was trained from");
  std::string diff = first_difference(meta["fingerprint"], fingerprint);
  if (!diff.empty())
    throw InputError(file, "was written by a run with other settings: " + diff,
                     "resume with the same options and files, or start afresh without resume");
  c10::IValue weights, best;
  torch::Tensor rng;
  torch::serialize::InputArchive optimizer_archive;
  archive.read("weights", weights);
  archive.read("best_weights", best);
  archive.read("rng", rng);
  archive.read("optimizer", optimizer_archive);
  for (const c10::IValue* value : {&weights, &best})  // backed by what was read, before anything copies them
    model::for_each_tensor(*value, [&](const at::Tensor& t) { model::check_tensor_backed(t, model::allocated_bytes(t), file, fix); });
  model::check_tensor_backed(rng, model::allocated_bytes(rng), file, fix);
  restore_state(student, from_list(weights));
  optimizer.load(optimizer_archive);
  {
    std::lock_guard<std::mutex> lock(default_generator().mutex());
    default_generator().set_state(rng);
  }
  try {
    OptionReader reader(meta);
    train_state_fields(reader, state);  // the format, fingerprint and state description were checked above
  } catch (const OptionError& e) {
    throw InputError(file, "has a damaged training state: " + e.problem() + " (" + e.key() + ")", fix);
  }
  state.best_weights = from_list(best);
}

}  // namespace lite::distill
