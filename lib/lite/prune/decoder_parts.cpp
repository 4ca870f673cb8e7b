// The parts of a decoder lite prune cuts, found by module structure: an attention is a module with q, k, v and o
// linear children (one naming table below: this fixture's, Llama's, GPT-NeoX-like), its head counts either int
// attributes (a scripted module: the table of attribute names) or constants of its graph's size lists (a traced
// module keeps no int attributes: `view(q(x), [B, T, 4, 16])`, `reshape(out, [B, T, 64])` before o). An MLP is a
// module with up and down linears, and a gate when gated (SwiGLU). Anything else stays as it is.
#include <iterator>
#include <map>

#include "lite/prune/decoder_internal.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

namespace {

const AttentionNames kAttentionNames[] = {
    {"q", "k", "v", "o"},                          // scripts/fixtures/decoder_model.py
    {"q_proj", "k_proj", "v_proj", "o_proj"},      // Llama, Mistral, Qwen
    {"q_proj", "k_proj", "v_proj", "out_proj"},    // OPT, BART-like
};

const MlpNames kMlpNames[] = {  // gated first: a gated MLP also has up and down
    {"up", "down", "gate"},
    {"up_proj", "down_proj", "gate_proj"},
    {"up", "down", nullptr},
    {"fc1", "fc2", nullptr},
};

const char* const kHeadsAttrs[] = {"heads", "num_heads", "n_heads", "n_head"};
const char* const kKvHeadsAttrs[] = {"kv_heads", "num_key_value_heads", "num_kv_heads", "n_kv_heads"};

// The [out, in] weight of a linear child, or an undefined tensor.
torch::Tensor linear_weight(const torch::jit::Module& m, const char* child) {
  if (!m.hasattr(child) || !m.attr(child).isModule()) return {};
  torch::jit::Module c = m.attr(child).toModule();
  if (!c.hasattr("weight") || !c.attr("weight").isTensor()) return {};
  torch::Tensor w = c.attr("weight").toTensor();
  return w.dim() == 2 ? w : torch::Tensor();
}

std::string int_attr(const torch::jit::Module& m, const char* const* names, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (m.hasattr(names[i]) && m.attr(names[i]).isInt()) return names[i];
  return {};
}

// The child a prim::CallMethod calls, when it is `self.<name>` (any method: a trace of a second method, such as a
// decoder's prefill, calls its children's `forward1`).
std::string called_child(torch::jit::Node* n, torch::jit::Value* self) {
  if (n->kind() != c10::prim::CallMethod) return {};
  torch::jit::Node* get = n->input(0)->node();
  if (get->kind() != c10::prim::GetAttr || get->input(0) != self) return {};
  return get->s(c10::attr::name);
}

std::optional<int64_t> constant_int(torch::jit::Value* v) {
  auto iv = torch::jit::toIValue(v);
  if (iv && iv->isInt()) return iv->toInt();
  return std::nullopt;
}

// The size list of a view or reshape of `v` (its only list input), or nullptr.
torch::jit::Node* size_list_of(torch::jit::Node* user) {
  const std::string kind = user->kind().toQualString();
  if (kind != "aten::view" && kind != "aten::reshape") return nullptr;
  torch::jit::Node* list = user->input(1)->node();
  return list->kind() == c10::prim::ListConstruct ? list : nullptr;
}

void read_counts(const torch::jit::Module& m, AttentionPart& p) {
  AttentionCut& c = p.cut;
  const int64_t q_rows = linear_weight(m, p.names.q).size(0), k_rows = linear_weight(m, p.names.k).size(0);
  p.heads_attr = int_attr(m, kHeadsAttrs, std::size(kHeadsAttrs));
  p.kv_heads_attr = int_attr(m, kKvHeadsAttrs, std::size(kKvHeadsAttrs));
  if (!p.heads_attr.empty()) {
    c.counts_in = "attributes";
    c.heads = m.attr(p.heads_attr).toInt();
    c.kv_heads = p.kv_heads_attr.empty() ? c.heads : m.attr(p.kv_heads_attr).toInt();
  } else {
    c.counts_in = "graph constants";
    for (const HeadSite& s : head_sites(m, p.names)) {
      const int64_t value = *constant_int(s.list->input(s.index));
      if (s.counts == HeadSite::Counts::heads) c.heads = value;
      if (s.counts == HeadSite::Counts::kv_heads) c.kv_heads = value;
    }
  }
  if (c.heads <= 0 || c.kv_heads <= 0) {
    c.skipped = "its head counts are neither int attributes (" + std::string(kHeadsAttrs[0]) +
                ", ...) nor constants of a view after q and k";
    return;
  }
  c.head_dim = q_rows / c.heads;
  if (c.head_dim * c.heads != q_rows || c.head_dim * c.kv_heads != k_rows || c.heads % c.kv_heads != 0)
    c.skipped = "its q/k widths do not match heads x head_dim and kv_heads x head_dim";
}

}  // namespace

