#pragma once
// An intrusive doubly-linked list over block ids (arrays, no allocation per block), the cached-block state lru,
// fifo and radix-lru keep in one, and the queue the block-level lru and fifo share. Internal to the prefix mode.
#include <cstdint>
#include <vector>

#include "lite/cache/huge_pages.hpp"
#include "lite/cache/prefix/block_cache.hpp"

namespace lite::cache::prefix {

class BlockList {
 public:
  explicit BlockList(size_t blocks) : prev_(blocks, kNoBlock), next_(blocks, kNoBlock) {}

  uint32_t tail() const { return tail_; }
  void push_front(uint32_t b) {
    prev_[b] = kNoBlock;
    next_[b] = head_;
    if (head_ != kNoBlock) prev_[head_] = b;
    head_ = b;
    if (tail_ == kNoBlock) tail_ = b;
  }
  void remove(uint32_t b) {
    if (prev_[b] != kNoBlock) next_[prev_[b]] = next_[b];
    else head_ = next_[b];
    if (next_[b] != kNoBlock) prev_[next_[b]] = prev_[b];
    else tail_ = prev_[b];
  }
  void move_to_front(uint32_t b) {
    if (head_ == b) return;
    remove(b);
    push_front(b);
  }
  // Puts b (not in the list) right behind `anchor`, toward the tail; anchor kNoBlock: at the front.
  void insert_after(uint32_t anchor, uint32_t b) {
    if (anchor == kNoBlock) return push_front(b);
    prev_[b] = anchor;
    next_[b] = next_[anchor];
    if (next_[anchor] != kNoBlock) prev_[next_[anchor]] = b;
    else tail_ = b;
    next_[anchor] = b;
  }
  // insert_after() for b in the list; nothing to do when b is there already (a chain used again in order).
  void move_after(uint32_t anchor, uint32_t b) {
    if (anchor == kNoBlock ? head_ == b : prev_[b] == anchor) return;
    remove(b);
    insert_after(anchor, b);
  }

 private:
  detail::BigVector<uint32_t> prev_, next_;  // one entry per distinct block of the trace: huge pages
  uint32_t head_ = kNoBlock, tail_ = kNoBlock;
};

// What lru, fifo and radix-lru share: the cached blocks held in one BlockList whose back leaves first. A policy
// places an admitted block in `order_` itself (at the front, or behind its parent).
class ListedBlocks : public BlockCache {
 public:
  bool cached(uint32_t b) const override { return in_[b] != 0; }
  uint64_t occupied() const override { return occupied_; }

 protected:
  explicit ListedBlocks(const CacheSetup& s)
      : trace_(*s.trace),
        capacity_(s.capacity_blocks),
        in_(trace_.blocks(), 0),
        order_(trace_.blocks()),
        evicted_(s.evicted) {}
  void admit(uint32_t b) {
    in_[b] = 1;
    ++occupied_;
  }
  void evict_back() {
    const uint32_t victim = order_.tail();
    order_.remove(victim);
    in_[victim] = 0;
    --occupied_;
    if (evicted_) evicted_->push_back(victim);
  }

  const BlockTrace& trace_;
  const uint64_t capacity_;
  uint64_t occupied_ = 0;
  detail::BigVector<uint8_t> in_;
  BlockList order_;
  std::vector<uint32_t>* evicted_;
};

// lru and fifo: one queue of blocks, a request's missing blocks entering at the front tail first and the back
// leaving; they differ only in whether a hit moves the block to the front.
template <bool kHitMovesToFront>
class BlockQueue final : public ListedBlocks {
 public:
  explicit BlockQueue(const CacheSetup& s) : ListedBlocks(s) {}

  uint32_t serve(size_t r) override {
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return in_[b] != 0; });
    const uint32_t* blocks = trace_.blocks_of(r);
    for (uint32_t i = trace_.block_count(r); i-- > 0;) {
      const uint32_t b = blocks[i];
      if (in_[b]) {
        if (kHitMovesToFront) order_.move_to_front(b);
        continue;
      }
      admit(b);
      order_.push_front(b);
      if (occupied_ > capacity_) evict_back();
    }
    return k;
  }
};

}  // namespace lite::cache::prefix
