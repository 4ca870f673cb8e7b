// S3-FIFO (Yang et al., SOSP'23): three FIFO queues. New objects enter a small FIFO (small=10% of
// the capacity); a ghost FIFO (ghost=90%, keys only) remembers what small evicted; the main FIFO holds
// the rest. A hit only increments the object's frequency. Evicting from small: an object hit at least
// `threshold` (2) times moves to main with frequency 0, any other goes to the ghost. Evicting from
// main: an object with frequency >= 1 is reinserted at main's head with min(freq, 3) - 1 (a 2-bit
// CLOCK), others are evicted. A miss whose key is in the ghost goes straight to main.
//
// Follows libCacheSim's S3FIFO.c, including its details: small = floor(c*small), main = c - small,
// ghost = floor(c*ghost); main is evicted when it is over its share or small is empty; an object must
// fit in small to be admitted (so in object mode a cache under 20 objects admits nothing: small holds
// at most one object and libCacheSim refuses objects as large as small); before the first eviction,
// once small is full, new objects go to main. original=1 selects libCacheSim's S3FIFOv0.c instead (the
// paper's version: new objects always go to small).
#include <algorithm>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

enum : uint8_t { kSmall = 1, kMain = 2, kGhost = 3 };

struct S3Node {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint8_t where = 0;
  uint8_t freq = 0;
};

class S3Fifo : public PolicyBase<S3Node> {
 public:
  explicit S3Fifo(const PolicyConfig& c)
      : PolicyBase(c, 2),
        small_cap_(static_cast<int64_t>(double(c.capacity) * c.param("small"))),
        main_cap_(static_cast<int64_t>(c.capacity) - small_cap_),
        ghost_cap_(static_cast<int64_t>(double(c.capacity) * c.param("ghost"))),
        threshold_(static_cast<int>(c.param("threshold"))),
        original_(c.param("original") != 0) {}

  bool find(const Access& a) {
    hit_on_ghost_ = false;
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    auto& node = table_[n];
    if (node.where == kGhost) {
      drop(ghost_, n);
      hit_on_ghost_ = true;
      return false;
    }
    if (node.freq < 255) ++node.freq;
    return true;
  }
  bool can_insert(const Access& a) const { return int64_t(a.size) <= small_cap_ && a.size <= capacity_; }
  void insert(const Access& a) {
    uint8_t where;
    if (hit_on_ghost_) {
      hit_on_ghost_ = false;
      where = kMain;
    } else {
      if (int64_t(a.size) >= small_cap_) return;  // libCacheSim: an object as large as small is refused
      if (!original_ && !has_evicted_ && int64_t(small_.bytes) >= small_cap_) where = kMain;
      else where = kSmall;
    }
    table_[insert_front(where == kMain ? main_ : small_, a)].where = where;  // freq starts at 0
  }
  void evict(const Access&) {
    has_evicted_ = true;
    if (int64_t(main_.bytes) > main_cap_ || small_.bytes == 0) evict_main();
    else evict_small();
  }
  uint64_t occupied() const { return small_.bytes + main_.bytes; }

 private:
  void evict_small() {
    bool evicted = false;
    while (!evicted && small_.bytes > 0) {
      const uint32_t n = small_.tail;
      auto& node = table_[n];
      const uint32_t size = node.size;
      small_.remove(table_, n, size);
      table_.prefetch_victim(small_.tail, false);
      if (node.freq >= threshold_) {
        node.where = kMain;
        node.freq = 0;  // a fresh object in libCacheSim's main FIFO
        main_.push_front(table_, n, size);
      } else {
        // ghost->get(): admitted if it fits the ghost, after FIFO eviction inside the ghost
        if (ghost_cap_ > 0 && int64_t(size) <= ghost_cap_) {
          while (int64_t(ghost_.bytes + size) > ghost_cap_) drop(ghost_, ghost_.tail);
          node.where = kGhost;
          ghost_.push_front(table_, n, size);
        } else {
          table_.erase(n);
        }
        evicted = true;
      }
    }
  }
  void evict_main() {
    bool evicted = false;
    while (!evicted && main_.bytes > 0) {
      const uint32_t n = main_.tail;
      auto& node = table_[n];
      if (node.freq >= 1) {
        node.freq = static_cast<uint8_t>(std::min<int>(node.freq, 3) - 1);
        main_.move_to_front(table_, n);
      } else {
        drop(main_, n);
        evicted = true;
      }
    }
  }

  int64_t small_cap_, main_cap_, ghost_cap_;
  int threshold_;
  bool original_;
  List small_, main_, ghost_;
  bool hit_on_ghost_ = false;
  bool has_evicted_ = false;
};

}  // namespace

std::unique_ptr<Simulator> make_s3fifo(const PolicyConfig& c) { return make_simulator<S3Fifo>(c); }

}  // namespace lite::cache::detail
