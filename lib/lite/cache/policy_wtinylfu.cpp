// W-TinyLFU (Einziger, Friedman & Manes 2017; Caffeine, the default Java cache; Ristretto in Go): a
// small window LRU (window=1% of the capacity) in front of a main SLRU (20% probation, 80% protected),
// with admission to main decided by a frequency sketch (frequency_sketch_internal.hpp). Every miss
// enters the window. When space is needed the window's LRU victim goes to main if main has room;
// otherwise it competes with main's victim and the one the sketch has seen more often stays (a tie
// keeps main's victim). The sketch counts every insertion, every main hit and every window victim
// considered, and halves after 32 x main-capacity main hits.
//
// Follows libCacheSim's WTinyLFU.c exactly (main-cache=SLRU with seg-size=1:4, window-size=0.01):
// window = floor(c*window), main = c - window; an object larger than the window or than main's
// probation segment is never admitted; one eviction keeps moving window victims into main until one
// loses (so it can empty the window), and evicts from main only when the window is empty; window hits
// are not counted in the sketch. doorkeeper=1 puts the TinyLFU paper's doorkeeper in front of the
// sketch (not in libCacheSim, so its counts differ).
#include "lite/cache/frequency_sketch_internal.hpp"
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

enum : uint8_t { kWindow = 0, kProbation = 1, kProtected = 2 };

struct WtNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint8_t where = kWindow;
};

class WTinyLfu : public PolicyBase<WtNode> {
 public:
  explicit WTinyLfu(const PolicyConfig& c)
      : PolicyBase(c),
        window_cap_(static_cast<int64_t>(double(c.capacity) * c.param("window"))),
        main_cap_(static_cast<int64_t>(c.capacity) - window_cap_),
        seg_cap_{static_cast<int64_t>(0.2 * double(main_cap_)), static_cast<int64_t>(0.8 * double(main_cap_))},
        sketch_(main_cap_, 0.001, c.param("doorkeeper") != 0),
        sample_(32 * main_cap_) {}

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    if (table_[n].where == kWindow) {
      window_.move_to_front(table_, n);
      return true;
    }
    main_hit(n);
    sketch_.add(a.key);
    if (++main_hits_ >= sample_) {
      main_hits_ = 0;
      sketch_.decay();
    }
    return true;
  }
  bool can_insert(const Access& a) const {
    return a.size <= capacity_ && int64_t(a.size) <= window_cap_ && int64_t(a.size) <= main_cap_ &&
           int64_t(a.size) <= seg_cap_[0];
  }
  void insert(const Access& a) {
    table_[insert_front(window_, a)].where = kWindow;
    sketch_.add(a.key);
    // The next miss compares the window's and main's victims in the sketch: fetch their counters now.
    if (window_.tail != kNil) sketch_.prefetch(table_[window_.tail].key);
    if (main_occupied() > 0) sketch_.prefetch(table_[main_victim()].key);
  }
  void evict(const Access&) {
    while (window_.bytes > 0) {
      const uint32_t v = window_.tail;
      const uint64_t key = table_[v].key;
      const uint32_t size = table_[v].size;
      bool done = false;
      if (main_occupied() + size <= uint64_t(main_cap_)) {
        window_.remove(table_, v, size);
        main_insert(v);
      } else if (sketch_.estimate(key) > sketch_.estimate(table_[main_victim()].key)) {
        main_evict();
        window_.remove(table_, v, size);
        main_insert(v);
      } else {
        drop(window_, v);
        done = true;
      }
      sketch_.add(key);
      if (done) return;
    }
    main_evict();
  }
  uint64_t occupied() const { return window_.bytes + main_occupied(); }
  void prefetch_links(uint64_t hash) const { prefetch_links_of(hash); }
  // Nearly every request adds its key to the sketch (a miss on insertion, a main hit), so its k
  // counters are fetched with its table slot, a few requests ahead.
  void prefetch_request(uint64_t key, uint64_t hash) const {
    table_.prefetch(hash);
    sketch_.prefetch(key);
  }
  size_t memory_bytes() const { return PolicyBase::memory_bytes() + sketch_.memory_bytes(); }

 private:
  uint64_t main_occupied() const { return seg_[0].bytes + seg_[1].bytes; }
  List& list_of(uint32_t n) { return seg_[table_[n].where - kProbation]; }

  // main's SLRU (libCacheSim SLRU.c with two segments): promote, demote on overflow.
  void main_hit(uint32_t n) {
    if (table_[n].where == kProtected) {
      seg_[1].move_to_front(table_, n);
      return;
    }
    seg_[0].remove(table_, n, table_[n].size);
    seg_[1].push_front(table_, n, table_[n].size);
    table_[n].where = kProtected;
    while (int64_t(seg_[1].bytes) > seg_cap_[1]) {
      const uint32_t d = seg_[1].tail;
      seg_[1].remove(table_, d, table_[d].size);
      seg_[0].push_front(table_, d, table_[d].size);
      table_[d].where = kProbation;
      while (int64_t(seg_[0].bytes) > seg_cap_[0]) main_evict();
    }
  }
  // Places node n (unlinked) into main: the first segment with room, else probation after making room.
  void main_insert(uint32_t n) {
    const uint32_t size = table_[n].size;
    int target = -1;
    for (int i = 0; i < 2; ++i)
      if (int64_t(seg_[i].bytes + size) <= seg_cap_[i]) {
        target = i;
        break;
      }
    if (target < 0) {
      while (int64_t(main_occupied() + size) > main_cap_) main_evict();
      target = 0;
    }
    seg_[target].push_front(table_, n, size);
    table_[n].where = static_cast<uint8_t>(kProbation + target);
  }
  uint32_t main_victim() const { return seg_[0].bytes > 0 ? seg_[0].tail : seg_[1].tail; }
  void main_evict() {
    const uint32_t n = main_victim();
    drop(list_of(n), n);
  }

  int64_t window_cap_, main_cap_;
  int64_t seg_cap_[2];
  List window_, seg_[2];
  FrequencySketch sketch_;
  int64_t sample_;
  int64_t main_hits_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_wtinylfu(const PolicyConfig& c) { return make_simulator<WTinyLfu>(c); }

}  // namespace lite::cache::detail
