#pragma once
// The torch side of lite prune, shared by its files and the torch unit tests. Not installed with the
// CLI's headers (prune.hpp is the public, torch-free one).
#include <torch/script.h>

#include <map>
#include <string>
#include <vector>

#include "lite/prune/prune.hpp"

namespace lite::prune {

// A range of one tensor attribute that follows a group's channels: along `dim`, channel c of the group
// occupies indices [(offset + c) * factor, (offset + c + 1) * factor). offset > 0 after a concatenation;
// factor > 1 where a flatten spreads each channel over its spatial positions before a linear layer.
// fold > 0 for a grouped convolution's input columns: channel c is column (offset + c) % fold of the rows of
// group c / fold (a removal takes the same columns from every block, see ChannelGroup::blocks).
struct TensorSlice {
  std::string module;  // module path, "" for the root
  std::string attr;    // attribute name ("weight", "bias", "running_mean", ...)
  int64_t dim = 0;
  int64_t offset = 0;
  int64_t factor = 1;
  int64_t fold = 0;
  std::string role;    // "producer" (output channels), "consumer" (input channels), "norm" (batchnorm,
                       // layer norm), "norm_scale" (batchnorm weight: what bn-scale ranks), "depthwise",
                       // "parameter" (a tensor attribute read as a value: class token, position embedding)
  std::string path() const { return module.empty() ? attr : module + "." + attr; }
};

// An int attribute that holds a group's channel count divided by `divisor` (ViT's hidden_dim, attention's
// embed_dim and head_dim): surgery sets it to the kept count / divisor.
struct CountAttribute {
  std::string module, name;
  int64_t divisor = 1;
};

struct ChannelGroup {
  std::string name;                 // first producing layer
  std::vector<std::string> layers;  // modules with a producer/norm/depthwise slice, in graph order
  int64_t channels = 0;
  std::vector<TensorSlice> slices;
  std::vector<std::string> depthwise;  // conv modules whose `groups` must follow the channel count
  std::vector<std::string> layer_norms;     // LayerNorm modules whose normalized_shape must follow it
  std::vector<CountAttribute> counts;       // int attributes that hold the channel count
  int64_t multiple_of = 1;                  // kept channels stay a multiple (attention's heads)
  // > 1 where the channels pass a grouped convolution with this many groups: they are that many equal
  // blocks, and a removal takes the same local indices from every block (the convolution's columns are shared).
  int64_t blocks = 1;
  std::string blocked;                 // why the group is unsafe to prune ("" when it is safe)
};

// Conv/linear weights read from attributes, for unstructured pruning (graph order, one per tensor).
struct WeightRef {
  std::string module, attr;
  std::string path() const { return module.empty() ? attr : module + "." + attr; }
};

struct DependencyGraph {
  std::vector<ChannelGroup> groups;  // every group with a producer, safe or not
  std::vector<WeightRef> weights;
};

// Builds the channel dependency groups of `module`'s forward: a copy of the graph, inlined (attention
// excepted), with bool, int and float attributes (training, use_res_connect) replaced by their values and
// folded, the `if`s that depend on the input decided by running `example` once (when given), then walked
// once in order with a union-find over channel spaces (see dependency_graph.cpp).
DependencyGraph build_dependency_graph(const torch::jit::Module& module, const std::vector<c10::IValue>& example = {});

// graph_prep.cpp: every call inlined except nn.MultiheadAttention's, Swin's ShiftedWindowAttention's and
// torchvision's FrozenBatchNorm2d's (the analysis states their contracts).
void inline_calls_except_whole_modules(torch::jit::Graph& graph);
bool is_attention_type(const c10::TypePtr& type);         // either kind
bool is_window_attention_type(const c10::TypePtr& type);  // torchvision's ShiftedWindowAttention (Swin v1)
bool is_frozen_batch_norm_type(const c10::TypePtr& type);  // torchvision.ops.misc.FrozenBatchNorm2d
// Replaces the condition of every `if` that went one way when the graph ran on `example` by that constant
// (a fused fast path flipped to the unfused layers), and the length of every list the graph builds by the one
// it had, then folds and unrolls the for-loops whose trip counts became constants; returns how many `if`s
// were decided and loops unrolled.
int decide_branches(std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Module& module,
                    const std::vector<c10::IValue>& example);

// The tensor attribute at a dotted module path.
torch::Tensor tensor_at(const torch::jit::Module& module, const std::string& module_path, const std::string& attr);
torch::jit::Module submodule_at(const torch::jit::Module& module, const std::string& path);

// ---- criteria ------------------------------------------------------------------------------------

// Per-slice view: the slice's elements as [channels, rest] (the channel's indices along `dim`; a copy for a
// grouped convolution's columns, whose rows are regrouped by block).
torch::Tensor slice_rows(const torch::Tensor& tensor, const TensorSlice& slice, int64_t channels);

struct CriterionContext {
  const torch::jit::Module& module;
  const ChannelGroup& group;
  const std::map<std::string, torch::Tensor>* gradients = nullptr;  // by tensor path (taylor)
};

struct Criterion {
  const char* name;
  const char* description;
  bool needs_data;
  // Importance of each of the group's channels, [channels], higher = keep.
  torch::Tensor (*score)(const CriterionContext& context);
};

const std::vector<Criterion>& criteria();
const Criterion& find_criterion(const std::string& name);  // OptionError("criterion", ...) when unknown

torch::Tensor score_l1(const CriterionContext& c);  // criterion_l1.cpp (bn-scale falls back to it)

// Gradients of the parameters over data (cross-entropy with labels, else with the model's own top-1),
// summed over batches, by tensor path. `inputs` are forward's arguments over all samples, sliced alike per batch.
std::map<std::string, torch::Tensor> parameter_gradients(torch::jit::Module& module,
                                                         const std::vector<torch::Tensor>& inputs,
                                                         const c10::optional<torch::Tensor>& y, int64_t batch);
// The same for a model with one input.
std::map<std::string, torch::Tensor> parameter_gradients(torch::jit::Module& module, const torch::Tensor& x,
                                                         const c10::optional<torch::Tensor>& y, int64_t batch);

// ---- surgery -------------------------------------------------------------------------------------

// Channels of each group to remove (indices into the group's channels), keyed by group index.
using Removal = std::map<size_t, std::vector<int64_t>>;

// The new shape of every tensor the removal touches, by tensor path.
std::map<std::string, std::vector<int64_t>> planned_shapes(const torch::jit::Module& module,
                                                           const DependencyGraph& graph, const Removal& removal);

// Replaces every touched tensor with its smaller copy under the same name (parameters stay parameters
// with their requires_grad) and makes the `groups` of depthwise convolutions follow their weight. Must
// run on a module that has not run forward yet in this process (edits to method graphs are ignored once
// an execution plan is cached).
void remove_channels(torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal);

// Zeroes the smallest-magnitude weights: per layer to `sparsity`, or with one threshold across all
// layers (global). Returns per-layer figures.
std::vector<LayerSparsity> zero_smallest(torch::jit::Module& module, const std::vector<WeightRef>& weights,
                                         double sparsity, bool global, const std::vector<std::string>& exclude);

// Parameter elements of a module (recursively).
uint64_t count_parameters(const torch::jit::Module& module);


}  // namespace lite::prune
