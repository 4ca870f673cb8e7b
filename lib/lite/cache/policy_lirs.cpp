// LIRS (Jiang & Zhang, SIGMETRICS'02): objects are ranked by inter-reference recency. LIR objects
// (low IRR: re-referenced within the stack's span) hold ~99% of the cache; HIR objects hold the rest
// (hir=1%). Stack S is an LRU of recent objects (LIR, resident HIR and non-resident HIR entries); list
// Q holds the resident HIR objects. A hit on an HIR object still in S turns it LIR (its reuse distance
// beat the oldest LIR) and the bottom LIR is demoted to Q; S is pruned so its bottom is always LIR.
// Misses become HIR (or LIR while LIR space is free). S is capped at twice the capacity by dropping the
// oldest non-resident entries.
//
// Follows libCacheSim's LIRS.c step for step, including its accounting: three LRU sub-caches (S, Q,
// and NH, the non-resident entries in the order they left Q), hirs_limit = max(1, floor(c*0.01)),
// lirs_limit = c - hirs_limit; an object larger than either limit is never admitted; a miss on a
// non-resident HIR entry of S makes room among the LIRs and reinstates it as LIR in place; the stack
// is limited after every request. Where libCacheSim would insert a key that a sub-cache already holds
// (a state its own asserts rule out), the entry is moved to the head instead.
#include <algorithm>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct LirsNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  bool lir = false, resident = false;
};

// One of libCacheSim's LRU sub-caches: its own index and recency list (head = most recent).
class LruSet {
 public:
  explicit LruSet(size_t expected) : table_(expected) {}
  uint32_t find(uint64_t key) const { return table_.find(key, hash_key(key)); }
  uint32_t insert(uint64_t key, uint32_t size) {
    uint32_t n = find(key);
    if (n != kNil) {
      list_.move_to_front(table_, n);
      return n;
    }
    n = table_.insert(key, hash_key(key));
    table_[n].size = size;
    list_.push_front(table_, n, size);
    return n;
  }
  void to_head(uint32_t n) { list_.move_to_front(table_, n); }
  void remove(uint32_t n) {
    const bool tail = n == list_.tail;
    list_.remove(table_, n, table_[n].size);
    table_.erase(n);
    if (tail) table_.prefetch_victim(list_.tail, true);  // S and Q are pruned and evicted from the tail
  }
  bool remove_key(uint64_t key) {
    const uint32_t n = find(key);
    if (n == kNil) return false;
    remove(n);
    return true;
  }
  uint32_t head() const { return list_.head; }
  uint32_t tail() const { return list_.tail; }
  uint64_t bytes() const { return list_.bytes; }
  LirsNode& operator[](uint32_t n) { return table_[n]; }
  void prefetch(uint64_t hash) const { table_.prefetch(hash); }
  void prefetch_node(uint64_t hash) const { table_.prefetch_node(hash); }
  void prefetch_links(uint64_t hash) const { table_.prefetch_links(hash); }
  size_t memory_bytes() const { return table_.memory_bytes(); }

 private:
  ObjectTable<LirsNode> table_;
  List list_;
};

class Lirs {
 public:
  explicit Lirs(const PolicyConfig& c)
      : capacity_(c.capacity),
        hirs_limit_(std::max<uint64_t>(1, static_cast<uint64_t>(c.param("hir") * double(c.capacity)))),
        lirs_limit_(c.capacity - hirs_limit_),
        s_(expected_objects(c) * 2),
        q_(expected_objects(c) / 50 + 16),
        nh_(expected_objects(c)) {}

