#pragma once
// An intrusive doubly-linked list over block ids (arrays, no allocation per block): the order of the block-level
// lru and fifo. Internal to the prefix mode.
#include <cstdint>
#include <vector>

#include "lite/cache/prefix/block_trace.hpp"

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

 private:
  std::vector<uint32_t> prev_, next_;
  uint32_t head_ = kNoBlock, tail_ = kNoBlock;
};

}  // namespace lite::cache::prefix
