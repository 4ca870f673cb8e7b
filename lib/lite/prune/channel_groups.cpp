// Channel spaces in a union-find with path halving, and their groups (see channel_groups.hpp).
#include "lite/prune/channel_groups.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace lite::prune::detail {

int ChannelSpaces::add(int64_t size, const std::string& blocked) {
  spaces_.push_back({int(spaces_.size()), size, blocked, {}, {}, {}, {}, 1, 1});
  return int(spaces_.size()) - 1;
}

int ChannelSpaces::find(int s) {
  while (spaces_[s].parent != s) s = spaces_[s].parent = spaces_[spaces_[s].parent].parent;
  return s;
}

void ChannelSpaces::block(int s, const std::string& why) {
  auto& r = root(s);
  if (r.blocked.empty()) r.blocked = why;
}

void ChannelSpaces::unite(int a, int b, const std::string& where) {
  a = find(a), b = find(b);
  if (a == b) return;
  if (a > b) std::swap(a, b);  // the older space stays the root (its producer names the group)
  auto& ra = spaces_[a];
  auto& rb = spaces_[b];
  if (ra.size && rb.size && ra.size != rb.size) {
    std::string why = where + " joins " + std::to_string(ra.size) + " and " + std::to_string(rb.size) + " channels";
    block(a, why), block(b, why);
    return;
  }
  if (ra.blocks > 1 && rb.blocks > 1 && ra.blocks != rb.blocks) {
    const std::string why = where + " joins channels of grouped convolutions with " + std::to_string(ra.blocks) +
                            " and " + std::to_string(rb.blocks) + " groups";
    block(a, why), block(b, why);
    return;
  }
  rb.parent = a;
  ra.blocks = std::max(ra.blocks, rb.blocks);
  if (!ra.size) ra.size = rb.size;
  if (ra.blocked.empty()) ra.blocked = rb.blocked;
  ra.slices.insert(ra.slices.end(), rb.slices.begin(), rb.slices.end());
  ra.depthwise.insert(ra.depthwise.end(), rb.depthwise.begin(), rb.depthwise.end());
  ra.layer_norms.insert(ra.layer_norms.end(), rb.layer_norms.begin(), rb.layer_norms.end());
  ra.counts.insert(ra.counts.end(), rb.counts.begin(), rb.counts.end());
  ra.multiple_of = std::lcm(ra.multiple_of, rb.multiple_of);
}

void ChannelSpaces::unite_shared_slices() {
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t>, int> seen;
  for (size_t s = 0; s < spaces_.size(); ++s) {
    if (find(int(s)) != int(s)) continue;
    for (const auto& sl : std::vector<TensorSlice>(spaces_[s].slices)) {
      auto key = std::make_tuple(sl.path(), sl.dim, sl.offset, sl.factor);
      auto [it, fresh] = seen.emplace(key, int(s));
      if (!fresh) unite(it->second, int(s), "a module called twice");
    }
  }
}

namespace {

// The group's slices without repeats, its layers and name from them; blocked when a slice reaches past its tensor.
void gather_slices(const torch::jit::Module& module, const Space& sp, ChannelGroup& group) {
  std::set<std::string> seen_slices;
  for (const auto& sl : sp.slices) {
    std::string key = sl.path() + "/" + std::to_string(sl.dim) + "/" + std::to_string(sl.offset) + "/" +
                      std::to_string(sl.factor) + "/" + std::to_string(sl.fold);
    if (!seen_slices.insert(key).second) continue;
    group.slices.push_back(sl);
    if (sl.role != "consumer" && std::find(group.layers.begin(), group.layers.end(), sl.module) == group.layers.end())
      group.layers.push_back(sl.module);
    if (sl.role == "producer" && group.name.empty()) group.name = sl.module;
    auto t = tensor_at(module, sl.module, sl.attr);
    if (group.blocked.empty() && (sl.fold ? sl.fold : sl.offset + sp.size) * sl.factor > t.size(sl.dim))
      group.blocked = "shape mismatch at " + sl.path();
  }
}

}  // namespace

std::vector<ChannelGroup> ChannelSpaces::groups(const torch::jit::Module& module) {
  std::vector<ChannelGroup> groups;
  for (size_t s = 0; s < spaces_.size(); ++s) {
    if (find(int(s)) != int(s)) continue;
    const Space& sp = spaces_[s];
    ChannelGroup group;
    group.channels = sp.size;
    group.blocked = sp.blocked;
    gather_slices(module, sp, group);
    if (group.name.empty()) continue;  // no layer produces these channels (model input)
    std::set<std::string> dw(sp.depthwise.begin(), sp.depthwise.end());
    group.depthwise.assign(dw.begin(), dw.end());
    std::set<std::string> norms(sp.layer_norms.begin(), sp.layer_norms.end());
    group.layer_norms.assign(norms.begin(), norms.end());
    std::set<std::pair<std::string, std::string>> seen_counts;
    for (const auto& c : sp.counts)
      if (seen_counts.insert({c.module, c.name}).second) group.counts.push_back(c);
    group.multiple_of = std::lcm(sp.multiple_of, sp.blocks);
    group.blocks = sp.blocks;
    if (group.blocked.empty() && sp.size % sp.multiple_of)
      group.blocked = std::to_string(sp.size) + " channels are not a multiple of " + std::to_string(sp.multiple_of);
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace lite::prune::detail