  bool find(const Access& a) {
    limit_stack();  // libCacheSim limits the stack after every request: the same, one request later
    const uint32_t s = s_.find(a.key);
    if (s != kNil) s_.to_head(s);
    const uint32_t q = q_.find(a.key);
    if (q != kNil) q_.to_head(q);
    if (s != kNil) {
      if (s_[s].lir) {
        prune();
        return true;
      }
      if (!s_[s].resident) return false;
      hit_hir_in_stack(s, q);
      return true;
    }
    if (q != kNil && q_[q].resident) {
      hit_hir_in_queue(q);
      return true;
    }
    return false;
  }
  bool can_insert(const Access& a) {
    if (a.size > capacity_) return false;
    const uint32_t s = s_.find(a.key);
    if (s != kNil && !s_[s].lir && !s_[s].resident) {
      const uint64_t size = s_[s].size;
      while (lirs_count_ + size > lirs_limit_ && s_.tail() != kNil) evict_lir();
      if (nh_.remove_key(a.key)) nonresident_ -= size;
      return true;
    }
    if (s == kNil && q_.find(a.key) == kNil) {
      if (a.size > lirs_limit_ || a.size > hirs_limit_) return false;
      if (lirs_count_ + a.size > lirs_limit_ && hirs_count_ + a.size > hirs_limit_)
        while (hirs_count_ + a.size > hirs_limit_ && q_.tail() != kNil) evict_hir();
      return true;
    }
    return false;  // libCacheSim aborts: a miss on a key that is neither new nor a non-resident HIR
  }
  void evict(const Access& a) {
    const uint32_t s = s_.find(a.key);
    const uint32_t q = q_.find(a.key);
    bool done = false;
    if (s != kNil && !s_[s].lir && !s_[s].resident) {
      while (hirs_count_ >= hirs_limit_ && q_.tail() != kNil) evict_hir();
      if (s_.tail() != kNil) evict_lir();
      done = true;
    } else if (s == kNil && q == kNil && lirs_count_ + a.size > lirs_limit_ && hirs_count_ + a.size > hirs_limit_ &&
               q_.tail() != kNil) {
      evict_hir();
      done = true;
    }
    // libCacheSim would loop forever here; evicting something keeps the replay going.
    if (!done) {
      if (q_.tail() != kNil) evict_hir();
      else if (s_.tail() != kNil) evict_lir();
      else occupied_ = 0;
    }
  }
  void insert(const Access& a) {
    const uint32_t s = s_.find(a.key);
    if (s != kNil && !s_[s].lir && !s_[s].resident) {
      s_[s].lir = s_[s].resident = true;  // reinstated in place, at the head where find put it
      lirs_count_ += s_[s].size;
      occupied_ += s_[s].size;
      return;
    }
    if (s != kNil || q_.find(a.key) != kNil) return;
    const uint32_t n = s_.insert(a.key, a.size);
    s_[n].resident = true;
    if (lirs_count_ + a.size <= lirs_limit_) {
      s_[n].lir = true;
      lirs_count_ += a.size;
    } else {
      q_[q_.insert(a.key, a.size)].resident = true;
      hirs_count_ += a.size;
    }
    occupied_ += a.size;
  }
  uint64_t occupied() const { return occupied_ > 0 ? uint64_t(occupied_) : 0; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { s_.prefetch(hash); }
  void prefetch_node(uint64_t hash) const { s_.prefetch_node(hash); }
  void prefetch_links(uint64_t hash) const { s_.prefetch_links(hash); }  // a hit moves it to S's head
  size_t memory_bytes() const { return s_.memory_bytes() + q_.memory_bytes() + nh_.memory_bytes(); }

 private:
  // A hit on a resident HIR object in S: it becomes LIR (leaving Q); LIR space is made first.
  void hit_hir_in_stack(uint32_t s, uint32_t q) {
    const uint64_t key = s_[s].key, size = s_[s].size;
    if (q != kNil) {
      hirs_count_ -= q_[q].size;
      occupied_ -= q_[q].size;
      q_.remove(q);
    }
    while (lirs_count_ + size > lirs_limit_ && s_.tail() != kNil) evict_lir();
    const uint32_t again = s_.find(key);  // evict_lir can remove it when S is tiny
    if (again != kNil) s_[again].lir = true;
    lirs_count_ += size;
    occupied_ += size;
  }
  // A hit on a resident HIR object no longer in S: it re-enters S as resident HIR.
  void hit_hir_in_queue(uint32_t q) {
    const uint64_t key = q_[q].key;
    const uint32_t size = q_[q].size;
    while (lirs_count_ + size > lirs_limit_ && s_.tail() != kNil) evict_lir();
    const uint32_t n = s_.insert(key, size);
    s_[n].lir = false;
    s_[n].resident = true;
  }
  // S's bottom leaves S; it stays resident as HIR in Q if it fits Q.
  void evict_lir() {
    const uint32_t t = s_.tail();
    const uint64_t key = s_[t].key;
    const uint32_t size = s_[t].size;
    lirs_count_ -= size;
    s_.remove(t);
    occupied_ -= size;
    if (size <= hirs_limit_) {
      while (hirs_count_ + size > hirs_limit_ && q_.tail() != kNil) evict_hir();
      const uint32_t n = q_.insert(key, size);
      q_[n].lir = false;
      q_[n].resident = true;
      hirs_count_ += size;
      occupied_ += size;
    }
    prune();
  }
  // Q's oldest leaves the cache; its S entry (if any) becomes non-resident and is queued in NH.
  void evict_hir() {
    const uint32_t t = q_.tail();
    const uint64_t key = q_[t].key;
    const uint32_t size = q_[t].size;
    hirs_count_ -= size;
    q_.remove(t);
    const uint32_t s = s_.find(key);
    if (s != kNil) {
      s_[s].resident = false;
      nh_.insert(key, size);
      nonresident_ += s_[s].size;
    }
    occupied_ -= size;
  }
  // Removes HIR entries from S's bottom until an LIR object is there.
  void prune() {
    while (s_.tail() != s_.head()) {
      const uint32_t t = s_.tail();
      if (s_[t].lir) break;
      if (!s_[t].resident && nh_.remove_key(s_[t].key)) nonresident_ -= s_[t].size;
      s_.remove(t);
    }
  }
  // S (with its non-resident entries) may hold at most twice the capacity.
  void limit_stack() {
    while (s_.bytes() > 2 * capacity_) {
      const uint32_t t = nh_.tail();
      if (t == kNil) break;
      nonresident_ -= nh_[t].size;
      s_.remove_key(nh_[t].key);
      nh_.remove(t);
    }
  }

  uint64_t capacity_, hirs_limit_, lirs_limit_;
  uint64_t lirs_count_ = 0, hirs_count_ = 0, nonresident_ = 0;
  int64_t occupied_ = 0;
  LruSet s_, q_, nh_;
};

}  // namespace

std::unique_ptr<Simulator> make_lirs(const PolicyConfig& c) { return make_simulator<Lirs>(c); }

}  // namespace lite::cache::detail
