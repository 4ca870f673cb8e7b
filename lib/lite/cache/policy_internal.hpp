#pragma once
// The small interface every policy implements, and the replay loop that drives it.
//
// A policy is a plain class with five members, the same split as libCacheSim's cache_t:
//   bool find(const Access&)        look the object up; on a hit update the policy's metadata
//   bool can_insert(const Access&)  whether a missed object may be inserted (default: size <= capacity)
//   void evict(const Access&)       evict one object (or one step, as libCacheSim's evict does)
//   void insert(const Access&)      insert the missed object (space has been made)
//   uint64_t occupied() const, capacity() const
// cache_get() below strings them together exactly as libCacheSim's cache_get_base does. The replay
// loop is a template over the policy, so there is one virtual call per batch, not per request.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lite/cache/cache_sim.hpp"
#include "lite/cache/latency_internal.hpp"
#include "lite/cache/object_table_internal.hpp"
#include "lite/cache/policies.hpp"

namespace lite::cache::detail {

struct Access {
  uint64_t key;
  uint64_t hash;
  uint32_t size;
  int64_t next;
  float cost = 1.0f;  // the request's miss cost (ms) from the trace's cost column; 1 without one
};

// A fixed-size array that is not zero-filled: batch and input buffers are written before they are read,
// and zeroing them would be one more pass over memory for every run.
template <class T>
class RawArray {
 public:
  void resize(size_t n) {
    data_.reset(n ? new T[n] : nullptr);  // default-initialized: no zeroing for trivial T
    size_ = n;
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
};

// A batch of requests, struct-of-arrays, shared read-only by every simulator.
struct Batch {
  size_t n = 0;
  RawArray<uint64_t> key, hash;
  RawArray<uint32_t> size;
  RawArray<float> cost;
  RawArray<int64_t> next;
  bool has_cost = false, has_next = false;

  void reserve(size_t capacity) {
    key.resize(capacity);
    hash.resize(capacity);
    size.resize(capacity);
    cost.resize(capacity);
    next.resize(capacity);
  }
  size_t capacity() const { return key.size(); }
};

struct PolicyConfig {
  uint64_t capacity = 0;
  bool bytes = false;
  const PolicyEntry* entry = nullptr;
  std::vector<double> values;  // one per entry->params, defaults filled in
  double param(const char* name) const;
};

class Simulator {
 public:
  virtual ~Simulator() = default;
  virtual void run(const Batch& batch) = 0;
  virtual size_t memory_bytes() const = 0;

  Counters counters;
  MissCostStats miss_cost;                   // filled when the batch carries a cost column
  uint64_t sample_threshold = UINT64_MAX;    // keep a request iff hash < threshold (SHARDS)
};

template <class P>
inline bool cache_get(P& p, const Access& a) {
  if (p.find(a)) return true;
  if (!p.can_insert(a)) return false;
  while (p.occupied() + a.size > p.capacity()) p.evict(a);
  p.insert(a);
  return false;
}

// A policy whose request reads more than its table slot (W-TinyLFU's sketch counters) has
// prefetch_request(key, hash), which the replay loop calls instead of prefetch(hash).
template <class P, class = void>
struct HasPrefetchRequest : std::false_type {};
template <class P>
struct HasPrefetchRequest<P, std::void_t<decltype(std::declval<const P&>().prefetch_request(uint64_t(), uint64_t()))>>
    : std::true_type {};

// A policy built on PolicyBase also has prefetch_node(hash): the node a request will read, fetched once
// its slot has arrived.
template <class P, class = void>
struct HasPrefetchNode : std::false_type {};
template <class P>
struct HasPrefetchNode<P, std::void_t<decltype(std::declval<const P&>().prefetch_node(uint64_t()))>> : std::true_type {};

// A policy whose hits move the object within a list (LRU, ARC, 2Q, SLRU, W-TinyLFU, LIRS) also has
// prefetch_links(hash): the node's list neighbours, fetched once the node has arrived.
template <class P, class = void>
struct HasPrefetchLinks : std::false_type {};
template <class P>
struct HasPrefetchLinks<P, std::void_t<decltype(std::declval<const P&>().prefetch_links(uint64_t()))>>
    : std::true_type {};

template <class P>
class PolicySimulator final : public Simulator {
 public:
  explicit PolicySimulator(const PolicyConfig& config) : policy_(config) {}

  void run(const Batch& b) override {
    const bool sampled = sample_threshold != UINT64_MAX;
    if (sampled) {
      if (b.has_cost) loop<true, true>(b);
      else loop<true, false>(b);
    } else {
      if (b.has_cost) loop<false, true>(b);
      else loop<false, false>(b);
    }
  }
  size_t memory_bytes() const override { return policy_.memory_bytes(); }
  P& policy() { return policy_; }

