// LeCaR (Vietri et al., HotStorage'18): learning cache replacement. Two experts, LRU and LFU, each
// propose a victim; one is drawn with probability w_lru / w_lfu. An evicted object is remembered in
// the ghost history of the expert that chose it (each history up to half the capacity). A miss that
// hits a ghost means that expert was wrong: its weight is multiplied by exp(-lr * dr^t), t the
// requests since the eviction (lr = 0.45, dr = 0.005^(1/capacity)), and the weights renormalised.
//
// Follows libCacheSim's LeCaR.c exactly, randomness included: its generator is Knuth's MMIX LCG
// (state = 6364136223846793005 * state + 1442695040888963407, seeded 0 at the start of every
// simulation), a draw is (next % 100) / 100 against w_lru; no draw when both experts pick the same
// object (then no ghost is kept, and the evicted key is forgotten only when it is requested again).
// LFU is frequency buckets, FIFO within a bucket, with libCacheSim's lazy minimum-frequency search. Only
// non-empty buckets are kept: libCacheSim keeps one per frequency ever reached, and a hot object's count
// grows with the trace, so memory grew with the requests (437 MB at 100M Zipf requests, 14 MB for LRU).
// The buckets of frequencies below 4096 are a fixed flat array; the higher ones (few buckets, but the
// hottest objects', so 40% of the hits on a Zipf(1) trace) a small open-addressing map: a hit moves an
// object between buckets with no allocation.
#include <cmath>
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

enum : int8_t { kNoExpert = -1, kNone = 0, kLruExpert = 1, kLfuExpert = 2 };

struct LecarNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;          // recency list, or the ghost list of its expert
  uint32_t lfu_prev = kNil, lfu_next = kNil;  // within its frequency bucket
  uint32_t size = 0;
  uint64_t freq = 0;
  int64_t eviction_vtime = 0;
  int8_t expert = kNone;
  bool ghost = false;
};

struct FreqBucket {
  uint32_t first = kNil, last = kNil;
  uint64_t n_obj = 0;
};

// frequency -> bucket for the high frequencies: linear probing, backward-shift deletion, doubled at
// 1/2 load. Frequency 0 marks an empty slot (every object has frequency >= 1).
class HighBuckets {
 public:
  HighBuckets() : slots_(16) {}
  FreqBucket* find(uint64_t f) {
    Slot& s = slots_[probe(f)];
    return s.freq == f ? &s.bucket : nullptr;
  }
  const FreqBucket* find(uint64_t f) const { return const_cast<HighBuckets*>(this)->find(f); }
  FreqBucket& at(uint64_t f) {
    size_t i = probe(f);
    if (slots_[i].freq != f) {
      if ((live_ + 1) * 2 > slots_.size()) {
        grow();
        i = probe(f);
      }
      slots_[i] = Slot{f, FreqBucket{}};
      ++live_;
    }
    return slots_[i].bucket;
  }
  void erase(uint64_t f) {
    size_t i = probe(f);
    if (slots_[i].freq != f) return;
    const size_t mask = slots_.size() - 1;
    for (size_t j = (i + 1) & mask; slots_[j].freq != 0; j = (j + 1) & mask) {
      const size_t home = home_of(slots_[j].freq);
      if (((j - home) & mask) >= ((j - i) & mask)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --live_;
  }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  struct Slot {
    uint64_t freq = 0;
    FreqBucket bucket;
  };
  size_t home_of(uint64_t f) const { return (f * 0x9E3779B97F4A7C15ULL >> 32) & (slots_.size() - 1); }
  size_t probe(uint64_t f) const {
    const size_t mask = slots_.size() - 1;
    size_t i = home_of(f);
    while (slots_[i].freq != 0 && slots_[i].freq != f) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.freq != 0) slots_[probe(s.freq)] = s;
  }

  std::vector<Slot> slots_;
  size_t live_ = 0;
};

// frequency -> bucket; a bucket with no objects is absent (libCacheSim erases it).
class FreqBuckets {
 public:
  FreqBuckets() : low_(kLow) {}
  // The bucket of f, created empty if absent.
  FreqBucket& at(uint64_t f) { return f < kLow ? low_[f] : high_.at(f); }
  // The bucket of f, or nullptr if absent.
  const FreqBucket* find(uint64_t f) const {
    if (f < kLow) return low_[f].n_obj != 0 ? &low_[f] : nullptr;
    return high_.find(f);
  }
  bool contains(uint64_t f) const { return find(f) != nullptr; }
  void erase(uint64_t f) {
    if (f < kLow) low_[f] = FreqBucket{};
    else high_.erase(f);
  }
  size_t memory_bytes() const { return low_.capacity() * sizeof(FreqBucket) + high_.memory_bytes(); }

 private:
  static constexpr uint64_t kLow = 4096;
  std::vector<FreqBucket> low_;
  HighBuckets high_;  // non-empty buckets only
};

class Lecar : public PolicyBase<LecarNode> {
 public:
  explicit Lecar(const PolicyConfig& c)
      : PolicyBase(c, 2),
        dr_(std::pow(0.005, 1.0 / double(c.capacity))),
        w_lru_(c.param("lru_weight")),
        w_lfu_(0.5),  // libCacheSim sets only w_lru from its parameter
        learn_(c.param("update_weight") != 0) {}

