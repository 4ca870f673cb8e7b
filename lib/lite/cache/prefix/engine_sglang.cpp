// sglang: SGLang's RadixCache (python/sglang/srt/mem_cache/radix_cache.py, managers/schedule_batch.py). The
// cached blocks form a tree closed under prefixes; rules and their sources:
// - the hit is the longest cached prefix, capped at input_length - 1 tokens (Req.adjust_max_prefix_ids: "need at
//   least one token to compute logits"); SGLang matches tokens (page size 1), so a cached partial last block
//   counts its tokens, as in the ideal model;
// - a running request's path is locked (inc_lock_ref on its last node walks to the root) and a node with
//   lock_ref > 0 is never evicted; the prompt is inserted when its prefill is done (cache_unfinished_req);
// - when it finishes, its prompt and output are inserted (cache_finished_req) and the path unlocked
//   (dec_lock_ref), every node on it stamped with the time (last_access_time);
// - eviction pops leaves by last_access_time from a heap and pushes a parent once its last child is gone
//   (RadixCache.evict), so only unlocked leaves go; a leaf is a radix node, a run of blocks inserted together,
//   and goes whole, so an eviction may free more than it needs (`num_evicted < num_tokens` is its only stop);
// - a match that ends inside a node splits it (_match_prefix_helper, _split_node), and the lower part it did
//   not reach is stamped with the match's time all the same (the node is stamped before it is split).
// Memory is counted in blocks: a running request holds its prompt's nodes (locked) and room for its output from
// admission on (SGLang reserves decode room as it goes; here the request waits at admission instead of being
// retracted later).
#include <algorithm>

#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/indexed_heap.hpp"

namespace lite::cache::prefix {
namespace {

class SglangRadixCache final : public EngineCache {
 public:
  explicit SglangRadixCache(const EngineSetup& s)
      : trace_(*s.trace),
        capacity_(s.capacity_blocks),
        generated_first_(generated_ranges(trace_, [this](size_t r) { return generated_blocks(r); })),
        parent_(trace_.parent),
        cached_(generated_first_.back(), 0),
        children_(generated_first_.back(), 0),
        lock_(generated_first_.back(), 0),
        next_(generated_first_.back(), kNoBlock),
        head_(generated_first_.back(), 0),
        leaves_(generated_first_.back()) {
    parent_.resize(generated_first_.back(), kNoBlock);
  }

  uint64_t blocks_needed(size_t r) const override { return trace_.block_count(r) + generated_blocks(r); }

  bool admit(size_t r, uint64_t& hit_tokens) override {
    const uint32_t* prompt = trace_.blocks_of(r);
    const uint32_t n = trace_.block_count(r);
    const uint32_t k = cached_prefix(trace_, r, [this](uint32_t b) { return cached_[b] != 0; });
    if (k > 0) split_below(prompt[k - 1]);  // match_prefix splits the node it ends inside, even if r then waits
    uint64_t newly_locked = 0;
    for (uint32_t i = 0; i < k; ++i) newly_locked += lock_[prompt[i]] == 0;
    const uint64_t new_blocks = (n - k) + generated_blocks(r);
    if (locked_ + held_ + newly_locked + new_blocks > capacity_) return false;
    const uint32_t input = trace_.input_tokens[r];
    hit_tokens = std::min<uint64_t>(trace_.hit_tokens(r, k), input ? input - 1 : 0);
    ++clock_;
    for (uint32_t i = 0; i < k; ++i) lock(prompt[i]);  // before evicting: the hit path is never the victim
    while (cached_count_ + held_ + new_blocks > capacity_) evict_leaf();
    for (uint32_t i = k; i < n; ++i) {
      insert(prompt[i], i ? prompt[i - 1] : kNoBlock, i == k);
      lock(prompt[i]);
    }
    held_ += generated_blocks(r);  // room for the output, outside the tree until it is inserted
    return true;
  }

  void finish(size_t r) override {
    const uint32_t* prompt = trace_.blocks_of(r);
    const uint32_t n = trace_.block_count(r);
    ++clock_;
    uint32_t parent = n ? prompt[n - 1] : kNoBlock;
    held_ -= generated_blocks(r);
    for (uint32_t j = 0; j < generated_blocks(r); ++j) {
      const uint32_t b = generated_block(r, j);
      parent_[b] = parent;
      insert(b, parent, j == 0);
      parent = b;
    }
    for (uint32_t i = n; i-- > 0;) unlock(prompt[i]);
  }

