// FIFO: objects leave in insertion order; a hit changes nothing. Follows libCacheSim's FIFO.c
// (prepend on insert, evict q_tail, find without update).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct FifoNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
};

class Fifo {
 public:
  explicit Fifo(const PolicyConfig& c) : capacity_(c.capacity), table_(expected_objects(c)) {}

  bool find(const Access& a) { return table_.find(a.key, a.hash) != kNil; }
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
  ObjectTable<FifoNode> table_;
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_fifo(const PolicyConfig& c) { return make_simulator<Fifo>(c); }

}  // namespace lite::cache::detail
