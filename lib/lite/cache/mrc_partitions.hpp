#pragma once
// Key-partitioned LRU miss-ratio curves (--mrc-partitions N). Partition p of N holds the keys whose 64-bit
// hash (the hash SHARDS samples by) falls in [ceil(p*2^64/N), ceil((p+1)*2^64/N)): a SHARDS spatial sample
// of rate 1/N, and every key is in exactly one partition. Each partition's exact LRU curve, its distances
// scaled by N, estimates the whole trace's curve; the N estimates are combined into one, the mean weighted
// by each partition's requests (= the partitions' misses over all requests, which is also the plain mean
// of the N SHARDS_adj-corrected estimates), and their spread per size (min, max, standard error) is its
// error bar. The partitions may be profiled in one pass (one consumer each, on the simulation threads) or
// by separate processes (lite-mpi: rank r computes partitions r, r + ranks, ...; rank 0 combines).
//
// Every partition's dense curve lies on one trace-independent grid (LruProfiler::shared_grid), cut where
// its curve turns flat, so the combination is exact at every grid point and does not depend on which
// process computed which partition.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

// Partition p of n as a wrapping hash range: a key is in it iff hash - lo < width (width UINT64_MAX with
// n = 1: every hash).
struct HashRange {
  uint64_t lo = 0;
  uint64_t width = UINT64_MAX;
};
HashRange partition_range(size_t partition, size_t n);
// The partition a hash falls in: floor(hash * n / 2^64).
size_t partition_of(uint64_t hash, size_t n);
// The partitions a process computes when n are spread over `processes` (round robin).
std::vector<size_t> partitions_of_process(size_t n, int process, int processes);

// Combines the curves of all n partitions (any order; each exactly once) into the estimate with its spread.
// Throws std::logic_error for a missing or repeated partition.
MrcCurve combine_partitions(std::vector<PartitionCurve> parts, size_t n, std::optional<double> target_hit_ratio);

void to_json(nlohmann::json& j, const PartitionCurve& c);
PartitionCurve partition_curve_from_json(const nlohmann::json& j);

}  // namespace lite::cache
