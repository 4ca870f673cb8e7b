// Physical removal of channels: every tensor a group touches is replaced by its smaller copy under the
// same name, so the file keeps its module structure, its parameters stay trainable parameters, and any
// TorchScript consumer loads it. Indices are collected per (tensor, dimension) first, because one tensor
// can be cut by several groups (a conv's rows by one, its columns by another; a linear after a
// concatenation by each branch at its offset). Depthwise convolutions get `groups` rewritten to
// `weight.size(0)` in their type's code (a class constant cannot be set; see libtorch-notes.md): valid for
// every instance of the type because the conv rule (rules_conv_linear.cpp) only accepts types whose
// instances are all depthwise. LayerNorm's normalized_shape is a class constant too: its forward reads [weight.size(0)]
// instead. Int attributes that hold a channel count (ViT's hidden_dim, attention's embed_dim, head_dim,
// kdim, vdim) are set to the kept count.
#include <functional>
#include <map>
#include <set>

#include "lite/core/error.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

namespace {

// (tensor path, dim) -> indices kept along dim.
using KeepMap = std::map<std::pair<std::string, int64_t>, std::vector<int64_t>>;

struct TensorRef {
  std::string module, attr;
};

KeepMap kept_indices(const torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal,
                     std::map<std::string, TensorRef>& refs) {
  std::map<std::pair<std::string, int64_t>, std::set<int64_t>> removed;
  std::map<std::pair<std::string, int64_t>, int64_t> sizes;
  for (const auto& [index, channels] : removal) {
    const ChannelGroup& g = graph.groups.at(index);
    for (const auto& sl : g.slices) {
      auto key = std::make_pair(sl.path(), sl.dim);
      refs[sl.path()] = {sl.module, sl.attr};
      sizes[key] = tensor_at(module, sl.module, sl.attr).size(sl.dim);
      for (int64_t c : channels) {
        const int64_t index = sl.fold ? (sl.offset + c) % sl.fold : sl.offset + c;  // every block loses the same columns
        for (int64_t j = 0; j < sl.factor; ++j) removed[key].insert(index * sl.factor + j);
      }
    }
  }
  KeepMap keep;
  for (const auto& [key, gone] : removed) {
    auto& k = keep[key];
    for (int64_t i = 0; i < sizes[key]; ++i)
      if (!gone.count(i)) k.push_back(i);
  }
  return keep;
}

void rewrite_depthwise_groups(torch::jit::Module& module, const std::string& path, std::set<const void*>& done) {
  torch::jit::Module conv = submodule_at(module, path);
  auto type = conv.type();
  if (!done.insert(type.get()).second) return;
  const char* method = conv.find_method("_conv_forward") ? "_conv_forward" : "forward";
  auto graph = conv.get_method(method).graph();
  std::function<void(torch::jit::Block*)> visit = [&](torch::jit::Block* block) {
    for (torch::jit::Node* n : block->nodes()) {
      for (auto* b : n->blocks()) visit(b);
      std::string kind = n->kind().toQualString();
      if (kind != "aten::conv1d" && kind != "aten::conv2d" && kind != "aten::conv3d") continue;
      torch::jit::WithInsertPoint guard(n);
      torch::jit::Value* zero = graph->insertConstant(int64_t(0));
      torch::jit::Node* size = graph->create(c10::Symbol::fromQualString("aten::size"), {n->input(1), zero});
      size->output()->setType(c10::IntType::get());
      graph->insertNode(size);
      n->replaceInput(6, size->output());
    }
  };
  visit(graph->block());
}

// LayerNorm.forward calls F.layer_norm(input, [C], weight, bias, eps): [C] becomes [weight.size(0)].
void rewrite_layer_norm_shape(torch::jit::Module& module, const std::string& path, std::set<const void*>& done) {
  torch::jit::Module norm = submodule_at(module, path);
  if (!done.insert(norm.type().get()).second) return;
  auto graph = norm.get_method("forward").graph();
  for (torch::jit::Node* n : graph->nodes()) {
    const std::string kind = n->kind().toQualString();
    const size_t first = kind == "prim::CallFunction" ? 1 : kind == "aten::layer_norm" ? 0 : SIZE_MAX;
    if (first == SIZE_MAX || n->inputs().size() < first + 3) continue;
    torch::jit::Value* shape = n->input(first + 1);
    if (shape->node()->kind() != c10::prim::ListConstruct || shape->node()->inputs().size() != 1) continue;
    torch::jit::WithInsertPoint guard(n);
    torch::jit::Value* size = graph->insert(c10::aten::size, {n->input(first + 2), int64_t(0)});
    n->replaceInput(first + 1, graph->insertNode(graph->createList(c10::IntType::get(), {size}))->output());
  }
}

}  // namespace

std::map<std::string, std::vector<int64_t>> planned_shapes(const torch::jit::Module& module,
                                                           const DependencyGraph& graph, const Removal& removal) {
  std::map<std::string, TensorRef> refs;
  KeepMap keep = kept_indices(module, graph, removal, refs);
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& [key, indices] : keep) {
    auto it = shapes.find(key.first);
    if (it == shapes.end()) {
      const auto& r = refs.at(key.first);
      it = shapes.emplace(key.first, tensor_at(module, r.module, r.attr).sizes().vec()).first;
    }
    it->second[size_t(key.second)] = int64_t(indices.size());
  }
  return shapes;
}

void remove_channels(torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal) {
  torch::NoGradGuard no_grad;
  std::map<std::string, TensorRef> refs;
  KeepMap keep = kept_indices(module, graph, removal, refs);
  std::map<std::string, torch::Tensor> updated;
  for (const auto& [key, indices] : keep) {
    const auto& r = refs.at(key.first);
    auto it = updated.find(key.first);
    torch::Tensor t = it != updated.end() ? it->second : tensor_at(module, r.module, r.attr);
    updated[key.first] = t.index_select(key.second, torch::tensor(indices, torch::kLong));
  }
  for (auto& [path, t] : updated) {
    const auto& r = refs.at(path);
    torch::jit::Module owner = submodule_at(module, r.module);
    bool requires_grad = owner.attr(r.attr).toTensor().requires_grad();
    owner._ivalue()->setAttr(r.attr, t.contiguous().detach().requires_grad_(requires_grad));
  }
  std::set<const void*> done, norms_done;
  for (const auto& [index, channels] : removal) {
    if (channels.empty()) continue;
    const ChannelGroup& g = graph.groups.at(index);
    for (const auto& path : g.depthwise) rewrite_depthwise_groups(module, path, done);
    for (const auto& path : g.layer_norms) rewrite_layer_norm_shape(module, path, norms_done);
    const int64_t kept = g.channels - int64_t(channels.size());
    for (const auto& count : g.counts)
      submodule_at(module, count.module)._ivalue()->setAttr(count.name, c10::IValue(kept / count.divisor));
  }
}

uint64_t count_parameters(const torch::jit::Module& module) {
  uint64_t n = 0;
  for (const auto& p : module.parameters(/*recurse=*/true)) n += uint64_t(p.numel());
  return n;
}

}  // namespace lite::prune
