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

class Clock : public PolicyBase<ClockNode> {
 public:
  explicit Clock(const PolicyConfig& c)
      : PolicyBase(c), max_freq_((1u << static_cast<int>(c.param("bits"))) - 1) {}

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    auto& node = table_[n];
    if (node.freq < max_freq_) ++node.freq;
    return true;
  }
  void insert(const Access& a) { insert_front(queue_, a); }  // a new node has freq 0
  void evict(const Access&) {
    uint32_t n = queue_.tail;
    while (table_[n].freq >= 1) {
      table_[n].freq -= 1;
      queue_.move_to_front(table_, n);
      n = queue_.tail;
    }
    drop(queue_, n);
  }
  uint64_t occupied() const { return queue_.bytes; }

 private:
  uint32_t max_freq_;
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_clock(const PolicyConfig& c) { return make_simulator<Clock>(c); }

}  // namespace lite::cache::detail
