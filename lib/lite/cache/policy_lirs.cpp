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
//
// Why one table: libCacheSim keeps S, Q and NH as three caches with three indexes, so a key's entries
// are found (and, as it moves between them, erased and inserted) once per sub-cache. Here a key has one
// node holding its place in each of the three lists and which it belongs to: a request looks its key up
// once, and an object moving from Q to NH, or from S to Q, relinks lists without touching an index. Each
// sub-cache's entry keeps its own size and S's its own flags, as libCacheSim's separate objects do.
#include <algorithm>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct Link {
  uint32_t prev = kNil, next = kNil;
};

enum : uint8_t { kInS = 1, kInQ = 2, kInNh = 4, kPinned = 8 };

struct LirsNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;  // S's links: the ones a hit relinks, so the table prefetches them
  Link q, nh;
  uint32_t s_size = 0, q_size = 0, nh_size = 0;
  uint8_t sets = 0;                    // kInS | kInQ | kInNh, and kPinned while a step still needs the node
  bool lir = false, resident = false;  // of the S entry (Q's entries are always resident HIR)
};

// List works on t[n].prev / t[n].next: these views hand it Q's and NH's links of the same nodes.
template <Link LirsNode::*M>
struct LinksOf {
  ObjectTable<LirsNode>& table;
  Link& operator[](uint32_t n) { return table[n].*M; }
};

class Lirs {
 public:
  explicit Lirs(const PolicyConfig& c)
      : capacity_(c.capacity),
        hirs_limit_(std::max<uint64_t>(1, static_cast<uint64_t>(c.param("hir") * double(c.capacity)))),
        lirs_limit_(c.capacity - hirs_limit_),
        table_(expected_objects(c) * 2) {}