  bool find(const Access& a) {
    ++n_req_;
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    if (table_[n].ghost) {
      forget_ghost(n);
      return false;
    }
    q_.move_to_front(table_, n);
    remove_from_bucket(n);
    auto& node = table_[n];
    node.freq += 1;
    if (max_freq_ < node.freq) max_freq_ = node.freq;
    append_to_bucket(n);
    if (n_obj_ == 1) update_min_freq();
    if (table_[n].freq < min_freq_) min_freq_ = table_[n].freq;
    return true;
  }
  void insert(const Access& a) {
    const uint32_t n = insert_front(q_, a);
    table_[n].freq = 1;
    min_freq_ = 1;
    append_to_bucket(n);
    ++n_obj_;
  }
  void evict(const Access&) {
    const uint32_t lru = q_.tail;
    const FreqBucket* min_bucket = buckets_.find(min_freq_);
    const uint32_t lfu = min_bucket == nullptr ? kNil : min_bucket->first;
    uint32_t victim = lru;
    int8_t expert = kNoExpert;
    if (lru != lfu) {
      const double r = double(next_rand() % 100) / 100.0;
      expert = r < w_lru_ ? kLruExpert : kLfuExpert;
      if (expert == kLfuExpert) victim = lfu;
    }
    auto& node = table_[victim];
    node.expert = expert;
    node.ghost = true;
    node.eviction_vtime = n_req_;
    q_.remove(table_, victim, node.size);
    remove_from_bucket(victim);
    --n_obj_;
    if (expert == kLruExpert) remember(ghost_lru_, victim);
    else if (expert == kLfuExpert) remember(ghost_lfu_, victim);
  }
  uint64_t occupied() const { return q_.bytes; }
  size_t memory_bytes() const { return PolicyBase::memory_bytes() + buckets_.memory_bytes(); }

 private:
  uint64_t next_rand() {
    rand_ = 6364136223846793005ULL * rand_ + 1442695040888963407ULL;
    return rand_;
  }
  // A request for an evicted key: the expert that evicted it loses weight; the ghost is forgotten.
  void forget_ghost(uint32_t n) {
    const auto& node = table_[n];
    if (node.expert == kLruExpert) {
      update_weight(n_req_ - node.eviction_vtime, w_lru_, w_lfu_);
      ghost_lru_.remove(table_, n, node.size);
    } else if (node.expert == kLfuExpert) {
      update_weight(n_req_ - node.eviction_vtime, w_lfu_, w_lru_);
      ghost_lfu_.remove(table_, n, node.size);
    }
    table_.erase(n);
  }
  void update_weight(int64_t t, double& w_update, double& w_other) {
    if (!learn_) return;
    const double r = std::pow(dr_, double(t));
    w_update = w_update * std::exp(-0.45 * r) + 1e-10;
    const double s = w_update + w_other + +2e-10;
    w_update = w_update / s;
    w_other = (w_other + 1e-10) / s;
  }
  void remember(List& ghosts, uint32_t n) {
    ghosts.push_front(table_, n, table_[n].size);
    while (int64_t(ghosts.bytes) > int64_t(capacity_) / 2) {
      const uint32_t t = ghosts.tail;
      ghosts.remove(table_, t, table_[t].size);
      table_.erase(t);
    }
  }
  void append_to_bucket(uint32_t n) {
    FreqBucket& b = buckets_.at(table_[n].freq);
    auto& node = table_[n];
    node.lfu_prev = b.last;
    node.lfu_next = kNil;
    if (b.last != kNil) table_[b.last].lfu_next = n;
    else b.first = n;
    b.last = n;
    b.n_obj += 1;
  }
  void remove_from_bucket(uint32_t n) {
    FreqBucket& b = buckets_.at(table_[n].freq);
    auto& node = table_[n];
    b.n_obj -= 1;
    if (b.first == n) b.first = node.lfu_next;
    if (b.last == n) b.last = node.lfu_prev;
    if (node.lfu_prev != kNil) table_[node.lfu_prev].lfu_next = node.lfu_next;
    if (node.lfu_next != kNil) table_[node.lfu_next].lfu_prev = node.lfu_prev;
    node.lfu_prev = node.lfu_next = kNil;
    if (b.n_obj == 0) {
      buckets_.erase(node.freq);
      if (node.freq == min_freq_) update_min_freq();
    }
  }
  // libCacheSim's search: the next non-empty bucket above the minimum, if any up to the maximum.
  void update_min_freq() {
    for (uint64_t f = min_freq_ + 1; f <= max_freq_; ++f) {
      if (buckets_.contains(f)) {
        min_freq_ = f;
        break;
      }
    }
  }

  double dr_, w_lru_, w_lfu_;
  bool learn_;
  List q_, ghost_lru_, ghost_lfu_;
  FreqBuckets buckets_;
  uint64_t min_freq_ = 1, max_freq_ = 1;
  uint64_t n_obj_ = 0;
  int64_t n_req_ = 0;
  uint64_t rand_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_lecar(const PolicyConfig& c) { return make_simulator<Lecar>(c); }

}  // namespace lite::cache::detail
