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

class Lru {
 public:
  explicit Lru(const PolicyConfig& c) : capacity_(c.capacity), table_(expected_objects(c)) {}

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    queue_.move_to_front(table_, n);
    return true;
  }
  bool can_insert(const Access& a) const { return a.size <= capacity_; }
  void insert(const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    table_[n].size = a.size;
    queue_.push_front(table_, n, a.size);
  }
  void evict(const Access&) {
    const uint32_t n = queue_.tail;
    queue_.remove(table_, n, table_[n].size);
    table_.erase(n);
  }
  uint64_t occupied() const { return queue_.bytes; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { table_.prefetch(hash); }
  size_t memory_bytes() const { return table_.memory_bytes(); }

 private:
  uint64_t capacity_;
  ObjectTable<LruNode> table_;
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_lru(const PolicyConfig& c) { return make_simulator<Lru>(c); }

}  // namespace lite::cache::detail
