#pragma once
// The torch side of lite quantize, shared by the scheme files and the torch unit tests. Not installed
// and not included by the CLI (quantize.hpp is the public, torch-free header).
#include <torch/csrc/jit/passes/quantization/quantization_type.h>
#include <torch/script.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/progress.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/load.hpp"
#include "lite/model/module_bytes.hpp"
#include "lite/quantize/calibration.hpp"
#include "lite/quantize/plan.hpp"

namespace lite::quantize {

// The ops lite quantizes, by qualified name ("aten::conv2d"), with the layer kind each one is
// ("Conv2d").
const std::map<std::string, std::string>& layer_ops();

// Convolution and linear layers of the model's forward (inlined), in execution order, one entry per
// module (a module called twice, or from both branches of an `if`, is listed once). Layers whose
// weight is computed rather than read from an attribute are not listed (no scheme can quantize them).
std::vector<LayerInfo> find_layers(const torch::jit::Module& module);
// Dynamic int8 LSTM/GRU (dynamic_recurrent.cpp): rewrites each aten::lstm / aten::gru of a frozen forward whose
// weights are constants into aten::quantized_lstm / quantized_gru; returns how many it rewrote.
int quantize_recurrent_dynamic(torch::jit::Module& module);
// Weight-only int8 embedding tables, dynamic and static modes (dynamic_embedding.cpp): rewrites each
// aten::embedding of a frozen forward whose table is a constant into quantized::embedding_byte over the table
// packed uint8 per row; returns how many.
int quantize_embedding_tables(torch::jit::Module& module);
// Whether an embedding table has the form that rewrite takes (2-D float32).
bool plain_embedding_table(const torch::Tensor& table);
// Whether a recurrent op's weights have the form that rewrite takes: (w_ih, w_hh, b_ih, b_hh) per layer and
// direction (no projections, biases present).
bool plain_recurrent_weights(const std::vector<torch::Tensor>& tensors);
// The Embedding, LSTM, GRU and RNN layers of forward (find_layers lists none of them), with their weight bytes.
std::vector<FloatOnlyLayer> find_float_only_layers(const torch::jit::Module& module);
// The weight tensor of each layer find_layers lists, by layer name: the module's own tensor, not a copy
// (freezing keeps it, so a frozen graph's constants can be matched to layers by identity).
std::map<std::string, torch::Tensor> layer_weights(const torch::jit::Module& module);
// The same layers, found in `module`'s graphs but read from `holder` at each weight's attribute path: `holder` is a
// copy of `module` whose graphs passes have rewritten (eval specialization), where the layers may not be found.
std::map<std::string, torch::Tensor> layer_weights(const torch::jit::Module& module, const torch::jit::Module& holder);

// The submodule at a dotted path ("" is the module itself).
torch::jit::Module submodule_at(const torch::jit::Module& module, const std::string& path);

// ---- calibration -------------------------------------------------------------------------------

// TorchScript observer modules built in C++ (no Python at run time); see observers.cpp.
torch::jit::Module make_activation_observer();
torch::jit::Module make_weight_observer(bool per_channel);

// Runs calibration data through observed modules (made by torch::jit::InsertObservers with lite's
// observers) and sets every activation observer's scale and zero point with the chosen method. The
// statistics are kept by observed value, so building the same model again with other layers kept in
// float (the tolerance search) needs no second pass over the data.
class Calibrator {
 public:
  // `data` may be null when preloaded statistics are to cover everything; `batch` (>= 1) samples per
  // forward pass.
  Calibrator(const model::Dataset* data, int64_t batch, const CalibMethodEntry& method,
             std::filesystem::path model_path, Progress& progress);

  // Statistics from an earlier run (--calib-stats); calibration then runs only for values they lack.
  void preload(CalibrationStats stats);
  void calibrate(torch::jit::Module& observed);

  const CalibrationStats& stats() const { return stats_; }
  CalibrationStats& stats() { return stats_; }
  const CalibMethodEntry& method() const { return method_; }
  int64_t passes() const { return passes_; }  // forward passes over the data so far

