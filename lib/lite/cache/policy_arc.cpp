// ARC (Megiddo & Modha, FAST'03): two LRU lists of cached objects, T1 (seen once recently) and T2
// (seen at least twice), and two ghost lists of recently evicted keys, B1 and B2. A hit in T1 or T2
// moves the object to the head of T2. A ghost hit in B1 grows the target size p of T1 by
// max(|B2|/|B1|, 1), one in B2 shrinks it by max(|B1|/|B2|, 1); the object is then inserted into T2.
// REPLACE evicts the tail of T1 into B1 when |T1| > p (or |T1| == p after a B2 hit, or T2 is empty),
// else the tail of T2 into B2. A miss in all four lists first trims B1 (if T1+B1 is full) or B2 (if
// all four hold 2c). Sizes are counted in bytes (objects in object mode) and p is a double, exactly
// as libCacheSim's ARC.c, whose state machine (ghost-hit flags valid for the current request only,
// no-ghost eviction of T1 when B1 is empty) this follows line by line.
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

enum : uint8_t { kT1 = 1, kT2 = 2, kB1 = 3, kB2 = 4 };

// libCacheSim's MIN/MAX macros (they differ from std::min/max only for NaN, e.g. 0/0 with size-0 ghosts).
inline double c_max(double a, double b) { return a > b ? a : b; }
inline double c_min(double a, double b) { return a < b ? a : b; }

struct ArcNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint8_t where = 0;
};

class Arc : public PolicyBase<ArcNode> {
 public:
  explicit Arc(const PolicyConfig& c) : PolicyBase(c, 2) {}

  bool find(const Access& a) {
    ++n_req_;  // libCacheSim's cache->n_req, incremented before find
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    in_b1_ = in_b2_ = false;
    auto& node = table_[n];
    const int64_t size = node.size;
    if (node.where == kB1 || node.where == kB2) {
      ghost_hit_vtime_ = n_req_;
      if (node.where == kB1) {
        in_b1_ = true;
        const double delta = c_max(double(b2_.bytes) / double(b1_.bytes), 1.0);
        p_ = c_min(p_ + delta, double(capacity_));
        drop(b1_, n);
      } else {
        in_b2_ = true;
        const double delta = c_max(double(b1_.bytes) / double(b2_.bytes), 1.0);
        p_ = c_max(p_ - delta, 0.0);
        drop(b2_, n);
      }
      return false;
    }
    if (node.where == kT1) {
      node.where = kT2;
      t1_.remove(table_, n, size);
      t2_.push_front(table_, n, size);
    } else {
      t2_.move_to_front(table_, n);
    }
    return true;
  }
  void insert(const Access& a) {
    if (ghost_hit_now()) {
      table_[insert_front(t2_, a)].where = kT2;
      in_b1_ = in_b2_ = false;
      ghost_hit_vtime_ = -1;
    } else {
      table_[insert_front(t1_, a)].where = kT1;
    }
  }
  void evict(const Access& a) {
    if (ghost_hit_now()) replace();
    else evict_miss_on_all_queues(a);
  }
  uint64_t occupied() const { return t1_.bytes + t2_.bytes; }
  void prefetch_links(uint64_t hash) const { prefetch_links_of(hash); }

 private:
  bool ghost_hit_now() const { return ghost_hit_vtime_ == n_req_ && (in_b1_ || in_b2_); }

  // REPLACE in the paper (libCacheSim's _ARC_replace).
  void replace() {
    const int64_t t1 = static_cast<int64_t>(t1_.bytes);
    const bool cond1 = t1 > 0;
    const bool cond2 = double(t1) > p_;
    const bool cond3 = double(t1) == p_ && in_b2_;
    const bool cond4 = t2_.bytes == 0;
    if ((cond1 && (cond2 || cond3)) || cond4) demote(t1_, b1_, kB1);
    else demote(t2_, b2_, kB2);
  }
  void demote(List& from, List& ghost, uint8_t where) {
    const uint32_t n = from.tail;
    const uint32_t size = table_[n].size;
    from.remove(table_, n, size);
    ghost.push_front(table_, n, size);
    table_[n].where = where;
    table_.prefetch_victim(from.tail, false);
  }
  // Case IV in the paper (libCacheSim's _ARC_evict_miss_on_all_queues).
  void evict_miss_on_all_queues(const Access& a) {
    const int64_t incoming = a.size;
    const int64_t c = static_cast<int64_t>(capacity_);
    if (int64_t(t1_.bytes + b1_.bytes) + incoming > c) {
      if (b1_.bytes > 0) {
        drop(b1_, b1_.tail);
        replace();
      } else {
        drop(t1_, t1_.tail);  // T1 alone fills the cache: evict without a ghost
      }
    } else {
      if (t1_.bytes + b1_.bytes + t2_.bytes + b2_.bytes >= 2 * capacity_) {
        if (b2_.bytes > 0) drop(b2_, b2_.tail);
      }
      replace();
    }
  }

  List t1_, t2_, b1_, b2_;
  double p_ = 0;
  bool in_b1_ = false, in_b2_ = false;
  int64_t n_req_ = 0;
  int64_t ghost_hit_vtime_ = -1;
};

}  // namespace

std::unique_ptr<Simulator> make_arc(const PolicyConfig& c) { return make_simulator<Arc>(c); }

}  // namespace lite::cache::detail
