// vllm: vLLM v1's prefix caching (vllm/v1/core/kv_cache_manager.py, block_pool.py, kv_cache_utils.py;
// docs/design/prefix_caching.md). The pool has capacity_blocks physical blocks; rules and their sources:
// - only full blocks are hashed and cached (hash_request_tokens hashes full blocks only), so the prompt's partial
//   last block and the blocks its generated tokens fill get ids of their own (no later prompt matches them);
// - the hit is capped so one prompt token is computed (get_computed_blocks: max_cache_hit_length =
//   num_tokens - 1, and find_longest_cache_hit keeps whole blocks of that);
// - a block in use has ref_cnt > 0 and is not in the free queue, so it cannot be evicted; hit blocks are
//   "touched" out of the queue before new blocks are allocated (BlockPool.touch, allocate_slots);
// - new blocks are popped from the free queue's head: never-used blocks first (the queue starts as every block),
//   and popping a cached block evicts it (BlockPool._maybe_evict_cached_block);
// - a finished request's blocks go to the queue's tail in reverse order, so its tail is evicted before its head
//   (KVCacheManager.free, "free blocks in reverse order"), cached or not: a partial block is a plain free slot
//   that still takes its turn in the queue.
// A request's blocks are all allocated when it is admitted (vLLM allocates decode blocks step by step; here the
// request waits at admission instead of being preempted later). A prompt block cached beyond the hit (behind
// the cap) is shared, where vLLM would allocate a duplicate.
#include <algorithm>

#include "lite/cache/prefix/block_list.hpp"
#include "lite/cache/prefix/engine.hpp"

namespace lite::cache::prefix {
namespace {

class VllmBlockPool final : public EngineCache {
 public:
  explicit VllmBlockPool(const EngineSetup& s)
      : trace_(*s.trace),
        capacity_(s.capacity_blocks),
        never_used_(s.capacity_blocks),
        generated_first_(generated_ranges(trace_, [this](size_t r) { return blocks_needed(r) - full_prompt_blocks(r); })),
        ref_(generated_first_.back(), 0),
        hashed_(generated_first_.back(), 0),
        free_queue_(generated_first_.back()) {}

  uint64_t blocks_needed(size_t r) const override {
    return (kv_tokens(trace_, r) + trace_.block_tokens - 1) / trace_.block_tokens;
  }

  bool admit(size_t r, uint64_t& hit_tokens) override {
    const uint32_t* prompt = trace_.blocks_of(r);
    const uint32_t full = full_prompt_blocks(r);
    uint64_t touched = 0, fresh = blocks_needed(r) - full;
    for (uint32_t i = 0; i < full; ++i)
      if (ref_[prompt[i]] == 0) ++(hashed_[prompt[i]] ? touched : fresh);
    if (pinned_ + touched + fresh > capacity_) return false;
    hit_tokens = uint64_t(hit_blocks(r)) * trace_.block_tokens;
    for (uint32_t i = 0; i < full; ++i) touch(prompt[i]);  // before any allocation: a hit is never the victim
    for (uint32_t i = 0; i < full; ++i) {
      if (ref_[prompt[i]] == 0 && !hashed_[prompt[i]]) allocate(prompt[i], true);  // cached at allocation
      pin(prompt[i]);
    }
    for (uint32_t j = 0; j < blocks_needed(r) - full; ++j) {
      allocate(generated_block(r, j), false);
      pin(generated_block(r, j));
    }
    return true;
  }

  void finish(size_t r) override {
    const uint32_t full = full_prompt_blocks(r);
    const uint64_t generated = blocks_needed(r) - full, filled = kv_tokens(trace_, r) / trace_.block_tokens - full;
    for (uint64_t j = generated; j-- > 0;) {
      const uint32_t b = generated_block(r, uint32_t(j));
      hashed_[b] = j < filled;  // a block its tokens filled is hashed and cached; a partial one is a free slot
      release(b);
    }
    for (uint32_t i = full; i-- > 0;) release(trace_.blocks_of(r)[i]);
  }

  bool cached(uint32_t b) const override { return hashed_[b] != 0; }
  uint64_t occupied() const override { return pinned_ + free_cached_; }
  uint64_t evicted() const override { return evicted_; }
  uint32_t generated_block(size_t r, uint32_t j) const override { return uint32_t(generated_first_[r] + j); }

 private:
  uint32_t full_prompt_blocks(size_t r) const { return trace_.input_tokens[r] / trace_.block_tokens; }
  // The longest hashed run of full prompt blocks, within input_length - 1 tokens.
  uint32_t hit_blocks(size_t r) const {
    const uint32_t input = trace_.input_tokens[r];
    const uint32_t limit = input ? (input - 1) / trace_.block_tokens : 0;
    const uint32_t* prompt = trace_.blocks_of(r);
    uint32_t k = 0;
    while (k < limit && hashed_[prompt[k]]) ++k;
    return k;
  }
  // A cached block nobody uses leaves the free queue (it cannot be evicted while in use).
  void touch(uint32_t b) {
    if (ref_[b] != 0 || !hashed_[b]) return;
    free_queue_.remove(b);  // pin() counts it as held next
    --free_listed_;
    --free_cached_;
  }
  // Room for one more block: a never-used one, else the free queue's head (evicting it when cached).
  void allocate(uint32_t b, bool hash) {
    if (never_used_ > 0) {
      --never_used_;
    } else {
      const uint32_t victim = free_queue_.tail();
      free_queue_.remove(victim);
      --free_listed_;
      if (hashed_[victim]) {
        hashed_[victim] = 0;
        --free_cached_;
        ++evicted_;
      }
    }
    hashed_[b] = hash;
  }
  void pin(uint32_t b) {
    if (ref_[b]++ == 0) ++pinned_;
  }
  void release(uint32_t b) {
    if (--ref_[b] != 0) return;
    --pinned_;
    free_queue_.push_front(b);  // the queue's tail: evicted after everything freed before it
    ++free_listed_;
    free_cached_ += hashed_[b];
  }

  const BlockTrace& trace_;
  uint64_t capacity_, never_used_;
  std::vector<uint64_t> generated_first_;
  std::vector<uint32_t> ref_;     // requests using the block
  std::vector<uint8_t> hashed_;   // in the hash map: a later prompt can hit it
  BlockList free_queue_;          // blocks nobody uses, front = most recently freed, tail() = next to go
  uint64_t pinned_ = 0, free_listed_ = 0, free_cached_ = 0, evicted_ = 0;
};

}  // namespace

std::unique_ptr<EngineCache> make_vllm_engine(const EngineSetup& s) { return std::make_unique<VllmBlockPool>(s); }

}  // namespace lite::cache::prefix