 private:
  void run_data(torch::jit::Module& observed, const char* phase);
  const model::Dataset* data_;
  int64_t batch_;
  const CalibMethodEntry& method_;
  std::filesystem::path model_path_;
  Progress& progress_;
  CalibrationStats stats_;
  int64_t passes_ = 0;
};

// ---- building ----------------------------------------------------------------------------------

struct BuildContext {
  const model::LoadedModel& source;
  const Plan& plan;
  Calibrator* calibrator = nullptr;  // static mode
  torch::jit::Module result;
  nlohmann::json details = nlohmann::json::object();  // what the scheme did (recorded in the artifact)
  // In: regions known to stay float (an earlier build found them); out: every region this build kept float.
  std::vector<FloatRegion> float_regions;
  // Out: seconds this build spent per step ("specialize", "fold-bn", "insert-observers", "calibrate", ...).
  std::vector<std::pair<std::string, double>> steps;
  // Out: what the report should say about this build (conv/linear ops the plan did not cover, ...).
  std::vector<std::string> notes;
  // In: the model is an autoregressive decoder (its decode steps run each linear layer on a few rows).
  bool decoder = false;
};

// ---- eval specialization (specialize.cpp) --------------------------------------------------------

// Specializes every method graph of every module type of `module` (an eval-mode clone) for inference:
// self.training -> false, a bool attribute every instance of the type holds alike -> its value, functions
// called with the constant false inlined, constants propagated, dead branches dropped.
// Returns the number of graphs changed.
int specialize_for_inference(torch::jit::Module& module);
// "file.py:32" when `error` is InsertObservers' rejection of an `if` whose branches are observed
// differently, else "".
std::string rejected_if_location(const std::string& error);
// The modules whose methods hold the `if` at `where` ("file.py:32"), directly or in a function they call,
// rewritten so that InsertObservers accepts that `if` once they have no qconfig (see specialize.cpp).
std::vector<FloatRegion> isolate_if(torch::jit::Module& module, const std::string& where);

// The torch::jit qconfig dict for a plan: everything quantized with (activation, weight) observers
// except the plan's float layers; the modules in `per_tensor` (transposed convolutions: libtorch quantizes
// their weights per tensor only) get `per_tensor_qconfig`.
using QConfigPair = std::tuple<torch::jit::Module, torch::jit::Module>;
std::unordered_map<std::string, c10::optional<QConfigPair>> make_qconfig_dict(
    const Plan& plan, const QConfigPair& qconfig, const std::vector<std::string>& per_tensor = {},
    const std::optional<QConfigPair>& per_tensor_qconfig = std::nullopt);

// The module paths of the transposed convolutions in forward ("up", "decoder.0"): layers find_layers does not
// list, which graph-mode int8 quantizes all the same.
std::vector<std::string> transposed_conv_modules(const torch::jit::Module& module);

// The module paths of the nn.MultiheadAttention submodules ("block.self_attn"), listed as layers or not (a
// traced attention's in_proj is split before its linears read it: no layer names the module).
std::vector<std::string> multihead_attention_modules(const torch::jit::Module& module);

// Graph-mode int8 (static and dynamic), the torch::jit passes behind Python's quantize_jit: the source
// model cloned with batch norms folded, observers inserted by the plan's qconfig dict (int8 symmetric
// weights, per output channel unless the engine is qnnpack), `calibrate` run on the observed module
// (static), quantize/dequantize pairs inserted, then Finalize. Records the weight scheme in ctx.details.
torch::jit::Module graph_mode_int8(BuildContext& ctx, torch::jit::QuantType type,
                                   const std::function<void(torch::jit::Module& observed)>& calibrate = {});

// Bytes of a layer with int8 weights, a float scale and an int64 zero point per output channel, and
// a float bias (graph-mode int8).
uint64_t int8_layer_bytes(const LayerInfo& layer);

// Linear layers with fewer multiply-accumulates per sample than this stay float in the int8 modes:
// a onednn quantized::linear call costs about 15 us here whatever its size (17 us for the CNN's
// 256->10 classifier at batch 1), the float linear plus a dequantize about 3 us.
inline constexpr uint64_t kSmallLayerMacs = 16384;
std::string small_layer_reason(const LayerInfo& layer);

// Counts quantized::* compute ops (conv/linear, static or dynamic) in a module's forward graph.
int64_t count_quantized_ops(const torch::jit::Module& module);

// Lite's passes on a finalized int8 graph (graph_passes.cpp): drop dropout, quantize large float
// inputs with vectorized ops instead of the scalar aten::quantize_per_tensor loop of this libtorch,
// flatten channels-last activations without a copy, fold ReLU6 into the int8 layer before it. Returns the
// names of the passes that changed it.
std::vector<std::string> optimize_int8_graph(torch::jit::Module& module);

// The op `name` (default overload) called on `stack`; returns its outputs.
torch::jit::Stack call_op(const char* name, torch::jit::Stack stack);
// The packed-parameter attribute a quantized op reads (prim::GetAttr on self), or "".
std::string packed_attribute(torch::jit::Value* v, torch::jit::Value* self);

// A decoder's per-channel dynamic int8 linears with their scales and bias applied after the kernel, on int8 values
// of scale 1 (dynamic_channel_scales.cpp): the kernel's faster per-tensor path at a decode step's few rows, the
// per-channel quantization's accuracy. Returns how many linears it changed.
int move_channel_scales_out(torch::jit::Module& module);

// InsertQuantDeQuant dequantizes a returned tuple as a whole (aten::dequantize.any): the graph runs, but
// its code reloads as "annotated as having type GoogLeNetOutputs but is actually of type Any". Rewrites
// each such node into a tuple of the same (named) type whose quantized tensor elements are dequantized one
// by one. Returns how many nodes it rewrote.
int dequantize_tuple_elements(torch::jit::Graph& graph);

// Frozen-graph schemes (fp16, bf16, weight-only): the model frozen (BN folded) with each planned layer's
// weight constant found. A planned weight is one constant at the top of the graph, used directly or through
// views (nn.MultiheadAttention's q/k/v slices of its packed in_proj weight are narrows of it), so a scheme
// converts it once by replacing its uses; `nodes` are the conv/linear nodes that compute with it.
struct FrozenLayer {
  torch::jit::Value* weight;
  const LayerPlan* plan;
  std::vector<torch::jit::Node*> nodes;
};
// How a frozen conv/linear node's weight constant relates to a planned layer's weight tensor. Freezing keeps
// the module's tensors, so an unfolded layer's constant is its weight itself; nn.MultiheadAttention's
// functional code splits the packed in_proj weight, which freezing folds into constant views of it.
struct WeightMatch {
  size_t layer = 0;
  bool view = false;      // a slice of rows of the layer's weight, at `row`
  bool sliceable = true;  // false: a view that is not such a slice
  int64_t row = 0;
};
// Which of `planned` (by index) the constant `w` is, or a view of; nullopt when none.
std::optional<WeightMatch> match_weight(const torch::Tensor& w, const std::vector<torch::Tensor>& planned);
// int8, symmetric, one scale per output channel (row) of a 2-D weight: what libtorch's dynamic ops take.
torch::Tensor quantize_rows(const torch::Tensor& w);
// Dynamic int8 nn.MultiheadAttention projections (dynamic_attention.cpp): in a frozen forward, each aten::linear
// whose weight is (a row slice of) one of `planned` (layer name -> the weight tensor the frozen module holds)
// becomes quantized::linear_dynamic. Returns the names of the layers it converted.
std::vector<std::string> quantize_attention_dynamic(torch::jit::Module& module,
                                                    const std::map<std::string, torch::Tensor>& planned);

struct FrozenModel {
  torch::jit::Module module;
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<FrozenLayer> layers;          // planned layers found, in plan order
  std::vector<torch::jit::Node*> unplanned;  // conv/linear nodes with a constant weight that is no planned layer's
  std::vector<std::string> missing;          // planned layers whose weight the frozen graph does not use
  // Report notes on the unplanned nodes (what the scheme made of them: `unplanned_become`) and missing layers.
  std::vector<std::string> notes(const std::string& unplanned_become) const;
};
FrozenModel freeze_with_layers(const model::LoadedModel& source, const Plan& plan);

// Inserts the graph of TorchScript function `name` from `source` before `before`, called with
// `inputs`; returns its outputs.
std::vector<torch::jit::Value*> insert_function(torch::jit::Graph& graph, torch::jit::Node* before,
                                                const std::string& source, const std::string& name,
                                                const std::vector<torch::jit::Value*>& inputs);

// Saves to memory (what a consumer of the file gets) and loads copies of it back.
using model::deserialize;
using model::serialize;

}  // namespace lite::quantize
