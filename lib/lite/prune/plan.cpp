// Planning: which channels of which group go. Per group (the default), each group loses floor(ratio * C)
// channels, its ratio being --ratio or the last --ratio GLOB=R whose glob matches one of its layers; with
// --global, every channel of every prunable group is ranked together on its score divided by its group's
// mean score (so groups with large weights do not win by scale alone), and the lowest go until the ratio
// of all channels is reached, each group keeping at least global_floor of its channels. --round-to then
// rounds each kept count up to a multiple (and to one of num_heads where the group passes through attention, of
// the groups where it passes a grouped convolution). Within a group the lowest-scoring channels go; through a
// grouped convolution, the lowest-scoring local indices summed over its blocks, from every block.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/prune/plan_internal.hpp"

namespace lite::prune {

namespace {

bool any_layer_matches(const std::vector<std::string>& layers, const std::string& glob) {
  return std::any_of(layers.begin(), layers.end(), [&](const std::string& l) { return glob_match(glob, l); });
}

int64_t round_kept(int64_t kept, int64_t channels, int64_t round_to) {
  kept = std::max<int64_t>(kept, 1);
  if (round_to > 1) kept = (kept + round_to - 1) / round_to * round_to;
  return std::min(kept, channels);
}

std::vector<int64_t> least_important(const torch::Tensor& scores, int64_t n) {
  auto order = scores.argsort();  // ascending: least important first (stable order on ties by index)
  torch::Tensor gone = std::get<0>(order.narrow(0, 0, n).sort()).contiguous();
  return std::vector<int64_t>(gone.data_ptr<int64_t>(), gone.data_ptr<int64_t>() + n);
}

// Through a grouped convolution: the local indices whose scores summed over the blocks are lowest, taken from
// every block (n is a multiple of blocks: kept is rounded to one).
std::vector<int64_t> least_important_by_block(const torch::Tensor& scores, int64_t blocks, int64_t n) {
  const int64_t size = scores.size(0) / blocks;
  std::vector<int64_t> local = least_important(scores.reshape({blocks, size}).sum(0), n / blocks), gone;
  for (int64_t j = 0; j < blocks; ++j)
    for (int64_t l : local) gone.push_back(j * size + l);
  return gone;
}

}  // namespace

std::vector<GroupPlan> describe_groups(const DependencyGraph& graph, const PruneOptions& o,
                                       std::vector<report::Finding>& findings) {
  std::vector<GroupPlan> plans;
  std::vector<std::string> all_layers;
  for (const auto& g : graph.groups) {
    GroupPlan p;
    p.name = g.name;
    p.layers = g.layers;
    p.channels = g.channels;
    p.kept = g.channels;
    p.tensors = int64_t(g.slices.size());
    p.multiple_of = g.multiple_of;
    p.blocks = g.blocks;
    p.ratio = o.ratio.value_or(0);
    for (const auto& lr : o.layer_ratios)
      if (any_layer_matches(g.layers, lr.glob)) p.ratio = lr.ratio;
    p.skipped = g.blocked;
    if (p.skipped.empty() && g.channels < 2) p.skipped = "a single channel";
    for (const auto& glob : o.exclude)
      if (p.skipped.empty() && any_layer_matches(g.layers, glob)) p.skipped = "excluded by '" + glob + "'";
    p.prunable = p.skipped.empty();
    all_layers.insert(all_layers.end(), g.layers.begin(), g.layers.end());
    plans.push_back(p);
  }
  for (const auto& w : graph.weights) all_layers.push_back(w.module);
  auto warn_unmatched = [&](const std::string& glob, const char* what) {
    if (!any_layer_matches(all_layers, glob))
      findings.push_back({"warning", std::string(what) + " '" + glob + "' matches no layer", "",
                          "layer names look like " + (all_layers.empty() ? std::string("features.0") : all_layers.front()) +
                              "; see them with {dry_run}"});
  };
  for (const auto& glob : o.exclude) warn_unmatched(glob, "exclude glob");
  for (const auto& lr : o.layer_ratios) warn_unmatched(lr.glob, "ratio glob");
  return plans;
}

Removal choose_channels(const std::vector<torch::Tensor>& scores, std::vector<GroupPlan>& plans, const PruneOptions& o) {
  std::vector<int64_t> remove(plans.size(), 0);
  if (o.global) {
    struct Entry {
      double score;
      size_t group;
    };
    std::vector<Entry> pool;
    int64_t total = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
      if (!plans[i].prunable) continue;
      auto s = scores[i].to(torch::kDouble);
      double mean = s.mean().item<double>();
      auto normalized = mean > 0 ? s / mean : torch::ones_like(s);
      auto acc = normalized.accessor<double, 1>();
      for (int64_t c = 0; c < acc.size(0); ++c) pool.push_back({acc[c], i});
      total += plans[i].channels;
    }
    std::stable_sort(pool.begin(), pool.end(), [](const Entry& a, const Entry& b) { return a.score < b.score; });
    int64_t target = int64_t(std::floor(o.ratio.value_or(0) * double(total))), removed = 0;
    for (const auto& e : pool) {
      if (removed >= target) break;
      const auto& p = plans[e.group];
      int64_t floor_keep = std::max<int64_t>(1, int64_t(std::ceil(o.global_floor * double(p.channels))));
      if (p.channels - remove[e.group] > floor_keep) ++remove[e.group], ++removed;
    }
  } else {
    for (size_t i = 0; i < plans.size(); ++i)
      if (plans[i].prunable) remove[i] = int64_t(std::floor(plans[i].ratio * double(plans[i].channels)));
  }
  Removal removal;
  for (size_t i = 0; i < plans.size(); ++i) {
    auto& p = plans[i];
    if (!p.prunable) continue;
    p.kept = round_kept(p.channels - remove[i], p.channels, std::lcm(o.round_to, p.multiple_of));
    if (o.global) p.ratio = 1.0 - double(p.kept) / double(p.channels);
    int64_t n = p.channels - p.kept;
    if (n == 0) continue;
    removal[i] = p.blocks > 1 ? least_important_by_block(scores[i], p.blocks, n) : least_important(scores[i], n);
  }
  return removal;
}

uint64_t planned_parameter_count(const torch::jit::Module& module, const DependencyGraph& graph, const Removal& removal) {
  auto shapes = planned_shapes(module, graph, removal);
  uint64_t n = 0;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    auto it = shapes.find(p.name);
    if (it == shapes.end()) {
      n += uint64_t(p.value.numel());
    } else {
      uint64_t e = 1;
      for (auto d : it->second) e *= uint64_t(d);
      n += e;
    }
  }
  return n;
}

}  // namespace lite::prune
