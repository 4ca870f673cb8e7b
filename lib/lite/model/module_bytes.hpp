#pragma once
// A TorchScript module as the bytes its file would hold, and back: what a consumer of the artifact gets, and
// a fresh copy whose method graphs a pass may edit without touching the original (prune's surgery, quantize's
// passes and timed copies).
#include <torch/script.h>

#include <string>

namespace lite::model {

// Saves `module` to memory, as torch::jit::Module::save would write it to a file.
std::string serialize(const torch::jit::Module& module);
// Loads a module from serialize()'s bytes, in eval mode.
torch::jit::Module deserialize(const std::string& bytes);

}  // namespace lite::model
