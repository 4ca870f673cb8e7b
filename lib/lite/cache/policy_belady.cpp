// Belady / OPT (MIN): evict the cached object whose next access is farthest in the future; objects
// never accessed again go first. The missed object is always inserted (no bypass). Needs each
// request's next-access index: the oracleGeneral field, or one computed in a first pass.
//
// Follows libCacheSim's Belady.c, and to break ties among objects with no next access the same way it
// also reproduces its priority queue (pqueue.c: a 1-based binary max-heap where a node moves up only
// past strictly smaller parents and percolates down to the larger child, right child on ties lost by
// the left). Tie-breaking matters in byte mode: which never-reused object goes first decides how much
// space one eviction frees.
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct BeladyNode {
  uint64_t key = 0;
  uint32_t size = 0;
  uint32_t pos = 0;  // position in the heap (1-based)
  int64_t next = 0;  // priority
};

class Belady : public PolicyBase<BeladyNode> {
 public:
  explicit Belady(const PolicyConfig& c) : PolicyBase(c) {
    heap_.push_back(kNil);  // element 0 is unused, as in pqueue.c
  }

  bool find(const Access& a) {
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    change_priority(n, a.next);
    return true;
  }
  void insert(const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    table_[n].size = a.size;
    table_[n].next = a.next;
    occupied_ += a.size;
    heap_.push_back(n);
    bubble_up(heap_.size() - 1);
  }
  void evict(const Access&) {
    const uint32_t n = heap_[1];
    heap_[1] = heap_.back();
    heap_.pop_back();
    if (heap_.size() > 1) percolate_down(1);
    occupied_ -= table_[n].size;
    table_.erase(n);
  }
  uint64_t occupied() const { return occupied_; }
  size_t memory_bytes() const { return PolicyBase::memory_bytes() + heap_.capacity() * sizeof(uint32_t); }

 private:
  // pqueue.c's cmp_pri(next, curr): next < curr, i.e. a max-heap on the next-access index.
  int64_t pri(size_t i) const { return table_[heap_[i]].next; }
  void set(size_t i, uint32_t n) {
    heap_[i] = n;
    table_[n].pos = static_cast<uint32_t>(i);
  }
  void bubble_up(size_t i) {
    const uint32_t moving = heap_[i];
    const int64_t p = table_[moving].next;
    for (size_t parent = i >> 1; i > 1 && pri(parent) < p; i = parent, parent = i >> 1) set(i, heap_[parent]);
    set(i, moving);
  }
  size_t max_child(size_t i) const {
    size_t child = i << 1;
    if (child >= heap_.size()) return 0;
    if (child + 1 < heap_.size() && pri(child) < pri(child + 1)) ++child;
    return child;
  }
  void percolate_down(size_t i) {
    const uint32_t moving = heap_[i];
    const int64_t p = table_[moving].next;
    size_t child;
    while ((child = max_child(i)) != 0 && p < pri(child)) {
      set(i, heap_[child]);
      i = child;
    }
    set(i, moving);
  }
  void change_priority(uint32_t n, int64_t next) {
    const int64_t old = table_[n].next;
    table_[n].next = next;
    if (old < next) bubble_up(table_[n].pos);
    else percolate_down(table_[n].pos);
  }

  uint64_t occupied_ = 0;
  std::vector<uint32_t> heap_;
};

}  // namespace

std::unique_ptr<Simulator> make_belady(const PolicyConfig& c) { return make_simulator<Belady>(c); }

}  // namespace lite::cache::detail
