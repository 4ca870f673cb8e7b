#pragma once
// The per-simulator object store every policy is built on: an open-addressing hash index from a
// 64-bit object key to a 32-bit node index, a pooled vector of policy-defined nodes with a free list,
// and intrusive doubly-linked lists threaded through the nodes by 32-bit indices.
//
// Why not std::unordered_map + std::list: one request costs one probe into a flat array of 8-byte
// slots (hash fingerprint + node index, linear probing, backward-shift deletion, no tombstones) and
// list moves touch only the nodes involved. Memory is ~8 bytes per slot at <= 5/8 load plus the node
// itself (24-32 bytes), and grows with the objects the simulated cache holds, never with trace length.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "lite/cache/huge_pages.hpp"
#include "lite/cache/prefetch.hpp"

namespace lite::cache::detail {

constexpr uint32_t kNil = 0xffffffffu;


// murmur3's 64-bit finalizer: a bijection, so distinct keys keep distinct hashes. Computed once per
// request by the engine; the low 32 bits pick a slot, the high bits drive SHARDS sampling.
inline uint64_t hash_key(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}

// SHARDS sampling keeps a key iff hash_key(key) < threshold, i.e. with probability rate = threshold / 2^64;
// UINT64_MAX stands for "keep everything".
constexpr double kTwo64 = 18446744073709551616.0;
inline uint64_t threshold_for(double rate) { return rate >= 1.0 ? UINT64_MAX : static_cast<uint64_t>(rate * kTwo64); }
inline double rate_for(uint64_t threshold) { return threshold == UINT64_MAX ? 1.0 : double(threshold) / kTwo64; }

// Node must have a `uint64_t key` member and be default-constructible.
template <class Node>
class ObjectTable {
 public:
  explicit ObjectTable(size_t expected_objects = 1024) {
    size_t slots = 16;
    while (slots * 5 / 8 < expected_objects) slots <<= 1;
    slots_.assign(slots, 0);
    mask_ = slots - 1;
    nodes_.reserve(expected_objects);
  }

  // Node index of `key`, or kNil.
  uint32_t find(uint64_t key, uint64_t hash) const {
    const uint32_t h32 = static_cast<uint32_t>(hash);
    size_t i = h32 & mask_;
    while (true) {
      const uint64_t s = slots_[i];
      if (s == 0) return kNil;
      if (static_cast<uint32_t>(s >> 32) == h32) {
        const uint32_t n = static_cast<uint32_t>(s) - 1;
        if (nodes_[n].key == key) return n;
      }
      i = (i + 1) & mask_;
    }
  }

  // Adds `key` (which must be absent) and returns its new node, default-initialized except for key.
  uint32_t insert(uint64_t key, uint64_t hash) {
    if ((live_ + 1) * 8 > slots_.size() * 5) grow();
    uint32_t n;
    if (!free_.empty()) {
      n = free_.back();
      free_.pop_back();
      nodes_[n] = Node();
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n].key = key;
    place(static_cast<uint32_t>(hash), n);
    ++live_;
    return n;
  }

  // Removes node `n` from the index and returns it to the free list.
  void erase(uint32_t n) {
    const uint32_t h32 = static_cast<uint32_t>(hash_key(nodes_[n].key));
    size_t i = h32 & mask_;
    while (static_cast<uint32_t>(slots_[i]) != n + 1) i = (i + 1) & mask_;
    // Backward-shift deletion keeps every probe chain unbroken without tombstones.
    size_t j = i;
    while (true) {
      j = (j + 1) & mask_;
      const uint64_t s = slots_[j];
      if (s == 0) break;
      const size_t home = static_cast<uint32_t>(s >> 32) & mask_;
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = s;
        i = j;
      }
    }
    slots_[i] = 0;
    free_.push_back(n);
    --live_;
  }

  // Moves live node `from` into node `to`, the node erased last (so still on top of the free list);
  // the key's slot follows it and `from` is freed instead. A policy that erases a node and moves its
  // last one into the gap keeps its live nodes at 0..size()-1, an array it can sample from directly.
  void move(uint32_t from, uint32_t to) {
    const uint32_t h32 = static_cast<uint32_t>(hash_key(nodes_[from].key));
    size_t i = h32 & mask_;
    while (static_cast<uint32_t>(slots_[i]) != from + 1) i = (i + 1) & mask_;
    slots_[i] = (static_cast<uint64_t>(h32) << 32) | (static_cast<uint64_t>(to) + 1);
    nodes_[to] = nodes_[from];
    free_.back() = from;
  }

