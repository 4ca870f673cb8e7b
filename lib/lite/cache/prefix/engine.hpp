#pragma once
// Engine mode (docs/cache-sim.md "Engine mode"): the prefix study replayed as a serving engine runs it, not as
// the ideal model (every request served at once, all its blocks cached). Requests arrive at their timestamps and
// hold their blocks while they run: from admission through the prefill (the cost model's TTFT, when one is given)
// and output_length decode steps of decode_ms each. Running requests' blocks are pinned; when the blocks a
// request needs cannot be found room for among unpinned ones, it waits (FCFS, as both engines' schedulers hold
// the head of their waiting queue) until running requests finish. Each engine is one file (engine_vllm.cpp,
// engine_sglang.cpp) behind EngineCache, listed in the table of engines.cpp; the event loop is replay_engine.cpp.
// Generated tokens fill blocks with fresh ids no later prompt matches (the trace has no ids for them).
// Torch-free; internal to the prefix mode.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix {

// The KV tokens request r holds when it finishes: its prompt and every generated token but the last (whose KV
// is never computed: decoding stops once it is sampled).
inline uint64_t kv_tokens(const BlockTrace& t, size_t r) {
  return uint64_t(t.input_tokens[r]) + (t.output_tokens[r] ? t.output_tokens[r] - 1 : 0);
}

struct EngineSetup {
  const BlockTrace* trace = nullptr;
  uint64_t capacity_blocks = 0;
};

// One engine's KV block pool. Block ids below trace->blocks() are the trace's; an engine gives generated blocks
// (and vLLM the prompt's partial last block) ids above them, from generated_block().
class EngineCache {
 public:
  virtual ~EngineCache() = default;
  // Blocks request r holds while it runs: the room it needs with nothing cached.
  virtual uint64_t blocks_needed(size_t r) const = 0;
  // Admits request r if room can be made for its blocks without evicting a pinned one: returns true, the prompt
  // tokens hit in `hit_tokens`, and its blocks cached (where the engine caches them) and pinned. False: nothing
  // changed; the request waits for a running one to finish.
  virtual bool admit(size_t r, uint64_t& hit_tokens) = 0;
  // Request r finished decoding: its blocks unpinned, those full ones the engine keeps cached and evictable.
  virtual void finish(size_t r) = 0;
  virtual bool cached(uint32_t block) const = 0;
  virtual uint64_t occupied() const = 0;  // blocks holding KV: pinned or cached
  virtual uint64_t evicted() const = 0;   // cached blocks evicted so far
  // The id of the j-th block request r fills beyond its trace ids.
  virtual uint32_t generated_block(size_t r, uint32_t j) const = 0;
};

struct EngineEntry {
  const char* name;         // "vllm"
  const char* description;  // one line: the rules and where they come from
  std::unique_ptr<EngineCache> (*make)(const EngineSetup&);  // null: the ideal model (the policy's replay)
};

// The engine table (engines.cpp): ideal, vllm, sglang.
const std::vector<EngineEntry>& engine_table();
std::vector<std::string> engine_names();

// "vllm", "sglang:decode-ms=30": the engine and its per-token decode time. Throws OptionError("engine").
struct EngineSpec {
  const EngineEntry* engine = nullptr;
  double decode_ms = 20;  // per generated token: a typical inter-token latency of a large model on one GPU node
};
EngineSpec parse_engine(const std::string& text);

std::unique_ptr<EngineCache> make_vllm_engine(const EngineSetup& s);
std::unique_ptr<EngineCache> make_sglang_engine(const EngineSetup& s);

// Per request, the first of its generated block ids (ids from trace.blocks() up), for `extra(r)` blocks each.
template <class Extra>
std::vector<uint64_t> generated_ranges(const BlockTrace& t, Extra extra) {
  std::vector<uint64_t> first(t.requests() + 1, t.blocks());
  for (size_t r = 0; r < t.requests(); ++r) first[r + 1] = first[r] + extra(r);
  return first;
}

}  // namespace lite::cache::prefix
