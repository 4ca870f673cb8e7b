#pragma once
// The one-pass exact LRU miss-ratio curve (Mattson et al. 1970): an LRU cache of capacity C hits a
// request iff the request's stack distance (the bytes, or objects, of the distinct objects touched
// since the previous request to the same object, plus its own) is at most C. One pass over the trace
// gives every size at once.
//
// Stack distances come from a Fenwick tree over "last access" positions (O(log M) per request, M =
// live objects): each object contributes its size at the position of its latest request. Positions
// are compacted when they run out (an object's new position is the rank of its old one among the
// live positions, a popcount), so memory grows with objects, not with requests. In object mode the
// tree is a bitmap of positions plus a Fenwick tree over 64-position words (popcount inside a word),
// which keeps the tree in cache. Objects live in a flat open-addressing table of {key, position,
// size}: one random memory access per request.
//
// SHARDS (Waldspurger et al., FAST'15): with rate R only keys whose 64-bit hash is below R*2^64 are
// tracked and their distances are scaled by 1/R; SHARDS_adj adds the difference between the expected
// and the actual number of sampled requests to the first bucket. The fixed-size variant keeps at most
// `max_objects` sampled keys: when one more arrives, the key with the largest hash is dropped, the
// threshold falls to that hash, and the histogram is rescaled by R_new/R_old.
//
// Key partitions (--mrc-partitions, mrc_partitions.hpp): keep_hashes(lo, width) tracks only the keys whose
// hash falls in [lo, lo + width), a SHARDS sample of rate width / 2^64 anywhere on the hash circle.
//
// Byte mode is exact when every object keeps one size and for sizes >= the largest object: a larger
// object never enters an LRU cache of that size, which the stack model cannot express.
#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "lite/cache/cache_sim.hpp"
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {

class LruProfiler {
 public:
  // `query_sizes`: sizes (full-trace units) at which exact values are wanted; they are always edges
  // of the byte-mode histogram.
  LruProfiler(bool bytes, std::vector<uint64_t> query_sizes, double sample_rate = 1.0, uint64_t max_objects = 0);
  void run(const Batch& b);
  // total_requests: requests in the trace before sampling (for SHARDS_adj); 0 = no adjustment.
  MrcCurve finish(uint64_t total_requests, std::optional<double> target_hit_ratio) const;
  // The same with the dense curve at `grid` (ascending; byte mode: histogram edges, else the next edge up).
  MrcCurve finish(uint64_t total_requests, std::optional<double> target_hit_ratio, const std::vector<uint64_t>& grid) const;
  // Sample only keys with hash - lo < width (wrapping): one key partition. Before the first run().
  void keep_hashes(uint64_t lo, uint64_t width);
  // A grid that does not depend on the trace (object mode: every size to 4096, then 64 steps an octave;
  // byte mode: the histogram edges), up to the first size past every distance seen: the curves of several
  // profilers share its points, and beyond its end each one is flat.
  std::vector<uint64_t> shared_grid() const;
  double sampled_requests() const { return sampled_req_ * scale_; }
  double sampled_bytes() const { return sampled_bytes_ * scale_; }
  // Counters at each query size (exact integers without sampling).
  std::vector<Counters> counters_at_queries(uint64_t total_requests) const;
  size_t memory_bytes() const;

 private:
  struct Entry {
    uint64_t key;
    uint32_t pos;  // kNil = free slot
    uint32_t size;
  };
  // open addressing, linear probing, backward-shift deletion; entries move only when it grows
  Entry* find(uint64_t key, uint64_t hash);
  Entry* insert(uint64_t key, uint64_t hash);  // may grow: earlier pointers become invalid
  void erase(Entry* e);
  void grow();
  // Returns the request's scaled stack distance, 0 for a first access or a key not sampled.
  double access(uint64_t key, uint64_t hash, uint32_t size);
  void record(double distance, uint32_t request_size);
  uint64_t weight_after(uint32_t pos) const;  // sum of weights at positions > pos
  void add_weight(uint32_t pos, int64_t w);
  void compact();
  void drop_largest_hash();
  size_t bin_of(double distance) const;
  std::vector<uint64_t> default_grid() const;  // the dense curve's sizes (finish without a grid)
  size_t largest_distance_index() const;       // object mode: largest distance seen; byte mode: its bin

  bool bytes_;
  double rate_;
  uint64_t threshold_;
  uint64_t lo_ = 0;  // keep_hashes: the partition's first hash (0 otherwise: hash - 0 < threshold)
  uint64_t max_objects_;
  BigVector<Entry> slots_;
  size_t mask_ = 0, live_ = 0;
  // positions
  uint32_t now_ = 0, cap_ = 0;
  BigVector<uint64_t> bits_;       // live positions
  BigVector<uint32_t> word_tree_;  // object mode: Fenwick over popcounts of 64-position words
  BigVector<uint64_t> tree_;       // byte mode: Fenwick over sizes
  uint64_t total_weight_ = 0;
  // histogram: object mode indexed by distance; byte mode by bin over edges_
  std::vector<uint64_t> edges_;
  BigVector<double> hist_req_, hist_bytes_;  // object mode: hist_bytes_ unused (every size is 1)
  double cold_req_ = 0, cold_bytes_ = 0;
  double sampled_req_ = 0, sampled_bytes_ = 0;
  double scale_ = 1.0;  // stored counts * scale_ = full-trace counts (fixed-size SHARDS lowers it)
  uint64_t max_object_size_ = 0;
  bool sizes_vary_ = false;
  std::vector<uint64_t> queries_;
  std::priority_queue<std::pair<uint64_t, uint64_t>> by_hash_;  // fixed-size SHARDS: (hash, key)
  std::vector<uint32_t> pending_;  // object mode: histogram slots of this batch, updated in a second loop
};

}  // namespace lite::cache::detail
