#pragma once
// The prefix-closed cache the radix-* policies share: the cached blocks always form a tree closed under
// prefixes (a block is cached only with its parent), and only leaves are evicted, the leaf with the smallest key
// first, as SGLang's RadixCache evicts leaves by last access. A request first touches its cached prefix, then
// caches its other blocks head first; the block it is extending is locked (a running request's path), so when
// nothing else can go the rest of the prompt is not cached. The Rule gives a block's key when it is used and
// hears of each eviction. Internal to the prefix mode.
#include <vector>

#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/indexed_heap.hpp"

namespace lite::cache::prefix {

template <class Rule>
class RadixCache final : public BlockCache {
 public:
  explicit RadixCache(const CacheSetup& s)
      : trace_(*s.trace),
        capacity_(s.capacity_blocks),
        in_(trace_.blocks(), 0),
        children_(trace_.blocks(), 0),
        leaves_(trace_.blocks()),
        rule_(s),
        evicted_(s.evicted) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return in_[b] != 0; });
    const uint32_t* blocks = trace_.blocks_of(r);
    const uint64_t ref0 = trace_.first_ref[r];
    for (uint32_t i = 0; i < k; ++i) leaves_.set_key(blocks[i], rule_.use(blocks[i], i, ref0 + i, r));
    const uint32_t n = trace_.block_count(r);
    for (uint32_t i = k; i < n; ++i) {
      const uint32_t parent = i ? blocks[i - 1] : kNoBlock;
      if (occupied_ == capacity_ && !evict_leaf(parent)) break;
      insert(blocks[i], parent, rule_.use(blocks[i], i, ref0 + i, r));
    }
    return k;
  }
  bool cached(uint32_t b) const override { return in_[b] != 0; }
  uint64_t occupied() const override { return occupied_; }

 private:
  void insert(uint32_t b, uint32_t parent, HeapKey key) {
    in_[b] = 1;
    ++occupied_;
    leaves_.set_key(b, key);
    leaves_.push(b);
    if (parent != kNoBlock && children_[parent]++ == 0) leaves_.remove(parent);
  }
  // Evicts the leaf with the smallest key other than `locked`; false when there is none.
  bool evict_leaf(uint32_t locked) {
    if (leaves_.empty()) return false;
    uint32_t victim = leaves_.top();
    if (victim == locked) {
      leaves_.remove(locked);
      const bool other = !leaves_.empty();
      if (other) victim = leaves_.top();
      leaves_.push(locked);
      if (!other) return false;
    }
    rule_.evicted(victim, leaves_.key(victim));
    leaves_.remove(victim);
    in_[victim] = 0;
    --occupied_;
    if (evicted_) evicted_->push_back(victim);
    const uint32_t parent = trace_.parent[victim];
    if (parent != kNoBlock && --children_[parent] == 0) leaves_.push(parent);
    return true;
  }

  const BlockTrace& trace_;
  uint64_t capacity_, occupied_ = 0;
  std::vector<uint8_t> in_;
  std::vector<uint32_t> children_;  // cached children per block: a cached block with none is a leaf
  IndexedHeap leaves_;              // keys of every block; the heap holds the cached leaves
  Rule rule_;
  std::vector<uint32_t>* evicted_;
};

}  // namespace lite::cache::prefix
