#pragma once
// A binary min-heap of block ids with each block's position kept, so a key can change in place (O(log n)): the
// eviction order of lfu and of the radix policies' leaves. Internal to the prefix mode.
#include <cstdint>
#include <utility>
#include <vector>

namespace lite::cache::prefix {

// Smaller is evicted first; `tie` orders equal primaries (older first).
struct HeapKey {
  double primary = 0;
  uint64_t tie = 0;
  bool operator<(const HeapKey& o) const { return primary < o.primary || (primary == o.primary && tie < o.tie); }
};

class IndexedHeap {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;

  explicit IndexedHeap(size_t blocks) : pos_(blocks, kAbsent), key_(blocks) {}

  bool contains(uint32_t b) const { return pos_[b] != kAbsent; }
  bool empty() const { return heap_.empty(); }
  uint32_t top() const { return heap_.front(); }
  const HeapKey& key(uint32_t b) const { return key_[b]; }
  // Stores b's key; re-orders b when it is in the heap.
  void set_key(uint32_t b, HeapKey k) {
    const bool up = k < key_[b];
    key_[b] = k;
    if (!contains(b)) return;
    if (up) sift_up(pos_[b]);
    else sift_down(pos_[b]);
  }
  void push(uint32_t b) {
    pos_[b] = uint32_t(heap_.size());
    heap_.push_back(b);
    sift_up(pos_[b]);
  }
  void remove(uint32_t b) {
    const uint32_t i = pos_[b];
    const uint32_t last = heap_.back();
    heap_.pop_back();
    pos_[b] = kAbsent;
    if (last == b) return;
    heap_[i] = last;
    pos_[last] = i;
    sift_up(i);
    sift_down(pos_[last]);
  }

 private:
  void place(uint32_t i, uint32_t b) {
    heap_[i] = b;
    pos_[b] = i;
  }
  void sift_up(uint32_t i) {
    const uint32_t b = heap_[i];
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!(key_[b] < key_[heap_[parent]])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, b);
  }
  void sift_down(uint32_t i) {
    const uint32_t b = heap_[i];
    const uint32_t n = uint32_t(heap_.size());
    for (;;) {
      uint32_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && key_[heap_[child + 1]] < key_[heap_[child]]) ++child;
      if (!(key_[heap_[child]] < key_[b])) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, b);
  }

  std::vector<uint32_t> heap_, pos_;
  std::vector<HeapKey> key_;
};

}  // namespace lite::cache::prefix
