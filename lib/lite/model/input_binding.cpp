#include "lite/model/input_binding.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {

std::string quoted_keys_of(const NamedEntries& entries) {
  std::vector<std::string> keys;
  for (const auto& e : entries) keys.push_back("'" + e.first + "'");
  return join(keys, ", ");
}

// The two forms a file with several inputs takes, spelled for the model at hand.
std::string binding_fix(const ForwardArguments& forward) {
  std::vector<std::string> dict;
  for (const auto& name : forward.names) dict.push_back("'" + name + "': ...");
  return "save {" + join(dict, ", ") + "} under forward's argument names, or a tuple (" + argument_list(forward) +
         ") in that order; labels under y, or last in the tuple";
}

// The tensors bound to forward's leading arguments, checked: each a tensor with a sample dimension, all with the
// first one's number of samples (a mismatch names both arguments).
Dataset bound_inputs(const fs::path& path, const NamedEntries& bound) {
  Dataset d;
  d.source = path;
  std::string first;
  for (const auto& [name, value] : bound) {
    if (!value.isTensor())
      throw InputError(path.string(), "input '" + name + "' is a " + value.tagKind() + ", not a tensor",
                       "store one torch.Tensor [N, ...] per input");
    const torch::Tensor t = value.toTensor();
    if (t.dim() == 0)
      throw InputError(path.string(), "input '" + name + "' is a scalar, not a batch of samples",
                       "store one tensor [N, ...] per input");
    if (!d.x.defined()) {
      d.x = t;
      first = name;
    } else if (t.size(0) != d.x.size(0)) {
      throw InputError(path.string(),
                       fmt::format("input '{}' holds {} samples but '{}' holds {}", name, t.size(0), first, d.x.size(0)),
                       "give every input the same number of samples (the first dimension)");
    } else {
      d.more_inputs.push_back(t);
    }
  }
  return d;
}

}  // namespace

ForwardArguments forward_arguments(const torch::jit::Module& module) {
  ForwardArguments forward;
  const auto method = module.find_method("forward");
  if (!method) return forward;
  const auto& args = method->function().getSchema().arguments();
  for (size_t i = 1; i < args.size(); ++i) {  // args[0] is self
    forward.names.push_back(args[i].name());
    if (!args[i].default_value() && forward.required == i - 1) ++forward.required;
  }
  return forward;
}

Dataset load_model_data(const torch::jit::Module& module, const fs::path& path, const std::optional<fs::path>& labels) {
  return load_dataset(path, labels, forward_arguments(module));
}

std::string argument_list(const ForwardArguments& forward) { return join(forward.names, ", "); }

bool binds_by_name(const NamedEntries& entries, const ForwardArguments& forward) {
  if (forward.names.size() < 2) return false;
  return std::any_of(entries.begin(), entries.end(), [&](const auto& e) {
    return std::find(forward.names.begin(), forward.names.end(), e.first) != forward.names.end();
  });
}

Dataset bind_named_inputs(const fs::path& path, const NamedEntries& entries, const std::string& container,
                          const ForwardArguments& forward) {
  NamedEntries bound;
  std::string left_out;  // the first argument not given: none after it may be
  for (size_t i = 0; i < forward.names.size(); ++i) {
    const std::string& name = forward.names[i];
    const auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; });
    if (it == entries.end() && i < forward.required)
      throw InputError(path.string(),
                       container + " has no input '" + name + "' (it holds " + quoted_keys_of(entries) +
                           "; the model's forward takes " + argument_list(forward) + ")",
                       binding_fix(forward));
    if (it == entries.end()) {
      if (left_out.empty()) left_out = name;
      continue;
    }
    // Inputs are passed by position: one given after a left-out argument would land in the wrong place.
    if (!left_out.empty())
      throw InputError(path.string(), container + " holds '" + name + "' but not '" + left_out + "' before it",
                       "give '" + left_out + "' too: the inputs bind to forward's arguments (" + argument_list(forward) +
                           ") in order");
    bound.push_back(*it);
  }
  return bound_inputs(path, bound);
}

bool binds_by_position(const ForwardArguments& forward) { return forward.required >= 2; }

Dataset bind_positional_inputs(const fs::path& path, const std::vector<c10::IValue>& items,
                               const ForwardArguments& forward) {
  const size_t count = items.size(), arguments = forward.names.size();
  if (count < forward.required || count > arguments + 1)
    throw InputError(path.string(),
                     fmt::format("holds a tuple or list of {} items; the model's forward takes {} inputs ({})", count,
                                 arguments, argument_list(forward)),
                     binding_fix(forward));
  const size_t inputs = std::min(count, arguments);  // one item more than arguments: the labels
  NamedEntries bound;
  for (size_t i = 0; i < inputs; ++i) bound.emplace_back(forward.names[i], items[i]);
  Dataset d = bound_inputs(path, bound);
  if (inputs < count) {
    if (!items.back().isTensor())
      throw InputError(path.string(), "the labels (the last item) are a " + items.back().tagKind() + ", not a tensor",
                       "store the labels as one int64 tensor [N]");
    d.y = items.back().toTensor();
  }
  return d;
}

void require_all_inputs(const Dataset& d, const ForwardArguments& forward) {
  const size_t held = 1 + d.more_inputs.size();
  if (held >= forward.required) return;
  throw InputError(d.source.string(),
                   fmt::format("holds {} input{} but the model's forward takes {} ({})", held, held == 1 ? "" : "s",
                               forward.required, argument_list(forward)),
                   binding_fix(forward));
}

}  // namespace lite::model
