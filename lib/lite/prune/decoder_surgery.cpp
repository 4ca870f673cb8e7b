// Cutting a decoder's heads and MLP width. A KV head goes with the query heads that read it (its group of
// heads / kv_heads), so the group size, the repeat of K and V over it, head_dim and rotary's table stay as they
// are, and the cache the model returns holds kv_heads_kept heads: its bytes per token shrink by the same share.
// A group is scored by the l1 (or l2) norm of its q, k and v rows and o columns; an MLP unit by its up (and
// gate) row and down column. The counts follow: int attributes are set, and a graph that states them as
// constants (a traced module, whose type is its own) gets new constants in its size lists.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/prune/decoder_internal.hpp"
#include "lite/prune/plan_internal.hpp"

namespace lite::prune {

namespace {

int64_t removed_of(int64_t n, double ratio) { return std::min<int64_t>(n - 1, int64_t(std::floor(double(n) * ratio + 1e-9))); }

double ratio_for(const std::string& module, const PruneOptions& o) {
  double ratio = o.ratio.value_or(0);
  for (const auto& r : o.layer_ratios)
    if (glob_match(r.glob, module)) ratio = r.ratio;
  return ratio;
}

bool excluded_module(const std::string& module, const PruneOptions& o) {
  return std::any_of(o.exclude.begin(), o.exclude.end(), [&](const std::string& g) { return glob_match(g, module); });
}

torch::Tensor weight_of(const torch::jit::Module& m, const char* child) {
  return m.attr(child).toModule().attr("weight").toTensor();
}

int64_t has_bias(const torch::jit::Module& m, const char* child) {
  const torch::jit::Module lin = m.attr(child).toModule();
  return lin.hasattr("bias") && lin.attr("bias").isTensor() ? 1 : 0;
}

// Score of each of n units whose elements are `rows` consecutive rows (dim 0) or columns (dim 1) of `w`.
torch::Tensor unit_scores(const torch::Tensor& w, int64_t dim, int64_t n, bool l2) {
  torch::Tensor t = (dim == 0 ? w : w.t()).reshape({n, -1}).to(torch::kFloat);
  return l2 ? t.pow(2).sum(1) : t.abs().sum(1);
}

// The `keep` highest-scoring of scores' units, in order.
std::vector<int64_t> top_units(const torch::Tensor& scores, int64_t keep) {
  std::vector<int64_t> idx(size_t(scores.size(0)));
  std::iota(idx.begin(), idx.end(), 0);
  auto s = scores.accessor<float, 1>();
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  idx.resize(size_t(keep));
  std::sort(idx.begin(), idx.end());
  return idx;
}

// Rows (dim 0) or columns (dim 1) of a linear child's weight, and of its bias along its outputs, kept by index;
// in_features / out_features follow where the module carries them.
void keep_linear(torch::jit::Module& parent, const char* child, int64_t dim, const std::vector<int64_t>& units,
                 int64_t unit) {
  torch::jit::Module lin = parent.attr(child).toModule();
  std::vector<int64_t> index;
  for (int64_t u : units)
    for (int64_t i = 0; i < unit; ++i) index.push_back(u * unit + i);
  const torch::Tensor keep = torch::tensor(index, torch::kLong);
  auto set = [&](const char* name, const torch::Tensor& t) {
    const bool grad = lin.attr(name).toTensor().requires_grad();
    lin._ivalue()->setAttr(name, t.contiguous().detach().requires_grad_(grad));
  };
  set("weight", lin.attr("weight").toTensor().index_select(dim, keep));
  if (dim == 0 && lin.hasattr("bias") && lin.attr("bias").isTensor()) set("bias", lin.attr("bias").toTensor().index_select(0, keep));
  const char* count = dim == 0 ? "out_features" : "in_features";
  // nn.Linear's are class constants forward never reads (they stay); an int attribute of the same name is set
  if (lin.type()->hasAttribute(count) && lin.attr(count).isInt()) lin._ivalue()->setAttr(count, int64_t(index.size()));
}

void cut_attention(torch::jit::Module& m, const AttentionPart& p, bool l2) {
  const AttentionCut& c = p.cut;
  const int64_t group = c.heads / c.kv_heads, d = c.head_dim;
  // a KV group's score: its K and V rows, and the q rows and o columns of the heads that read it
  torch::Tensor scores = unit_scores(weight_of(m, p.names.k), 0, c.kv_heads, l2) +
                         unit_scores(weight_of(m, p.names.v), 0, c.kv_heads, l2) +
                         unit_scores(weight_of(m, p.names.q), 0, c.kv_heads, l2) +
                         unit_scores(weight_of(m, p.names.o), 1, c.kv_heads, l2);
  const std::vector<int64_t> kv = top_units(scores, c.kv_heads_kept);
  std::vector<int64_t> q;
  for (int64_t g : kv)
    for (int64_t h = 0; h < group; ++h) q.push_back(g * group + h);
  keep_linear(m, p.names.q, 0, q, d);
  keep_linear(m, p.names.k, 0, kv, d);
  keep_linear(m, p.names.v, 0, kv, d);
  keep_linear(m, p.names.o, 1, q, d);
  if (!p.heads_attr.empty()) m._ivalue()->setAttr(p.heads_attr, c.heads_kept);
  if (!p.kv_heads_attr.empty()) m._ivalue()->setAttr(p.kv_heads_attr, c.kv_heads_kept);
  for (const HeadSite& s : head_sites(m, p.names)) {
    const int64_t value = s.counts == HeadSite::Counts::heads      ? c.heads_kept
                          : s.counts == HeadSite::Counts::kv_heads ? c.kv_heads_kept
                                                                   : c.heads_kept * d;
    torch::jit::WithInsertPoint guard(s.list);
    s.list->replaceInput(s.index, s.list->owningGraph()->insertConstant(value));
  }
}

void cut_mlp(torch::jit::Module& m, const MlpPart& p, bool l2) {
  torch::Tensor scores = unit_scores(weight_of(m, p.names.up), 0, p.cut.width, l2) +
                         unit_scores(weight_of(m, p.names.down), 1, p.cut.width, l2);
  if (p.names.gate) scores = scores + unit_scores(weight_of(m, p.names.gate), 0, p.cut.width, l2);
  const std::vector<int64_t> units = top_units(scores, p.cut.kept);
  keep_linear(m, p.names.up, 0, units, 1);
  if (p.names.gate) keep_linear(m, p.names.gate, 0, units, 1);
  keep_linear(m, p.names.down, 1, units, 1);
}

}  // namespace

void plan_decoder_cut(DecoderParts& parts, const PruneOptions& o) {
  for (auto& p : parts.attention) {
    AttentionCut& c = p.cut;
    if (!c.skipped.empty() || !o.heads) continue;
    if (excluded_module(c.module, o)) {
      c.skipped = "excluded";
      continue;
    }
    c.kv_heads_kept = c.kv_heads - removed_of(c.kv_heads, *o.heads);
    c.heads_kept = c.kv_heads_kept * (c.heads / c.kv_heads);
  }
  for (auto& p : parts.mlp) {
    MlpCut& c = p.cut;
    const double ratio = ratio_for(c.module, o);
    if (!c.skipped.empty() || ratio <= 0) continue;
    if (excluded_module(c.module, o)) {
      c.skipped = "excluded";
      continue;
    }
    int64_t kept = c.width - removed_of(c.width, ratio);
    if (o.round_to > 1 && kept >= o.round_to) kept -= kept % o.round_to;  // a multiple of round_to where possible
    c.kept = kept;
  }
}

uint64_t planned_decoder_parameters(const torch::jit::Module& module, const DecoderParts& parts) {
  int64_t removed = 0;
  for (const auto& p : parts.attention) {
    const torch::jit::Module m = submodule_at(module, p.cut.module);
    const int64_t gone_q = (p.cut.heads - p.cut.heads_kept) * p.cut.head_dim;
    const int64_t gone_kv = (p.cut.kv_heads - p.cut.kv_heads_kept) * p.cut.head_dim;
    removed += gone_q * (weight_of(m, p.names.q).size(1) + has_bias(m, p.names.q));
    removed += gone_kv * (weight_of(m, p.names.k).size(1) + has_bias(m, p.names.k));
    removed += gone_kv * (weight_of(m, p.names.v).size(1) + has_bias(m, p.names.v));
    removed += gone_q * weight_of(m, p.names.o).size(0);
  }
  for (const auto& p : parts.mlp) {
    const torch::jit::Module m = submodule_at(module, p.cut.module);
    const int64_t gone = p.cut.width - p.cut.kept;
    removed += gone * (weight_of(m, p.names.up).size(1) + has_bias(m, p.names.up));
    if (p.names.gate) removed += gone * (weight_of(m, p.names.gate).size(1) + has_bias(m, p.names.gate));
    removed += gone * weight_of(m, p.names.down).size(0);
  }
  return count_unique_parameters(module) - uint64_t(removed);
}

uint64_t count_unique_parameters(const torch::jit::Module& module) {
  std::set<const void*> seen;  // a tied lm head is the embedding's tensor: counted once, as PyTorch counts it
  uint64_t n = 0;
  for (const auto& p : module.parameters(/*recurse=*/true))
    if (seen.insert(p.data_ptr()).second) n += uint64_t(p.numel());
  return n;
}

std::string cut_decoder(const torch::jit::Module& module, const DecoderParts& parts, const std::string& criterion) {
  torch::NoGradGuard no_grad;
  const bool l2 = criterion == "l2";
  torch::jit::Module copy = deserialize(serialize(module));  // graph edits need a module that has not run
  for (const auto& p : parts.attention) {
    if (p.cut.kv_heads_kept == p.cut.kv_heads) continue;
    torch::jit::Module m = submodule_at(copy, p.cut.module);
    cut_attention(m, p, l2);
  }
  for (const auto& p : parts.mlp) {
    if (p.cut.kept == p.cut.width) continue;
    torch::jit::Module m = submodule_at(copy, p.cut.module);
    cut_mlp(m, p, l2);
  }
  return serialize(copy);
}

}  // namespace lite::prune
