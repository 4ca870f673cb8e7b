// SLRU, segmented LRU (Karedla et al. 1994; memcached's and many CDNs' hot/warm/cold LRU): n LRU
// segments (n=4), each capped at capacity/n. A miss enters the lowest segment with room (segment 0
// once the cache is full); a hit promotes the object to the head of the next segment up (or to the
// head of the top segment if it is already there), and a segment over its cap demotes its tail to
// the head of the segment below, cascading down to segment 0, whose overflow is evicted. Eviction
// takes the tail of the lowest non-empty segment.
//
// Follows libCacheSim's SLRU.c exactly: segment caps floor(c/n), an object larger than segment 0's
// cap is never admitted, insertion does not demote (segment 0 may run over its cap until the next
// promotion cascades), demotion on a hit can evict from segment 0.
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

constexpr int kMaxSegments = 16;  // as libCacheSim's SLRU_MAX_N_SEG

struct SlruNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint8_t segment = 0;
};

class Slru : public PolicyBase<SlruNode> {
 public:
  explicit Slru(const PolicyConfig& c)
      : PolicyBase(c),
        n_(static_cast<int>(c.param("segments"))),
        segment_cap_(static_cast<int64_t>(c.capacity) / n_) {}

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    const int s = table_[n].segment;
    if (s == n_ - 1) {
      seg_[s].move_to_front(table_, n);
      return true;
    }
    seg_[s].remove(table_, n, table_[n].size);
    seg_[s + 1].push_front(table_, n, table_[n].size);
    table_[n].segment = static_cast<uint8_t>(s + 1);
    while (int64_t(seg_[s + 1].bytes) > segment_cap_) cool(s + 1);
    return true;
  }
  bool can_insert(const Access& a) const { return a.size <= capacity_ && int64_t(a.size) <= segment_cap_; }
  void insert(const Access& a) {
    int target = 0;
    for (int i = 0; i < n_; ++i)
      if (int64_t(seg_[i].bytes + a.size) <= segment_cap_) {
        target = i;
        break;
      }
    table_[insert_front(seg_[target], a)].segment = static_cast<uint8_t>(target);
    occupied_ += a.size;
  }
  void evict(const Access&) {
    for (int i = 0; i < n_; ++i)
      if (seg_[i].bytes > 0) {
        occupied_ -= table_[seg_[i].tail].size;
        drop(seg_[i], seg_[i].tail);
        return;
      }
  }
  uint64_t occupied() const { return occupied_; }
  void prefetch_links(uint64_t hash) const { prefetch_links_of(hash); }

 private:
  // Demotes segment s's tail to the head of segment s-1 (segment 0: evicts), cascading down.
  void cool(int s) {
    if (s == 0) {
      evict(Access{});
      return;
    }
    const uint32_t n = seg_[s].tail;
    const uint32_t size = table_[n].size;
    seg_[s].remove(table_, n, size);
    seg_[s - 1].push_front(table_, n, size);
    table_[n].segment = static_cast<uint8_t>(s - 1);
    table_.prefetch_victim(seg_[s].tail, false);
    while (int64_t(seg_[s - 1].bytes) > segment_cap_) cool(s - 1);
  }

  int n_;
  int64_t segment_cap_;
  List seg_[kMaxSegments];
  uint64_t occupied_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_slru(const PolicyConfig& c) { return make_simulator<Slru>(c); }

}  // namespace lite::cache::detail