  bool cached(uint32_t b) const override { return cached_[b] != 0; }
  uint64_t occupied() const override { return cached_count_ + held_; }
  uint64_t evicted() const override { return evicted_; }
  uint32_t generated_block(size_t r, uint32_t j) const override { return uint32_t(generated_first_[r] + j); }

 private:
  // Blocks the output fills beyond the prompt's (its partial last block takes the first output tokens).
  uint32_t generated_blocks(size_t r) const {
    const uint64_t total = (kv_tokens(trace_, r) + trace_.block_tokens - 1) / trace_.block_tokens;
    return uint32_t(total - trace_.block_count(r));
  }
  HeapKey now() const { return {double(clock_), 0}; }
  // A block joins the tree: `head` when it starts a new node (the first of an inserted run), else it extends
  // its parent's node.
  void insert(uint32_t b, uint32_t parent, bool head) {
    cached_[b] = 1;
    ++cached_count_;
    head_[b] = head;
    next_[b] = kNoBlock;
    if (!head) next_[parent] = b;
    leaves_.set_key(b, now());
    if (parent != kNoBlock && children_[parent]++ == 0 && leaves_.contains(parent)) leaves_.remove(parent);
    if (lock_[b] == 0) leaves_.push(b);
  }
  void lock(uint32_t b) {
    leaves_.set_key(b, now());
    if (lock_[b]++ != 0) return;
    ++locked_;
    if (leaves_.contains(b)) leaves_.remove(b);
  }
  void unlock(uint32_t b) {
    leaves_.set_key(b, now());
    if (--lock_[b] != 0) return;
    --locked_;
    if (children_[b] == 0) leaves_.push(b);
  }
  // The match ended at b inside a node: the node is split below b (RadixCache._split_node), and the lower part,
  // which the match did not reach, keeps the stamp _match_prefix_helper gave the whole node before splitting it.
  // The match runs before the admission's operation (clock_ + 0.5): a request that then waits leaves it too.
  void split_below(uint32_t b) {
    uint32_t c = next_[b];
    if (c == kNoBlock) return;
    next_[b] = kNoBlock;
    head_[c] = 1;
    while (next_[c] != kNoBlock) c = next_[c];  // the lower node's last block: the one a leaf's order reads
    leaves_.set_key(c, {double(clock_) + 0.5, 0});
  }
  // The unlocked leaf node used longest ago goes whole, last block first (RadixCache.evict frees a leaf node's
  // whole value, so it may free more than asked); its parent becomes a leaf once its last child has gone.
  void evict_leaf() {
    uint32_t victim = leaves_.top();
    leaves_.remove(victim);
    for (;;) {
      cached_[victim] = 0;
      --cached_count_;
      ++evicted_;
      const uint32_t parent = parent_[victim];
      if (parent == kNoBlock) return;
      if (!head_[victim]) {  // the block above is the same node's: it goes next
        next_[parent] = kNoBlock;
        --children_[parent];
        victim = parent;
        continue;
      }
      if (--children_[parent] == 0 && lock_[parent] == 0) leaves_.push(parent);
      return;
    }
  }

  const BlockTrace& trace_;
  uint64_t capacity_;
  std::vector<uint64_t> generated_first_;
  std::vector<uint32_t> parent_;  // the trace's parents, then each generated block's
  std::vector<uint8_t> cached_;
  std::vector<uint32_t> children_, lock_;  // cached children; running requests whose path holds the block
  std::vector<uint32_t> next_;             // the block below in the same radix node, or kNoBlock at its end
  std::vector<uint8_t> head_;              // the block starts a radix node
  IndexedHeap leaves_;                     // unlocked cached leaves by last access
  uint64_t clock_ = 0, cached_count_ = 0, locked_ = 0, held_ = 0, evicted_ = 0;
};

}  // namespace

std::unique_ptr<EngineCache> make_sglang_engine(const EngineSetup& s) {
  return std::make_unique<SglangRadixCache>(s);
}

}  // namespace lite::cache::prefix
