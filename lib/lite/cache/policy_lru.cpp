// LRU: one recency list. A hit moves the object to the head; a miss inserts at the head; eviction
// takes the tail (the least recently used). Follows libCacheSim's LRU.c (cache_get_base + a
// doubly-linked queue, prepend on insert and on hit, evict q_tail).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct LruNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
};

class Lru : public PolicyBase<LruNode> {
 public:
  using PolicyBase::PolicyBase;

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    queue_.move_to_front(table_, n);
    return true;
  }
  void insert(const Access& a) { insert_front(queue_, a); }
  void evict(const Access&) { drop(queue_, queue_.tail); }
  uint64_t occupied() const { return queue_.bytes; }
  void prefetch_links(uint64_t hash) const { prefetch_links_of(hash); }

 private:
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_lru(const PolicyConfig& c) { return make_simulator<Lru>(c); }

}  // namespace lite::cache::detail
