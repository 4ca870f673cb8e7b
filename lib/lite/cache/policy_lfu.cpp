// LFU: evict the least frequently used object; among equals, the one that reached that frequency
// first (FIFO within a frequency). Frequency starts at 1 on insertion and is forgotten on eviction.
// Follows libCacheSim's LFU.c: objects sit in per-frequency buckets, a hit appends the object to the
// tail of bucket freq+1, eviction takes the head of the lowest non-empty bucket. Here the buckets are
// a linked list of the non-empty frequencies (O(1) per request, memory bounded by cached objects).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct LfuNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;  // within the frequency bucket
  uint32_t size = 0;
  uint32_t bucket = kNil;
};

struct Bucket {
  uint64_t freq = 0;
  uint32_t prev = kNil, next = kNil;  // bucket list, ascending frequency
  List objects;                       // head = oldest in this bucket (evicted first)
};

class Lfu : public PolicyBase<LfuNode> {
 public:
  using PolicyBase::PolicyBase;

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    const uint32_t b = table_[n].bucket;
    const uint64_t f = buckets_[b].freq + 1;
    uint32_t target = buckets_[b].next;
    if (target == kNil || buckets_[target].freq != f) target = new_bucket_after(b, f);
    buckets_[b].objects.remove(table_, n, table_[n].size);
    append(target, n);
    if (buckets_[b].objects.head == kNil) drop_bucket(b);
    return true;
  }
  void insert(const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    table_[n].size = a.size;
    uint32_t b = first_;
    if (b == kNil || buckets_[b].freq != 1) b = new_bucket_after(kNil, 1);
    append(b, n);
    occupied_ += a.size;
  }
  void evict(const Access&) {
    const uint32_t b = first_;
    const uint32_t n = buckets_[b].objects.head;
    occupied_ -= table_[n].size;
    drop(buckets_[b].objects, n);
    if (buckets_[b].objects.head == kNil) drop_bucket(b);
  }
  uint64_t occupied() const { return occupied_; }
  size_t memory_bytes() const { return PolicyBase::memory_bytes() + buckets_.capacity() * sizeof(Bucket); }

 private:
  void append(uint32_t b, uint32_t n) {
    buckets_[b].objects.push_back(table_, n, table_[n].size);
    table_[n].bucket = b;
  }
  // Creates a bucket for frequency f right after `after` (kNil = at the front).
  uint32_t new_bucket_after(uint32_t after, uint64_t f) {
    uint32_t b;
    if (!free_buckets_.empty()) {
      b = free_buckets_.back();
      free_buckets_.pop_back();
      buckets_[b] = Bucket();
    } else {
      b = static_cast<uint32_t>(buckets_.size());
      buckets_.emplace_back();
    }
    buckets_[b].freq = f;
    const uint32_t next = after == kNil ? first_ : buckets_[after].next;
    buckets_[b].prev = after;
    buckets_[b].next = next;
    if (after == kNil) first_ = b;
    else buckets_[after].next = b;
    if (next != kNil) buckets_[next].prev = b;
    return b;
  }
  void drop_bucket(uint32_t b) {
    const uint32_t prev = buckets_[b].prev, next = buckets_[b].next;
    if (prev == kNil) first_ = next;
    else buckets_[prev].next = next;
    if (next != kNil) buckets_[next].prev = prev;
    free_buckets_.push_back(b);
  }

  uint64_t occupied_ = 0;
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_buckets_;
  uint32_t first_ = kNil;  // lowest frequency
};

}  // namespace

std::unique_ptr<Simulator> make_lfu(const PolicyConfig& c) { return make_simulator<Lfu>(c); }

}  // namespace lite::cache::detail