  void prefetch(uint64_t hash) const { prefetch_line(&slots_[static_cast<uint32_t>(hash) & mask_]); }
  // The second stage, a few requests after prefetch(hash) brought the slot in: fetch the node its home
  // slot points to (a key found past its home slot is left to the lookup itself).
  void prefetch_node(uint64_t hash) const {
    const uint64_t s = slots_[static_cast<uint32_t>(hash) & mask_];
    if (s != 0 && static_cast<uint32_t>(s >> 32) == static_cast<uint32_t>(hash))
      prefetch_line(&nodes_[static_cast<uint32_t>(s) - 1]);
  }

  // The third stage, a few requests after prefetch_node: the node's list neighbours, which a hit that
  // moves the node to a list's head relinks (a stale guess costs a wasted prefetch, never a result).
  void prefetch_links(uint64_t hash) const {
    const uint64_t s = slots_[static_cast<uint32_t>(hash) & mask_];
    if (s == 0 || static_cast<uint32_t>(s >> 32) != static_cast<uint32_t>(hash)) return;
    const Node& node = nodes_[static_cast<uint32_t>(s) - 1];
    if (node.prev != kNil) prefetch_line(&nodes_[node.prev]);
    if (node.next != kNil) prefetch_line(&nodes_[node.next]);
  }
  // The next eviction from a list's tail reads the tail's older neighbour (to unlink the tail) and, when
  // it erases the object, the tail key's index slot: fetched once the tail is known, requests earlier.
  void prefetch_victim(uint32_t tail, bool slot) const {
    if (tail == kNil) return;
    const Node& node = nodes_[tail];
    if (node.prev != kNil) prefetch_line(&nodes_[node.prev]);
    if (slot) prefetch(hash_key(node.key));
  }

  Node& operator[](uint32_t n) { return nodes_[n]; }
  const Node& operator[](uint32_t n) const { return nodes_[n]; }
  size_t size() const { return live_; }
  size_t memory_bytes() const {
    return slots_.capacity() * sizeof(uint64_t) + nodes_.capacity() * sizeof(Node) +
           free_.capacity() * sizeof(uint32_t);
  }

 private:
  void place(uint32_t h32, uint32_t n) {
    size_t i = h32 & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = (static_cast<uint64_t>(h32) << 32) | (static_cast<uint64_t>(n) + 1);
  }

  void grow() {
    BigVector<uint64_t> old;
    old.swap(slots_);
    slots_.assign(old.size() * 2, 0);
    mask_ = slots_.size() - 1;
    for (uint64_t s : old)
      if (s != 0) place(static_cast<uint32_t>(s >> 32), static_cast<uint32_t>(s) - 1);
  }

  BigVector<uint64_t> slots_;  // (hash32 << 32) | (node + 1); 0 = empty
  size_t mask_ = 0;
  BigVector<Node> nodes_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

// An intrusive doubly-linked list over nodes with `prev`/`next` members. As in libCacheSim, `head` is
// the most recently inserted end and `tail` the oldest (the eviction end of FIFO and LRU).
struct List {
  uint32_t head = kNil, tail = kNil;
  uint64_t bytes = 0;

  template <class T>
  void push_front(T& t, uint32_t n, uint64_t size) {
    auto& node = t[n];
    node.prev = kNil;
    node.next = head;
    if (head != kNil) t[head].prev = n;
    head = n;
    if (tail == kNil) tail = n;
    bytes += size;
  }

  template <class T>
  void push_back(T& t, uint32_t n, uint64_t size) {
    auto& node = t[n];
    node.next = kNil;
    node.prev = tail;
    if (tail != kNil) t[tail].next = n;
    tail = n;
    if (head == kNil) head = n;
    bytes += size;
  }

  template <class T>
  void remove(T& t, uint32_t n, uint64_t size) {
    auto& node = t[n];
    if (node.prev != kNil) t[node.prev].next = node.next;
    else head = node.next;
    if (node.next != kNil) t[node.next].prev = node.prev;
    else tail = node.prev;
    node.prev = node.next = kNil;
    bytes -= size;
  }

  template <class T>
  void move_to_front(T& t, uint32_t n) {
    if (head == n) return;
    auto& node = t[n];
    // unlink (n is not head, so prev != kNil)
    t[node.prev].next = node.next;
    if (node.next != kNil) t[node.next].prev = node.prev;
    else tail = node.prev;
    node.prev = kNil;
    node.next = head;
    t[head].prev = n;
    head = n;
  }
};

}  // namespace lite::cache::detail
