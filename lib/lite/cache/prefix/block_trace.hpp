#pragma once
// A prefix trace held compactly: per request its arrival, lengths and a run of dense block ids (4 bytes per block
// reference, a tenth of the JSON text), and per distinct block its parent. Every policy and capacity replays
// this one copy. Torch-free; internal to the prefix mode.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lite/cache/prefix/prefix_cache.hpp"

namespace lite::cache::prefix {

constexpr uint32_t kNoBlock = UINT32_MAX;

enum class PrefixFormat { mooncake, token_ids };

struct BlockTrace {
  uint32_t block_tokens = 0;
  std::vector<int64_t> arrival_ms;
  std::vector<uint32_t> input_tokens, output_tokens;
  std::vector<uint64_t> first_ref{0};  // request r's blocks are refs[first_ref[r], first_ref[r + 1])
  std::vector<uint32_t> refs;
  std::vector<uint32_t> parent;        // per block: the block before it in every request, or kNoBlock

  size_t requests() const { return arrival_ms.size(); }
  size_t blocks() const { return parent.size(); }
  const uint32_t* blocks_of(size_t r) const { return refs.data() + first_ref[r]; }
  uint32_t block_count(size_t r) const { return uint32_t(first_ref[r + 1] - first_ref[r]); }
  // Prompt tokens a hit on the first k blocks covers (the last block may be partial).
  uint64_t hit_tokens(size_t r, uint32_t k) const {
    return std::min<uint64_t>(uint64_t(k) * block_tokens, input_tokens[r]);
  }
};

struct BlockTraceOptions {
  std::string path;                 // "-" = stdin
  PrefixFormat format = PrefixFormat::mooncake;
  uint32_t block_tokens = 0;        // 0 = the format's default
  bool skip_bad_lines = false;
  // What a malformed line's error tells the user to do (lite optimize, which has no {skip_bad_lines}, says why).
  std::string bad_line_fix = "fix the line, or pass {skip_bad_lines} to skip malformed lines";
};

// The format's default block size: Mooncake's 512 tokens; vLLM's 16 for token ids.
uint32_t default_block_tokens(PrefixFormat f);
std::string format_name(PrefixFormat f);

// Reads the whole trace (zstd too), one JSON object a line. A bad line is an InputError naming FILE:LINE and the
// field (or skipped and counted with skip_bad_lines). Fills `facts`.
BlockTrace read_block_trace(const BlockTraceOptions& o, TraceFacts& facts);
// Parses JSONL text held in memory (tests, fuzzing).
BlockTrace parse_block_trace(std::string_view text, const BlockTraceOptions& o, TraceFacts& facts);

// The prefix format a trace's first line shows ("hash_ids" -> mooncake; "tokens"/"prompt_token_ids" -> token
// ids), or false when the first non-blank byte is not '{' or neither key is there.
bool sniff_prefix_format(std::string_view head, PrefixFormat& format);

// The prefix format of a trace: `format` when it names one ("mooncake", "tokens"), else for format "auto" what
// a regular file's first line shows (stdin and pipes are never sniffed: they can be read once). False: not a
// prefix trace, or the file cannot be read (the object mode's reader reports that).
bool detect_prefix_format(const std::string& path, const std::string& format, PrefixFormat& out);

// The chained hash of a block of token ids: covers the parent's hash, so equal hashes mean equal prefixes.
uint64_t chain_hash(uint64_t parent_hash, const int64_t* tokens, size_t n);

}  // namespace lite::cache::prefix
