// GDSF, Greedy-Dual-Size-Frequency (Cherkasova 1998; Squid's heap GDSF), and its cost-aware form.
// Every object has a priority H = L + freq * cost / size, where L is the priority of the last evicted
// object (an inflation value that ages what is no longer used); eviction takes the lowest H, ties to
// the object whose priority was set earliest. A hit adds one to freq and recomputes H with the
// current L; an insert starts at freq 1.
//
// Follows libCacheSim's cpp/GDSF.cpp exactly with cost=0 (cost is the constant 1e6, H computed with
// the same floating-point expression, ties by the request count at which H was set). With cost=1 the
// cost is the request's miss cost (the trace's cost column, the latest request's value; 1 without a
// column), which is what an inference-result cache needs: a result that takes long to recompute is
// kept over a cheap one of the same size and popularity. freq=0 drops the frequency term (GreedyDual-
// Size): with constant costs and unit sizes it evicts exactly what LRU evicts, so the cost-aware
// policy's gain over LRU is the gain from costs alone.
//
// The priority queue is an indexed binary min-heap over node indices (O(log n) per request, no
// allocation per request), where libCacheSim uses a std::set plus a map of iterators.
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct GdsfNode {
  uint64_t key = 0;
  uint32_t size = 0;
  uint32_t heap_pos = kNil;
  uint64_t freq = 0;
  double priority = 0;
  int64_t stamp = 0;  // request count when the priority was set: ties go to the earlier
  float cost = 0;
};

class Gdsf : public PolicyBase<GdsfNode> {
 public:
  explicit Gdsf(const PolicyConfig& c)
      : PolicyBase(c), cost_aware_(c.param("cost") != 0), use_freq_(c.param("freq") != 0) {}

  bool find(const Access& a) {
    ++n_req_;
    const uint32_t n = table_.find(a.key, a.hash);
    if (n == kNil) return false;
    auto& node = table_[n];
    node.freq += 1;
    if (cost_aware_) node.cost = a.cost;
    node.priority = priority(node);
    node.stamp = n_req_;
    heap_fix(n);
    return true;
  }
  void insert(const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    auto& node = table_[n];
    node.size = a.size;
    node.freq = 1;
    node.cost = cost_aware_ ? a.cost : 1.0f;
    node.priority = priority(node);
    node.stamp = n_req_;
    occupied_ += a.size;
    heap_.push_back(n);
    node.heap_pos = static_cast<uint32_t>(heap_.size() - 1);
    sift_up(node.heap_pos);
  }
  void evict(const Access&) {
    const uint32_t n = heap_[0];
    last_evicted_ = table_[n].priority;
    occupied_ -= table_[n].size;
    const uint32_t last = heap_.back();
    heap_.pop_back();
    if (last != n) {
      heap_[0] = last;
      table_[last].heap_pos = 0;
      sift_down(0);
    }
    table_.erase(n);
  }
  uint64_t occupied() const { return occupied_; }
  size_t memory_bytes() const { return PolicyBase::memory_bytes() + heap_.capacity() * sizeof(uint32_t); }

 private:
  // libCacheSim: pri_last_evict + (double)freq * 1.0e6 / obj_size (insert: + 1.0e6 / obj_size)
  double priority(const GdsfNode& node) const {
    const double cost = cost_aware_ ? double(node.cost) * 1.0e6 : 1.0e6;
    if (!use_freq_) return last_evicted_ + cost / node.size;
    return last_evicted_ + double(node.freq) * cost / node.size;
  }
  bool less(uint32_t a, uint32_t b) const {
    const auto& x = table_[a];
    const auto& y = table_[b];
    return x.priority != y.priority ? x.priority < y.priority : x.stamp < y.stamp;
  }
  void place(size_t pos, uint32_t n) {
    heap_[pos] = n;
    table_[n].heap_pos = static_cast<uint32_t>(pos);
  }
  void sift_up(size_t pos) {
    const uint32_t n = heap_[pos];
    while (pos > 0) {
      const size_t parent = (pos - 1) / 2;
      if (!less(n, heap_[parent])) break;
      place(pos, heap_[parent]);
      pos = parent;
    }
    place(pos, n);
  }
  void sift_down(size_t pos) {
    const uint32_t n = heap_[pos];
    const size_t count = heap_.size();
    while (true) {
      size_t child = 2 * pos + 1;
      if (child >= count) break;
      if (child + 1 < count && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], n)) break;
      place(pos, heap_[child]);
      pos = child;
    }
    place(pos, n);
  }
  // Restores the heap after node n's priority changed (it rises on a hit, but may fall with costs).
  void heap_fix(uint32_t n) {
    sift_up(table_[n].heap_pos);
    sift_down(table_[n].heap_pos);
  }

  bool cost_aware_, use_freq_;
  std::vector<uint32_t> heap_;
  double last_evicted_ = 0;
  int64_t n_req_ = 0;
  uint64_t occupied_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_gdsf(const PolicyConfig& c) { return make_simulator<Gdsf>(c); }

}  // namespace lite::cache::detail
