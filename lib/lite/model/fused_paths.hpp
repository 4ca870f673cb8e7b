#pragma once
// Fused fast paths in PyTorch's transformer modules. nn.TransformerEncoderLayer.forward (and
// nn.MultiheadAttention.forward) choose at run time between a fused op (aten::_transformer_encoder_layer_fwd,
// aten::_native_multi_head_attention) and the unfused layers, on the input's rank, the grad mode and more.
// The fused op reads the weights as tensors, so graph passes that work on the layers (quantize's int8 Linear,
// prune's channel analysis) see nothing of the layer in it. Both branches compute the same function from the
// same weights: taking the unfused one is always correct, only the op choice changes.
#include <torch/script.h>

#include <memory>
#include <set>
#include <string>

namespace lite::model {

// The fused ops of nn.TransformerEncoderLayer and nn.MultiheadAttention.
const std::set<std::string>& transformer_fused_ops();

// Every `if` of `graph` with one branch holding one of `fused_ops` (directly) is made to take the other:
// every use of its condition (constant propagation often reuses it as an early return's flag) reads the
// constant, then the graph is folded. Returns how many were decided.
int take_unfused_branches(std::shared_ptr<torch::jit::Graph>& graph, const std::set<std::string>& fused_ops);

// take_unfused_branches on every method graph of every module type of `module` (edit a clone: instances of a
// type share its graphs). Returns how many `if`s were decided.
int prefer_unfused_paths(torch::jit::Module& module, const std::set<std::string>& fused_ops);

}  // namespace lite::model
