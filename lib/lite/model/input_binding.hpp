#pragma once
// Data for a model whose forward takes several inputs (a siamese encoder's (a, b), a decoder's (tgt, memory), a
// recommender's (dense, sparse)): a dict or .npz holds one tensor per input under the names of forward's
// arguments, a tuple or list holds them in forward's order with the labels, if any, after them. dataset.cpp
// reads the file and asks here how its entries bind; the verbs call load_model_data with the model.
#include <torch/script.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lite/model/dataset.hpp"

namespace lite::model {

using NamedEntries = std::vector<std::pair<std::string, c10::IValue>>;

// The names of the module's forward arguments, self left out, and how many lead without a default.
ForwardArguments forward_arguments(const torch::jit::Module& module);

// load_dataset with the module's forward arguments: a file with several inputs binds to them.
Dataset load_model_data(const torch::jit::Module& module, const std::filesystem::path& path,
                        const std::optional<std::filesystem::path>& labels = {});

// "a, b": the argument names, for messages.
std::string argument_list(const ForwardArguments& forward);

// A dict or .npz of a model with several inputs binds by name when one of its keys names an argument.
bool binds_by_name(const NamedEntries& entries, const ForwardArguments& forward);

// The inputs under forward's argument names, in forward's order (x, then more_inputs). Every argument without a
// default must be there, and none left out before one given. Throws InputError naming the file, the keys it holds
// and the arguments expected; or the key whose first dimension differs from the first input's.
Dataset bind_named_inputs(const std::filesystem::path& path, const NamedEntries& entries, const std::string& container,
                          const ForwardArguments& forward);

// A tuple or list binds by position when the model cannot run on fewer than two inputs.
bool binds_by_position(const ForwardArguments& forward);

// Tensors in forward's order, the labels last when there is one tensor more than arguments. Throws InputError
// naming the file and the arguments expected when the count fits neither.
Dataset bind_positional_inputs(const std::filesystem::path& path, const std::vector<c10::IValue>& items,
                               const ForwardArguments& forward);

// Throws InputError when `d` holds fewer inputs than forward's arguments without a default (one tensor for a
// two-input model), naming the file and the arguments expected.
void require_all_inputs(const Dataset& d, const ForwardArguments& forward);

}  // namespace lite::model
