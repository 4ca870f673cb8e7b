// Frozen-graph layer matching: freezing the float model and finding each planned layer's conv/linear node in
// it, so the schemes rewrite the right nodes; the frozen float baseline.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/remove_dropout.h>
#include <torch/jit.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

std::optional<WeightMatch> match_weight(const torch::Tensor& w, const std::vector<torch::Tensor>& planned) {
  for (size_t i = 0; i < planned.size(); ++i) {
    const torch::Tensor& p = planned[i];
    if (!p.defined() || !w.is_alias_of(p)) continue;
    if (w.data_ptr() == p.data_ptr() && w.sizes() == p.sizes() && w.strides() == p.strides()) return WeightMatch{i};
    const int64_t offset = w.storage_offset() - p.storage_offset();
    const bool rows = p.is_contiguous() && w.is_contiguous() && w.dim() == p.dim() && w.dim() > 0 &&
                      w.sizes().slice(1) == p.sizes().slice(1) && offset >= 0 && offset % p.stride(0) == 0;
    return WeightMatch{i, true, rows, rows ? offset / p.stride(0) : 0};
  }
  return std::nullopt;
}

namespace {
void collect_layer_nodes(torch::jit::Block* block, std::vector<torch::jit::Node*>& out) {
  for (auto* n : block->nodes()) {
    if (layer_ops().count(n->kind().toQualString()) && n->input(1)->node()->kind() == c10::prim::Constant) out.push_back(n);
    for (auto* b : n->blocks()) collect_layer_nodes(b, out);
  }
}

torch::Tensor constant_tensor(torch::jit::Value* v) { return torch::jit::toIValue(v)->toTensor(); }

// The conv/linear nodes computing with `weight`, directly or through ops that derive a weight from it.
std::vector<torch::jit::Node*> weight_users(torch::jit::Value* weight) {
  std::vector<torch::jit::Node*> layers;
  std::vector<torch::jit::Value*> pending = {weight};
  std::set<torch::jit::Value*> seen;
  while (!pending.empty()) {
    torch::jit::Value* v = pending.back();
    pending.pop_back();
    if (!seen.insert(v).second) continue;
    for (const auto& use : v->uses()) {
      if (layer_ops().count(use.user->kind().toQualString())) {
        if (use.offset == 1 && std::find(layers.begin(), layers.end(), use.user) == layers.end())
          layers.push_back(use.user);
        continue;
      }
      for (auto* out : use.user->outputs()) pending.push_back(out);
    }
  }
  return layers;
}

// Matches each frozen conv/linear node to its planned layer: by weight identity (or as a row slice of the
// weight, rewritten as a narrow of one shared constant, so the schemes convert the weight once), then, for
// weights that freezing recomputed (batch norm folded into them), in order by op and weight shape.
class LayerMatcher {
 public:
  LayerMatcher(FrozenModel& f, const Plan& plan, const std::map<std::string, torch::Tensor>& weights)
      : f_(f), plan_(plan), weight_(plan.layers.size()) {
    for (size_t i = 0; i < plan.layers.size(); ++i) {
      auto it = weights.find(plan.layers[i].layer.name);
      if (it != weights.end()) planned_.push_back(it->second.detach());  // a constant cannot require grad
      else planned_.emplace_back();
    }
  }

  void run() {
    std::vector<torch::jit::Node*> nodes, by_order;
    collect_layer_nodes(f_.graph->block(), nodes);
    for (auto* n : nodes) {
      if (n->input(1)->node()->kind() != c10::prim::Constant) continue;  // shared with a node matched already
      auto m = match_weight(constant_tensor(n->input(1)), planned_);
      if (!m) by_order.push_back(n);
      else if (m->view && !m->sliceable) f_.unplanned.push_back(n);
      else share_weight(n, *m);
    }
    match_in_order(by_order);
    torch::jit::EliminateDeadCode(f_.graph);
    for (size_t i = 0; i < plan_.layers.size(); ++i) {
      if (weight_[i]) f_.layers.push_back({weight_[i], &plan_.layers[i], weight_users(weight_[i])});
      else f_.missing.push_back(plan_.layers[i].layer.name);
    }
  }

 private:
  // The node's weight constant becomes (a narrow of) the layer's one constant, at the top of the graph.
  void share_weight(torch::jit::Node* n, const WeightMatch& m) {
    torch::jit::Value* c = n->input(1);
    if (!weight_[m.layer]) {
      torch::jit::WithInsertPoint top(f_.graph->block()->nodes().front());
      weight_[m.layer] = f_.graph->insertConstant(planned_[m.layer]);
    }
    torch::jit::Value* replacement = weight_[m.layer];
    if (m.view) {
      torch::jit::WithInsertPoint guard(c->node());
      replacement = f_.graph->insert(c10::Symbol::fromQualString("aten::narrow"),
                                     {replacement, int64_t{0}, m.row, constant_tensor(c).size(0)});
    }
    if (c != replacement) c->replaceAllUsesWith(replacement);
  }

  // Planned layers no frozen weight is identical to (batch norm folded into them) and the frozen nodes
  // whose weight is no planned layer's, both in execution order: the k-th node that agrees in op and
  // weight shape with the next such layer is that layer; the rest are conv/linear ops the plan does not list.
  void match_in_order(const std::vector<torch::jit::Node*>& nodes) {
    std::vector<size_t> layers;
    for (size_t i = 0; i < plan_.layers.size(); ++i)
      if (!weight_[i]) layers.push_back(i);
    size_t next = 0;
    for (auto* n : nodes) {
      if (next < layers.size()) {
        const auto& l = plan_.layers[layers[next]].layer;
        if (n->kind().toQualString() == l.op && constant_tensor(n->input(1)).sizes().vec() == l.weight_shape) {
          weight_[layers[next++]] = n->input(1);
          continue;
        }
      }
      f_.unplanned.push_back(n);
    }
  }

  FrozenModel& f_;
  const Plan& plan_;
  std::vector<torch::Tensor> planned_;       // each planned layer's weight in the module that was frozen
  std::vector<torch::jit::Value*> weight_;  // each planned layer's weight constant in the frozen graph
};

}  // namespace

FrozenModel freeze_with_layers(const model::LoadedModel& source, const Plan& plan) {
  torch::NoGradGuard no_grad;
  torch::jit::Module m = source.module.clone();
  m.eval();
  const auto weights = layer_weights(m);
  FrozenModel f;
  f.module = torch::jit::freeze(m, c10::nullopt, /*optimize_numerics=*/true);
  f.graph = f.module.get_method("forward").graph();
  LayerMatcher(f, plan, weights).run();
  return f;
}

std::vector<std::string> FrozenModel::notes(const std::string& unplanned_become) const {
  std::vector<std::string> out;
  if (!unplanned.empty()) {
    std::map<std::string, int> ops;
    for (auto* n : unplanned) ++ops[n->kind().toQualString()];
    std::vector<std::string> counts;
    for (const auto& [op, count] : ops) counts.push_back(fmt::format("{} {}", count, op));
    out.push_back(fmt::format("the frozen graph has conv/linear ops that are no planned layer's (weights computed "
                              "in forward or a folded form of one): {}; they {}",
                              join(counts, ", "), unplanned_become));
  }
  if (!missing.empty())
    out.push_back("planned layers not in the frozen graph (freezing removed their use), left as they are: " +
                  join(missing, ", "));
  return out;
}

}  // namespace lite::quantize
