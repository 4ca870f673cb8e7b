// CLOCK (second chance, FIFO-Reinsertion): a FIFO whose objects carry an n-bit access counter. A hit
// increments the counter up to 2^n - 1; eviction looks at the tail: a counter >= 1 is decremented and
// the object moves to the head, otherwise it is evicted. Follows libCacheSim's Clock.c, whose default
// is n-bit-counter=1 (one reference bit); parameter bits=N (alias n-bit-counter).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct ClockNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint32_t freq = 0;
};

class Clock {
 public:
  explicit Clock(const PolicyConfig& c)
      : capacity_(c.capacity),
        max_freq_((1u << static_cast<int>(c.param("bits"))) - 1),
        table_(expected_objects(c)) {}

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    auto& node = table_[n];
    if (node.freq < max_freq_) ++node.freq;
    return true;
  }
  bool can_insert(const Access& a) const { return a.size <= capacity_; }
  void insert(const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    table_[n].size = a.size;
    table_[n].freq = 0;
    queue_.push_front(table_, n, a.size);
  }
  void evict(const Access&) {
    uint32_t n = queue_.tail;
    while (table_[n].freq >= 1) {
      table_[n].freq -= 1;
      queue_.move_to_front(table_, n);
      n = queue_.tail;
    }
    queue_.remove(table_, n, table_[n].size);
    table_.erase(n);
  }
  uint64_t occupied() const { return queue_.bytes; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { table_.prefetch(hash); }
  size_t memory_bytes() const { return table_.memory_bytes(); }

 private:
  uint64_t capacity_;
  uint32_t max_freq_;
  ObjectTable<ClockNode> table_;
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_clock(const PolicyConfig& c) { return make_simulator<Clock>(c); }

}  // namespace lite::cache::detail
