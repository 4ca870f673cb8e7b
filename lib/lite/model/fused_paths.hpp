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
#include <vector>

namespace lite::model {

// Every `if` of `block` and its sub-blocks, outer ones first (the order a copy of the graph repeats).
std::vector<torch::jit::Node*> ifs_in(torch::jit::Block* block);

// Makes `condition` the constant `value` in every use, not only the `if`'s: constant propagation often reuses
// a condition as an early return's flag, read again after the `if`. The constant goes at the graph's top,
// where it dominates every use.
void set_condition(torch::jit::Graph& graph, torch::jit::Value* condition, bool value);

// The fused ops of nn.TransformerEncoderLayer and nn.MultiheadAttention.
const std::set<std::string>& transformer_fused_ops();

// Every `if` of `graph` with one branch holding one of `fused_ops` (directly) is made to take the other
// (set_condition), then the graph is folded. Returns how many were decided.
int take_unfused_branches(std::shared_ptr<torch::jit::Graph>& graph, const std::set<std::string>& fused_ops);

// take_unfused_branches on every method graph of every module type of `module` (edit a clone: instances of a
// type share its graphs). Returns how many `if`s were decided.
int prefer_unfused_paths(torch::jit::Module& module, const std::set<std::string>& fused_ops);

}  // namespace lite::model
