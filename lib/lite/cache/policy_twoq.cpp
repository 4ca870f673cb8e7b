// 2Q (Johnson & Shasha, VLDB'94), the full version: a FIFO Ain for new objects (ain=25% of the
// capacity), a ghost FIFO Aout remembering keys evicted from Ain (aout=50%, keys only), and an LRU Am
// for the rest. A miss whose key is in Aout goes to Am; any other miss goes to Ain. A hit in Ain
// changes nothing; a hit in Am moves the object to Am's head. Eviction takes Ain's tail into Aout while
// Ain is over its share, otherwise Am's LRU tail. Follows libCacheSim's TwoQ.c: Ain/Aout/Am are
// sub-caches with their own byte capacities (Ain = floor(c*ain), Aout = floor(c*aout), Am = c - Ain),
// an insert into Am runs Am's own get (evicting inside Am if Am is full), and an object larger than
// Ain is never admitted.
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

enum : uint8_t { kAin = 1, kAout = 2, kAm = 3 };

struct TwoQNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint8_t where = 0;
};

class TwoQ : public PolicyBase<TwoQNode> {
 public:
  explicit TwoQ(const PolicyConfig& c)
      : PolicyBase(c, 2),
        ain_cap_(static_cast<int64_t>(double(c.capacity) * c.param("ain"))),
        aout_cap_(static_cast<int64_t>(double(c.capacity) * c.param("aout"))),
        am_cap_(static_cast<int64_t>(c.capacity) - ain_cap_) {}

  bool find(const Access& a) {
    hit_on_ghost_ = false;
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    auto& node = table_[n];
    if (node.where == kAin) return true;
    if (node.where == kAout) {
      drop(aout_, n);
      hit_on_ghost_ = true;
      return false;
    }
    am_.move_to_front(table_, n);
    return true;
  }
  bool can_insert(const Access& a) const {
    return int64_t(a.size) <= ain_cap_ && a.size <= capacity_;
  }
  void insert(const Access& a) {
    if (hit_on_ghost_) {
      hit_on_ghost_ = false;
      // Am->get(req): a miss in Am; admitted if it fits Am, after evicting inside Am.
      if (int64_t(a.size) > am_cap_) return;
      while (int64_t(am_.bytes + a.size) > am_cap_) drop(am_, am_.tail);
      table_[insert_front(am_, a)].where = kAm;
      return;
    }
    table_[insert_front(ain_, a)].where = kAin;
  }
  void evict(const Access&) {
    if (int64_t(ain_.bytes) > ain_cap_) {
      // Ain's tail becomes a ghost in Aout (Aout->get: admitted if it fits, after FIFO eviction).
      const uint32_t n = ain_.tail;
      const uint32_t size = table_[n].size;
      ain_.remove(table_, n, size);
      table_.prefetch_victim(ain_.tail, false);
      if (int64_t(size) > aout_cap_) {
        table_.erase(n);
        return;
      }
      while (int64_t(aout_.bytes + size) > aout_cap_) drop(aout_, aout_.tail);
      table_[n].where = kAout;
      aout_.push_front(table_, n, size);
      return;
    }
    drop(am_, am_.tail);
  }
  uint64_t occupied() const { return ain_.bytes + am_.bytes; }
  void prefetch_links(uint64_t hash) const { prefetch_links_of(hash); }

 private:
  int64_t ain_cap_, aout_cap_, am_cap_;
  List ain_, aout_, am_;
  bool hit_on_ghost_ = false;
};

}  // namespace

std::unique_ptr<Simulator> make_twoq(const PolicyConfig& c) { return make_simulator<TwoQ>(c); }

}  // namespace lite::cache::detail