  bool find(const Access& a) {
    limit_stack();  // libCacheSim limits the stack after every request: the same, one request later
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    const bool in_s = table_[n].sets & kInS, in_q = table_[n].sets & kInQ;
    if (in_s) s_.move_to_front(table_, n);
    if (in_q) {
      auto links = q_links();
      q_.move_to_front(links, n);
    }
    if (in_s) {
      if (table_[n].lir) {
        prune();
        return true;
      }
      if (!table_[n].resident) return false;
      hit_hir_in_stack(n, in_q);
      return true;
    }
    if (in_q) {
      hit_hir_in_queue(n);
      return true;
    }
    return false;
  }
  bool can_insert(const Access& a) {
    if (a.size > capacity_) return false;
    const uint32_t n = table_.find(a.key, a.hash);
    const uint8_t sets = n == kNil ? 0 : table_[n].sets;
    if (non_resident_in_stack(n)) {
      const uint64_t size = table_[n].s_size;
      pin(n);
      while (lirs_count_ + size > lirs_limit_ && s_.tail != kNil) evict_lir();
      if (table_[n].sets & kInNh) {
        nh_remove(n);
        nonresident_ -= size;
      }
      unpin(n);
      return true;
    }
    if (!(sets & (kInS | kInQ))) {
      if (a.size > lirs_limit_ || a.size > hirs_limit_) return false;
      if (lirs_count_ + a.size > lirs_limit_ && hirs_count_ + a.size > hirs_limit_)
        while (hirs_count_ + a.size > hirs_limit_ && q_.tail != kNil) evict_hir();
      return true;
    }
    return false;  // libCacheSim aborts: a miss on a key that is neither new nor a non-resident HIR
  }
  void evict(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    const uint8_t sets = n == kNil ? 0 : table_[n].sets;
    bool done = false;
    if (non_resident_in_stack(n)) {
      while (hirs_count_ >= hirs_limit_ && q_.tail != kNil) evict_hir();
      if (s_.tail != kNil) evict_lir();
      done = true;
    } else if (!(sets & (kInS | kInQ)) && lirs_count_ + a.size > lirs_limit_ &&
               hirs_count_ + a.size > hirs_limit_ && q_.tail != kNil) {
      evict_hir();
      done = true;
    }
    // libCacheSim would loop forever here; evicting something keeps the replay going.
    if (!done) {
      if (q_.tail != kNil) evict_hir();
      else if (s_.tail != kNil) evict_lir();
      else occupied_ = 0;
    }
  }
  void insert(const Access& a) {
    uint32_t n = table_.find(a.key, a.hash);
    if (non_resident_in_stack(n)) {
      LirsNode& e = table_[n];
      e.lir = e.resident = true;  // reinstated in place, at the head where find put it
      lirs_count_ += e.s_size;
      occupied_ += e.s_size;
      return;
    }
    if (n != kNil && (table_[n].sets & (kInS | kInQ))) return;
    if (n == kNil) n = table_.insert(a.key, a.hash);
    s_add(n, a.size);
    table_[n].resident = true;
    if (lirs_count_ + a.size <= lirs_limit_) {
      table_[n].lir = true;
      lirs_count_ += a.size;
    } else {
      q_add(n, a.size);
      hirs_count_ += a.size;
    }
    occupied_ += a.size;
  }
  uint64_t occupied() const { return occupied_ > 0 ? uint64_t(occupied_) : 0; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { table_.prefetch(hash); }
  void prefetch_node(uint64_t hash) const { table_.prefetch_node(hash); }
  void prefetch_links(uint64_t hash) const { table_.prefetch_links(hash); }  // a hit moves it to S's head
  size_t memory_bytes() const { return table_.memory_bytes(); }

 private:
  LinksOf<&LirsNode::q> q_links() { return {table_}; }
  LinksOf<&LirsNode::nh> nh_links() { return {table_}; }
  bool non_resident_in_stack(uint32_t n) const {
    return n != kNil && (table_[n].sets & kInS) && !table_[n].lir && !table_[n].resident;
  }

  // Joining a sub-cache: a new entry at its head (S's with libCacheSim's fresh flags), or, for an entry
  // already there, a move to the head.
  void s_add(uint32_t n, uint32_t size) {
    LirsNode& e = table_[n];
    if (e.sets & kInS) return s_.move_to_front(table_, n);
    e.sets |= kInS;
    e.s_size = size;
    e.lir = e.resident = false;
    s_.push_front(table_, n, size);
  }
  void q_add(uint32_t n, uint32_t size) {
    auto links = q_links();
    if (table_[n].sets & kInQ) return q_.move_to_front(links, n);
    table_[n].sets |= kInQ;
    table_[n].q_size = size;
    q_.push_front(links, n, size);
  }
  void nh_add(uint32_t n, uint32_t size) {
    auto links = nh_links();
    if (table_[n].sets & kInNh) return nh_.move_to_front(links, n);
    table_[n].sets |= kInNh;
    table_[n].nh_size = size;
    nh_.push_front(links, n, size);
  }
  // Leaving one: the node stays while another sub-cache (or a pinned step) holds it; release() forgets
  // it once none does.
  void s_remove(uint32_t n) {
    s_.remove(table_, n, table_[n].s_size);
    table_[n].sets &= uint8_t(~kInS);
  }
  void q_remove(uint32_t n) {
    auto links = q_links();
    q_.remove(links, n, table_[n].q_size);
    table_[n].sets &= uint8_t(~kInQ);
  }
  void nh_remove(uint32_t n) {
    auto links = nh_links();
    nh_.remove(links, n, table_[n].nh_size);
    table_[n].sets &= uint8_t(~kInNh);
  }
  void release(uint32_t n) {
    if (table_[n].sets == 0) table_.erase(n);
  }
  // A step that may evict the node it works on (a hit's node can be S's bottom) holds it with a pin, so
  // its index stays its own; evictions create no nodes, so a released index is not reused meanwhile.
  void pin(uint32_t n) { table_[n].sets |= kPinned; }
  void unpin(uint32_t n) {
    table_[n].sets &= uint8_t(~kPinned);
    release(n);
  }

  // A hit on a resident HIR object in S: it becomes LIR (leaving Q); LIR space is made first.
  void hit_hir_in_stack(uint32_t n, bool in_q) {
    const uint64_t size = table_[n].s_size;
    if (in_q) {
      hirs_count_ -= table_[n].q_size;
      occupied_ -= table_[n].q_size;
      q_remove(n);
    }
    pin(n);
    while (lirs_count_ + size > lirs_limit_ && s_.tail != kNil) evict_lir();
    if (table_[n].sets & kInS) table_[n].lir = true;  // evict_lir can remove it when S is tiny
    unpin(n);
    lirs_count_ += size;
    occupied_ += size;
  }
  // A hit on a resident HIR object no longer in S: it re-enters S as resident HIR.
  void hit_hir_in_queue(uint32_t n) {
    const uint32_t size = table_[n].q_size;
    pin(n);
    while (lirs_count_ + size > lirs_limit_ && s_.tail != kNil) evict_lir();
    s_add(n, size);
    table_[n].lir = false;
    table_[n].resident = true;
    unpin(n);
  }
  // S's bottom leaves S; it stays resident as HIR in Q if it fits Q.
  void evict_lir() {
    const uint32_t t = s_.tail;
    const uint32_t size = table_[t].s_size;
    const bool was_pinned = table_[t].sets & kPinned;
    lirs_count_ -= size;
    s_remove(t);
    fetch_next_victim();
    occupied_ -= size;
    if (size <= hirs_limit_) {
      pin(t);
      while (hirs_count_ + size > hirs_limit_ && q_.tail != kNil) evict_hir();
      q_add(t, size);
      hirs_count_ += size;
      occupied_ += size;
    }
    if (!was_pinned) unpin(t);
    prune();
  }
  // Q's oldest leaves the cache; its S entry (if any) becomes non-resident and is queued in NH.
  void evict_hir() {
    const uint32_t t = q_.tail;
    const uint32_t size = table_[t].q_size;
    hirs_count_ -= size;
    q_remove(t);
    if (q_.tail != kNil) prefetch_line(&table_[q_.tail]);
    if (table_[t].sets & kInS) {
      table_[t].resident = false;
      nh_add(t, size);
      nonresident_ += table_[t].s_size;
    }
    occupied_ -= size;
    release(t);
  }
  // Removes HIR entries from S's bottom until an LIR object is there.
  void prune() {
    while (s_.tail != s_.head) {
      const uint32_t t = s_.tail;
      if (table_[t].lir) break;
      if (!table_[t].resident && (table_[t].sets & kInNh)) {
        nh_remove(t);
        nonresident_ -= table_[t].s_size;
      }
      s_remove(t);
      fetch_next_victim();
      release(t);
    }
  }
  // S (with its non-resident entries) may hold at most twice the capacity.
  void limit_stack() {
    while (s_.bytes > 2 * capacity_) {
      const uint32_t t = nh_.tail;
      if (t == kNil) break;
      nonresident_ -= table_[t].nh_size;
      if (table_[t].sets & kInS) s_remove(t);
      nh_remove(t);
      release(t);
      fetch_next_nh_victim();
    }
  }
  // The next limit_stack forgets NH's new oldest entry a miss or so from now: fetch what that reads (its S
  // neighbours, which it unlinks, and its index slot) and the node after it, whose links the next call reads.
  void fetch_next_nh_victim() const {
    if (nh_.tail == kNil) return;
    const LirsNode& v = table_[nh_.tail];
    if (v.prev != kNil) prefetch_line(&table_[v.prev]);
    if (v.next != kNil) prefetch_line(&table_[v.next]);
    if (v.nh.prev != kNil) prefetch_line(&table_[v.nh.prev]);
    table_.prefetch(hash_key(v.key));
  }
  // S's bottom is what prune and evict_lir read next: its node, its older neighbour and its index slot.
  void fetch_next_victim() const { table_.prefetch_victim(s_.tail, true); }

  uint64_t capacity_, hirs_limit_, lirs_limit_;
  uint64_t lirs_count_ = 0, hirs_count_ = 0, nonresident_ = 0;
  int64_t occupied_ = 0;
  ObjectTable<LirsNode> table_;
  List s_, q_, nh_;
};

}  // namespace

std::unique_ptr<Simulator> make_lirs(const PolicyConfig& c) { return make_simulator<Lirs>(c); }

}  // namespace lite::cache::detail
