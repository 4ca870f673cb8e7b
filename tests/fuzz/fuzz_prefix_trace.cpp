// Fuzz target: the prefix-trace reader (JSON lines with hash_ids, or token ids cut into chained blocks), read
// from memory, then one LRU replay of what it built. Input: byte 0 = bit 0 token-id format, bit 1
// --skip-bad-lines, bits 2-4 the block size (see kBlockTokens); the rest = the trace.
// Invariants of a trace the reader accepts: the per-request arrays agree in length, every block reference names
// a block, a block's parent came before it, arrivals never go back, each request's blocks cover its prompt;
// and the replay never hits more tokens than the prompts hold.
#include <array>

#include "fuzz_common.hpp"
#include "lite/cache/prefix/block_trace.hpp"
#include "lite/cache/prefix/replay.hpp"

namespace {

constexpr std::array<uint32_t, 8> kBlockTokens{0, 1, 2, 3, 4, 16, 512, 1u << 20};  // 1 << 20: the CLI's bound

void check_trace(const lite::cache::prefix::BlockTrace& t, const lite::cache::prefix::TraceFacts& facts) {
  using lite::cache::prefix::kNoBlock;
  fuzz::require(t.requests() > 0 && facts.requests == t.requests(), "an accepted trace holds its counted requests");
  fuzz::require(t.input_tokens.size() == t.requests() && t.output_tokens.size() == t.requests() &&
                    t.first_ref.size() == t.requests() + 1 && t.first_ref.back() == t.refs.size(),
                "per-request arrays agree");
  for (uint32_t b : t.refs) fuzz::require(b < t.blocks(), "a reference names a block");
  for (size_t b = 0; b < t.blocks(); ++b)
    fuzz::require(t.parent[b] == kNoBlock || t.parent[b] < b, "a block's parent came before it");
  for (size_t r = 0; r < t.requests(); ++r) {
    fuzz::require(r == 0 || t.arrival_ms[r] >= t.arrival_ms[r - 1], "arrivals never go back");
    fuzz::require(t.first_ref[r] <= t.first_ref[r + 1], "a request's blocks are a run");
    fuzz::require(t.hit_tokens(r, t.block_count(r)) == t.input_tokens[r], "a request's blocks cover its prompt");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace lite::cache::prefix;
  const fuzz::Split in = fuzz::split_flags(data, size);
  BlockTraceOptions o;
  o.format = (in.flags & 1) ? PrefixFormat::token_ids : PrefixFormat::mooncake;
  o.skip_bad_lines = (in.flags & 2) != 0;
  o.block_tokens = kBlockTokens[(in.flags >> 2) & 7];
  fuzz::expect_clean([&] {
    TraceFacts facts;
    const BlockTrace t = parse_block_trace(in.rest, o, facts);
    check_trace(t, facts);
    ReplaySetup s;
    s.trace = &t;
    s.policy = &find_prefix_policy("lru");
    s.capacity_blocks = 1 + (in.flags >> 5);
    const PrefixRow row = replay(s);
    fuzz::require(row.hit_tokens <= row.prompt_tokens && row.requests == t.requests(), "hits within the prompts");
  });
  return 0;
}
