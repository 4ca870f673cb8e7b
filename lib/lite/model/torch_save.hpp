#pragma once
// Reading what Python's torch.save wrote (zip format), including the forms libtorch 1.13's own
// torch::pickle_load rejects. See torch_save.cpp.
#include <torch/script.h>

#include <string>
#include <vector>

namespace lite::model {

// The object a torch.save file holds: a tensor, a dict, a list, a tuple, ... Throws InputError naming
// `file` when the archive or its pickle cannot be read.
c10::IValue read_torch_save(const std::vector<char>& bytes, const std::string& file);

}  // namespace lite::model
