#pragma once
// Checks a guessed input shape with cheap forwards before anything is measured. infer_inputs gives a convolution's
// input the conventional size (224x224, 1024 samples); a model whose flatten feeds a Linear runs at one size only
// (3136 = 64x7x7 features -> 28x28). The size is solved from the feature count the Linear reports, else taken from
// a short list of common sizes; every probe runs on a copy of the module, so profile's cold first-inference figure
// stays cold.
#include <torch/script.h>

#include "lite/model/infer_inputs.hpp"

namespace lite::model {

// Replaces the conventional sizes of `inferred`'s convolution inputs by sizes the model runs at, and says so in
// their reasons. Inputs that already run, or for which no size is found, are left as they are (the first forward
// then names the shape and asks for {inputs}).
void fit_inferred_sizes(const torch::jit::Module& module, InferredInputs& inferred);

}  // namespace lite::model