 private:
  template <bool kSampled, bool kCost>
  void loop(const Batch& b) {
    uint64_t n_req = 0, n_miss = 0, req_byte = 0, miss_byte = 0;
    const size_t n = b.n;
    const uint64_t* keys = b.key.data();
    const uint64_t* hashes = b.hash.data();
    const uint32_t* sizes = b.size.data();
    const int64_t* next = b.has_next ? b.next.data() : nullptr;
    // Requests are prefetched in stages: the table slot kAhead requests ahead, then the node it points
    // to kNodeAhead requests ahead (by then the slot has arrived), so a hit's node is in cache when read,
    // then (policies whose hits relink the node) its list neighbours kLinkAhead requests ahead.
    constexpr size_t kAhead = 16, kNodeAhead = 8, kLinkAhead = 4;
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) {
        if constexpr (HasPrefetchRequest<P>::value) policy_.prefetch_request(keys[i + kAhead], hashes[i + kAhead]);
        else policy_.prefetch(hashes[i + kAhead]);
      }
      if constexpr (HasPrefetchNode<P>::value) {
        if (i + kNodeAhead < n) policy_.prefetch_node(hashes[i + kNodeAhead]);
      }
      if constexpr (HasPrefetchLinks<P>::value) {
        if (i + kLinkAhead < n) policy_.prefetch_links(hashes[i + kLinkAhead]);
      }
      if constexpr (kSampled) {
        if (hashes[i] >= sample_threshold) continue;
      }
      const Access a{keys[i], hashes[i], sizes[i], next ? next[i] : kNoNextAccess, kCost ? b.cost[i] : 1.0f};
      const bool hit = cache_get(policy_, a);
      ++n_req;
      req_byte += a.size;
      if (!hit) {
        ++n_miss;
        miss_byte += a.size;
        if constexpr (kCost) miss_cost.add(b.cost[i]);
      }
    }
    counters.n_req += n_req;
    counters.n_miss += n_miss;
    counters.n_req_byte += req_byte;
    counters.n_miss_byte += miss_byte;
  }

  P policy_;
};

template <class P>
std::unique_ptr<Simulator> make_simulator(const PolicyConfig& config) {
  return std::make_unique<PolicySimulator<P>>(config);
}

// Factories, one per policy file.
std::unique_ptr<Simulator> make_lru(const PolicyConfig&);
std::unique_ptr<Simulator> make_fifo(const PolicyConfig&);
std::unique_ptr<Simulator> make_lfu(const PolicyConfig&);
std::unique_ptr<Simulator> make_arc(const PolicyConfig&);
std::unique_ptr<Simulator> make_twoq(const PolicyConfig&);
std::unique_ptr<Simulator> make_s3fifo(const PolicyConfig&);
std::unique_ptr<Simulator> make_sieve(const PolicyConfig&);
std::unique_ptr<Simulator> make_clock(const PolicyConfig&);
std::unique_ptr<Simulator> make_belady(const PolicyConfig&);
std::unique_ptr<Simulator> make_slru(const PolicyConfig&);
std::unique_ptr<Simulator> make_gdsf(const PolicyConfig&);
std::unique_ptr<Simulator> make_wtinylfu(const PolicyConfig&);
std::unique_ptr<Simulator> make_lirs(const PolicyConfig&);
std::unique_ptr<Simulator> make_lecar(const PolicyConfig&);
std::unique_ptr<Simulator> make_lhd(const PolicyConfig&);

// Resolves a spec against the table (defaults + given values) for a capacity.
PolicyConfig make_config(const PolicySpec& spec, uint64_t capacity, bool bytes);
std::unique_ptr<Simulator> make_simulator(const PolicySpec& spec, uint64_t capacity, bool bytes);

// Objects to size the tables for up front: the capacity in object mode; in byte mode the tables
// start small and grow with what the cache holds.
inline size_t expected_objects(const PolicyConfig& c) {
  if (c.bytes) return 1024;
  return static_cast<size_t>(c.capacity < (uint64_t(1) << 22) ? c.capacity : (uint64_t(1) << 22)) + 16;
}

// What every policy holds: its capacity and its object table, with the members of the interface that
// follow from them alone. A policy derives from it and adds its lists, find, insert, evict and
// occupied (and hides can_insert or memory_bytes where it admits less or holds more). Policies with
// ghost lists pass table_scale 2: the table holds the ghosts' keys as well as the cached objects.
template <class Node>
class PolicyBase {
 public:
  explicit PolicyBase(const PolicyConfig& c, size_t table_scale = 1)
      : capacity_(c.capacity), table_(expected_objects(c) * table_scale) {}

  bool can_insert(const Access& a) const { return a.size <= capacity_; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { table_.prefetch(hash); }
  void prefetch_node(uint64_t hash) const { table_.prefetch_node(hash); }
  size_t memory_bytes() const { return table_.memory_bytes(); }

 protected:
  // Adds the missed object to the table and to the head of `list`; returns its node.
  uint32_t insert_front(List& list, const Access& a) {
    const uint32_t n = table_.insert(a.key, a.hash);
    table_[n].size = a.size;
    list.push_front(table_, n, a.size);
    return n;
  }
  // Unlinks node n from `list` and forgets the object. Dropping the tail (an eviction) fetches what the
  // next eviction from the same list reads.
  void drop(List& list, uint32_t n) {
    const bool tail = n == list.tail;
    list.remove(table_, n, table_[n].size);
    table_.erase(n);
    if (tail) table_.prefetch_victim(list.tail, true);
  }
  // For a policy whose hits relink the node (see HasPrefetchLinks); it opts in with a public
  // prefetch_links(hash) that calls this.
  void prefetch_links_of(uint64_t hash) const { table_.prefetch_links(hash); }

  uint64_t capacity_;
  ObjectTable<Node> table_;
};

}  // namespace lite::cache::detail
