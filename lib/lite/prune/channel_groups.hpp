#pragma once
// The union-find core of the dependency analysis: channel spaces that rules open, tie together and block,
// and the channel groups they become. Rules (rules_*.cpp) only say what an op does to its values' channels;
// this file owns what uniting two spaces means (sizes must agree, grouped-convolution blocks too, the older
// space stays the root so its producer names the group) and how a root space becomes a ChannelGroup.
#include <torch/script.h>

#include <string>
#include <vector>

#include "lite/prune/prune_internal.hpp"

namespace lite::prune::detail {

// One set of channel indices that ops read and write together.
struct Space {
  int parent;
  int64_t size;  // 0 when unknown (model inputs, outputs of unknown ops)
  std::string blocked;
  std::vector<TensorSlice> slices;
  std::vector<std::string> depthwise;
  std::vector<std::string> layer_norms;
  std::vector<CountAttribute> counts;
  int64_t multiple_of = 1;
  int64_t blocks = 1;
};

class ChannelSpaces {
 public:
  // A new space of `size` channels (0 when unknown), blocked with `blocked` when not empty; its index.
  int add(int64_t size, const std::string& blocked = {});
  int find(int s);
  // The root of `s`'s set. The reference lasts until the next add().
  Space& root(int s) { return spaces_[size_t(find(s))]; }
  // Marks `s`'s set unsafe to prune; the first reason stays.
  void block(int s, const std::string& why);
  // Joins the sets of `a` and `b` (`where` names the op for the reason when they cannot be joined: both
  // are blocked instead).
  void unite(int a, int b, const std::string& where);
  // A weight used by two calls (a module called twice) ties the spaces it appears in.
  void unite_shared_slices();
  // Every root space with a producer, as a group (slices deduplicated, blocked on a shape mismatch or a
  // size that is not a multiple of what it must stay a multiple of).
  std::vector<ChannelGroup> groups(const torch::jit::Module& module);

 private:
  std::vector<Space> spaces_;
};

}  // namespace lite::prune::detail
