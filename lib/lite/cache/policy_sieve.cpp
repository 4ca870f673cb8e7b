// SIEVE (Zhang et al., NSDI'24): a FIFO queue plus a "visited" bit and a hand. New objects go to
// the head, unvisited; a hit only sets the bit. To evict, the hand walks from its position (the tail
// at first) towards the head, clearing visited bits, wrapping to the tail, and evicts the first
// unvisited object; the hand then rests on that object's newer neighbour. Nothing is ever moved.
// Follows libCacheSim's Sieve.c (hand = params->pointer, left at obj->queue.prev after eviction).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct SieveNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
  uint32_t visited = 0;
};

class Sieve : public PolicyBase<SieveNode> {
 public:
  using PolicyBase::PolicyBase;

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    table_[n].visited = 1;
    return true;
  }
  void insert(const Access& a) { insert_front(queue_, a); }  // a new node is unvisited
  void evict(const Access&) {
    uint32_t n = hand_ == kNil ? queue_.tail : hand_;
    while (table_[n].visited > 0) {
      table_[n].visited -= 1;
      n = table_[n].prev == kNil ? queue_.tail : table_[n].prev;
    }
    hand_ = table_[n].prev;
    drop(queue_, n);
  }
  uint64_t occupied() const { return queue_.bytes; }

 private:
  List queue_;
  uint32_t hand_ = kNil;
};

}  // namespace

std::unique_ptr<Simulator> make_sieve(const PolicyConfig& c) { return make_simulator<Sieve>(c); }

}  // namespace lite::cache::detail
