#pragma once
// The interface every prefix policy implements, and the policy table (prefix_policies.cpp): the one place a
// prefix policy is registered. Block-level policies (lru, fifo, lfu) may evict any block, so a cached block can
// outlive its parent (an orphan: capacity held that no request can reach); prefix-closed ones (radix-*) evict
// only leaves of the prefix tree, as SGLang's RadixCache does. Internal to the prefix mode.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix {

struct CacheSetup {
  const BlockTrace* trace = nullptr;
  uint64_t capacity_blocks = 0;
  const std::vector<uint32_t>* next_use = nullptr;  // per block reference: the next request using it (reference)
  double attention_per_token = 1.0 / 32768;         // radix-cost: c / b of the prefill model
  std::vector<uint32_t>* evicted = nullptr;         // tiers: each victim appended, in eviction order
};

class BlockCache {
 public:
  virtual ~BlockCache() = default;
  // Request r: returns how many of its leading blocks were cached at its start, then caches its blocks (the
  // head used last). Never holds more than the capacity afterwards.
  virtual uint32_t serve(size_t r) = 0;
  virtual bool cached(uint32_t block) const = 0;
  virtual uint64_t occupied() const = 0;
};

struct PrefixPolicyEntry {
  const char* name;         // "radix-lru"
  const char* description;  // one line: the rule and where it comes from
  bool prefix_closed;       // evicts only leaves: never orphans
  bool needs_next_use;      // offline: reads the future (labelled a reference)
  std::unique_ptr<BlockCache> (*make)(const CacheSetup&);
};

const std::vector<PrefixPolicyEntry>& prefix_policy_table();
// Throws OptionError("policies") naming the known policies and the closest one.
const PrefixPolicyEntry& find_prefix_policy(const std::string& name);

// Factories, one per policy file.
std::unique_ptr<BlockCache> make_block_lru(const CacheSetup&);
std::unique_ptr<BlockCache> make_block_fifo(const CacheSetup&);
std::unique_ptr<BlockCache> make_block_lfu(const CacheSetup&);
std::unique_ptr<BlockCache> make_radix_lru(const CacheSetup&);
std::unique_ptr<BlockCache> make_radix_lfu(const CacheSetup&);
std::unique_ptr<BlockCache> make_radix_cost(const CacheSetup&);
std::unique_ptr<BlockCache> make_radix_reference(const CacheSetup&);

// The longest cached prefix of request r, counted before any of its blocks is touched.
template <class Cached>
uint32_t cached_prefix(const BlockTrace& t, size_t r, Cached cached) {
  const uint32_t* b = t.blocks_of(r);
  const uint32_t n = t.block_count(r);
  uint32_t k = 0;
  while (k < n && cached(b[k])) ++k;
  return k;
}

}  // namespace lite::cache::prefix