std::vector<HeadSite> head_sites(const torch::jit::Module& attention, const AttentionNames& names) {
  std::vector<HeadSite> sites;
  for (const auto& method : attention.get_methods()) {
    auto graph = method.graph();
    torch::jit::Value* self = graph->inputs().at(0);
    for (torch::jit::Node* n : graph->nodes()) {
      const std::string child = called_child(n, self);
      if (child == names.o) {  // the heads' outputs merged back: [B, T, heads x head_dim]
        torch::jit::Node* producer = n->input(1)->node();
        torch::jit::Node* list = producer->inputs().size() > 1 ? size_list_of(producer) : nullptr;
        if (list && list->inputs().size() > 0 && constant_int(list->inputs().back()))
          sites.push_back({list, list->inputs().size() - 1, HeadSite::Counts::width});
        continue;
      }
      if (child != names.q && child != names.k && child != names.v) continue;
      for (const auto& use : n->output()->uses()) {  // split into heads: [B, T, heads, head_dim]
        torch::jit::Node* list = use.offset == 0 ? size_list_of(use.user) : nullptr;
        if (!list || list->inputs().size() != 4 || !constant_int(list->input(2))) continue;
        sites.push_back({list, 2, child == names.q ? HeadSite::Counts::heads : HeadSite::Counts::kv_heads});
      }
    }
  }
  return sites;
}

DecoderParts find_decoder_parts(const torch::jit::Module& module) {
  DecoderParts parts;
  std::map<const c10::ClassType*, int> instances;  // a graph's constants are shared by every instance of its type
  for (const auto& item : module.named_modules()) instances[item.value.type().get()]++;
  for (const auto& item : module.named_modules()) {
    const torch::jit::Module& m = item.value;
    for (const AttentionNames& names : kAttentionNames) {
      if (!linear_weight(m, names.q).defined() || !linear_weight(m, names.k).defined() ||
          !linear_weight(m, names.v).defined() || !linear_weight(m, names.o).defined())
        continue;
      AttentionPart p;
      p.names = names;
      p.cut.module = item.name;
      read_counts(m, p);
      if (p.cut.skipped.empty() && p.cut.counts_in == "graph constants" && instances[m.type().get()] > 1)
        p.cut.skipped = "its head counts are constants of a graph other attention modules share";
      p.cut.heads_kept = p.cut.heads, p.cut.kv_heads_kept = p.cut.kv_heads;
      parts.attention.push_back(p);
      break;
    }
    for (const MlpNames& names : kMlpNames) {
      const torch::Tensor up = linear_weight(m, names.up), down = linear_weight(m, names.down);
      if (!up.defined() || !down.defined() || (names.gate && !linear_weight(m, names.gate).defined())) continue;
      MlpPart p;
      p.names = names;
      p.cut.module = item.name;
      p.cut.width = p.cut.kept = up.size(0);
      if (down.size(1) != up.size(0)) p.cut.skipped = "down's input width is not up's output width";
      parts.mlp.push_back(p);
      break;
    }
  }
  return parts;
}

}  // namespace lite::prune
