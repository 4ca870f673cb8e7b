#pragma once
// An input shape for a model that declares none, read from the first layer that consumes each input.
// See infer_inputs.cpp for the rules and why they are what they are.
#include <torch/script.h>

#include <optional>
#include <string>
#include <vector>

#include "lite/model/input_spec.hpp"

namespace lite::model {

struct InferredInputs {
  std::vector<InputSpec> specs;      // one per forward argument, batch 1
  std::vector<std::string> reasons;  // per input: "conv1 (Conv2d, 3 input channels)"
  std::vector<int> spatial_dims;     // per input: 1-3 when its sizes after the channels are a convention, else 0
};

// Conv1d/2d/3d with C input channels -> 1xCx1024, 1xCx224x224, 1xCx16x112x112; Linear with F inputs -> 1xF;
// Embedding -> int64 1x128; LSTM/GRU/RNN with F inputs -> 1x32xF (32x1xF when not batch first). nullopt when any input reaches no such layer (the caller then asks for {inputs}).
std::optional<InferredInputs> infer_inputs(const torch::jit::Module& module);

// The report note: "the model declares no input shape; using 1x3x224x224, inferred from conv1 (Conv2d with 3
// input channels); pass {inputs} SHAPE to override".
std::string inferred_inputs_note(const InferredInputs& inferred);

}  // namespace lite::model
