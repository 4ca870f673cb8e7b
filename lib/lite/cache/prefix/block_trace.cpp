// Prefix traces, one JSON object a line: Mooncake's (timestamp, input_length, output_length, hash_ids) and token
// ids ("tokens" or "prompt_token_ids", with optional timestamp and output_length), cut into blocks here and
// hashed as a chain. Every field is checked; a bad line names FILE:LINE and the field.
#include "lite/cache/prefix/block_trace.hpp"
#include "lite/cache/prefix/block_ids.hpp"
#include "lite/cache/prefix/request_line.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "lite/cache/huge_pages.hpp"
#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

uint32_t default_block_tokens(PrefixFormat f) { return f == PrefixFormat::mooncake ? 512 : 16; }

std::string format_name(PrefixFormat f) { return f == PrefixFormat::mooncake ? "mooncake" : "tokens"; }

bool sniff_prefix_format(std::string_view head, PrefixFormat& format) {
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || head[first] != '{') return false;
  const std::string_view line = head.substr(first, head.find('\n', first) - first);
  if (line.find("\"hash_ids\"") != std::string_view::npos) {
    format = PrefixFormat::mooncake;
    return true;
  }
  if (line.find("\"tokens\"") != std::string_view::npos || line.find("\"prompt_token_ids\"") != std::string_view::npos) {
    format = PrefixFormat::token_ids;
    return true;
  }
  return false;
}

uint64_t chain_hash(uint64_t parent_hash, const int64_t* tokens, size_t n) {
  // 64-bit multiply-xorshift mixing per token (splitmix64's finalizer), seeded by the parent: a block's hash
  // covers its whole prefix, as vLLM's hash_block_tokens(parent_hash, tokens) does.
  uint64_t h = parent_hash ^ 0x9e3779b97f4a7c15ULL ^ (uint64_t(n) << 32);
  for (size_t i = 0; i < n; ++i) {
    h ^= uint64_t(tokens[i]) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return h;
}

namespace {

// One line's request before its blocks get dense ids.
struct LineRequest {
  int64_t timestamp = 0;
  uint64_t input_tokens = 0, output_tokens = 0;
  const std::vector<uint64_t>* block_keys = nullptr;  // the line's hash ids, or its token ids' chain hashes
};

void require_list(bool present, const char* field) {
  if (!present) throw LineError(field, "is missing");
}

uint64_t required(const std::optional<uint64_t>& v, const char* field) {
  if (!v) throw LineError(field, "is missing");
  return *v;
}

LineRequest parse_mooncake(const RequestLine& line, uint32_t block_tokens) {
  LineRequest q;
  q.timestamp = int64_t(required(line.timestamp, "timestamp"));
  q.input_tokens = required(line.input_length, "input_length");
  q.output_tokens = required(line.output_length, "output_length");
  // An empty prompt is no request (vLLM refuses one before scheduling): it would count as a request that hits nothing.
  if (q.input_tokens == 0) throw LineError("input_length", "is 0, but a request has at least one prompt token");
  require_list(line.has_hash_ids, "hash_ids");
  q.block_keys = &line.hash_ids;
  const uint64_t expected = (q.input_tokens + block_tokens - 1) / block_tokens;
  if (line.hash_ids.size() != expected)
    throw LineError("hash_ids", fmt::format("holds {} blocks but input_length {} at {} tokens a block needs {}",
                                            line.hash_ids.size(), q.input_tokens, block_tokens, expected));
  return q;
}

// `keys` receives the blocks' chain hashes.
LineRequest parse_token_ids(const RequestLine& line, uint32_t block_tokens, std::vector<uint64_t>& keys) {
  LineRequest q;
  require_list(line.has_tokens, line.tokens_key);
  const std::vector<uint64_t>& ids = line.tokens;
  q.timestamp = int64_t(line.timestamp.value_or(0));
  q.output_tokens = line.output_length.value_or(0);
  q.input_tokens = ids.size();
  if (ids.empty()) throw LineError(line.tokens_key, "is empty, but a request has at least one prompt token");
  std::vector<int64_t> block(block_tokens);
  uint64_t h = 0;
  keys.clear();
  for (size_t start = 0; start < ids.size(); start += block_tokens) {
    const size_t n = std::min<size_t>(block_tokens, ids.size() - start);
    for (size_t i = 0; i < n; ++i) block[i] = int64_t(ids[start + i]);
    h = chain_hash(h, block.data(), n);
    keys.push_back(h);
  }
  q.block_keys = &keys;
  return q;
}

// Builds the BlockTrace line by line: dense ids, one parent per block, timestamps in order.
class TraceBuilder {
 public:
  TraceBuilder(const BlockTraceOptions& o, std::string name, TraceFacts& facts)
      : o_(o), name_(std::move(name)), facts_(facts), ids_(o.format == PrefixFormat::mooncake) {
    trace_.block_tokens = o.block_tokens ? o.block_tokens : default_block_tokens(o.format);
  }

  void line(std::string_view text, uint64_t line_number) {
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank lines are not requests
    try {
      add(parse(text));
    } catch (const LineError& e) {
      if (!o_.skip_bad_lines)
        throw InputError(fmt::format("{}:{}", name_, line_number), fmt::format("field '{}' {}", e.field, e.what()),
                         o_.bad_line_fix);
      ++facts_.bad_lines_skipped;
    }
  }

  // Room for a file of `bytes` (0: unknown): Mooncake's lines take about 10 bytes a block reference and its
  // conversation trace a distinct block per 22 bytes (no rehash then), a request per about 330 bytes (room for
  // one per 256); a token id takes about 6 bytes. Growing these by doubling instead copied and faulted in ~10% of a large trace's read.
  void reserve(uint64_t bytes) {
    trace_.refs.reserve(bytes / 10);
    const uint64_t blocks = o_.format == PrefixFormat::mooncake ? bytes / 22 : bytes / (6 * uint64_t(trace_.block_tokens));
    ids_.reserve(blocks);
    trace_.parent.reserve(blocks);
    const uint64_t requests = bytes / 256;
    trace_.arrival_ms.reserve(requests);
    trace_.input_tokens.reserve(requests);
    trace_.output_tokens.reserve(requests);
    trace_.first_ref.reserve(requests + 1);
    detail::advise_huge_pages(trace_.refs);  // first touches of a large trace's arrays cost more than its replay
    detail::advise_huge_pages(trace_.parent);
  }

  BlockTrace finish() {
    facts_.block_tokens = trace_.block_tokens;
    facts_.requests = trace_.requests();
    facts_.block_refs = trace_.refs.size();
    facts_.distinct_blocks = trace_.blocks();
    if (!trace_.arrival_ms.empty())
      facts_.duration_s = double(trace_.arrival_ms.back() - trace_.arrival_ms.front()) / 1000.0;
    if (trace_.requests() == 0)
      throw InputError(name_, "holds no requests", "give a trace with one JSON request a line (docs/cache-sim.md)");
    return std::move(trace_);
  }

 private:
  LineRequest parse(std::string_view text) {
    scan_request_line(text, line_);
    return o_.format == PrefixFormat::mooncake ? parse_mooncake(line_, trace_.block_tokens)
                                               : parse_token_ids(line_, trace_.block_tokens, chain_keys_);
  }

  // Checks the whole line before changing the trace, so a skipped line leaves no trace of itself.
  void add(const LineRequest& q) {
    if (!trace_.arrival_ms.empty() && q.timestamp < trace_.arrival_ms.back())
      throw LineError("timestamp", fmt::format("{} is earlier than the line before ({}): requests must be in arrival "
                                               "order",
                                               q.timestamp, trace_.arrival_ms.back()));
    const std::vector<uint64_t>& keys = *q.block_keys;
    const size_t n = keys.size();
    dense_.resize(n);
    constexpr size_t kAhead = 8;  // lookups in flight: a prompt's cache misses overlap (in the table)
    for (size_t i = 0; i < std::min(n, kAhead); ++i) ids_.prefetch(keys[i]);
    for (size_t i = 0; i < n; ++i) {
      if (i + kAhead < n) ids_.prefetch(keys[i + kAhead]);
      const uint64_t fresh = trace_.blocks() + fresh_keys_.size();
      if (fresh + 1 >= kNoBlock && ids_.find(keys[i]) == kNoBlock) {
        forget_fresh();
        throw LineError("hash_ids", "makes more than 4,294,967,294 distinct blocks");
      }
      // new: known from here on (forgotten again if the line is refused)
      dense_[i] = ids_.find_or_insert(keys[i], uint32_t(fresh));
      if (dense_[i] == fresh) fresh_keys_.push_back(keys[i]);
      check_parent(q, i);
    }
    commit(q);
  }

  // A block id names its whole prefix: the same id after another block is refused. That also refuses an id twice
  // in one prompt: following the repeats back, some pair differs in its parent, or one is the first block.
  void check_parent(const LineRequest& q, size_t i) {
    const uint32_t want = i == 0 ? kNoBlock : dense_[i - 1];
    const uint32_t b = dense_[i];
    uint32_t have = want;
    if (b < trace_.blocks()) have = trace_.parent[b];
    else if (b - trace_.blocks() < pending_parent_.size()) have = pending_parent_[b - trace_.blocks()];
    if (have != want) {
      forget_fresh();
      throw LineError("hash_ids", fmt::format("block {} (position {}) appeared after another block before: an id must "
                                              "stand for its whole prefix",
                                              (*q.block_keys)[i], i));
    }
    if (b >= trace_.blocks() && b - trace_.blocks() == pending_parent_.size()) pending_parent_.push_back(want);
  }

  void forget_fresh() {
    for (uint64_t key : fresh_keys_) ids_.erase(key);
    fresh_keys_.clear();
    pending_parent_.clear();
  }

  void commit(const LineRequest& q) {
    trace_.parent.insert(trace_.parent.end(), pending_parent_.begin(), pending_parent_.end());
    fresh_keys_.clear();
    pending_parent_.clear();
    trace_.arrival_ms.push_back(q.timestamp);
    trace_.input_tokens.push_back(uint32_t(std::min<uint64_t>(q.input_tokens, UINT32_MAX)));
    trace_.output_tokens.push_back(uint32_t(std::min<uint64_t>(q.output_tokens, UINT32_MAX)));
    trace_.refs.insert(trace_.refs.end(), dense_.begin(), dense_.end());
    trace_.first_ref.push_back(trace_.refs.size());
    facts_.prompt_tokens += q.input_tokens;
    facts_.output_tokens += q.output_tokens;
  }

  const BlockTraceOptions& o_;
  std::string name_;
  TraceFacts& facts_;
  BlockTrace trace_;
  BlockIds ids_;
  RequestLine line_;                      // every line is scanned into this one (its lists' room is reused)
  std::vector<uint64_t> chain_keys_;      // token ids: this line's chain hashes
  std::vector<uint32_t> dense_;           // this line's blocks
  std::vector<uint64_t> fresh_keys_;      // this line's new keys, in id order
  std::vector<uint32_t> pending_parent_;  // their parents, by id - blocks()
};

template <class NextLine>
BlockTrace build(const BlockTraceOptions& o, const std::string& name, TraceFacts& facts, uint64_t bytes,
                 NextLine next_line) {
  facts.path = o.path;
  facts.format = format_name(o.format);
  TraceBuilder builder(o, name, facts);
  builder.reserve(bytes);
  std::string_view line;
  uint64_t number = 0;
  while (next_line(line, number)) {
    builder.line(line, number);
    if ((number & 4095) == 0) throw_if_interrupted();
  }
  return builder.finish();
}

}  // namespace

// A request's line: a prompt's token ids take up to about 8 bytes each, so 64 MiB holds a prompt of 8M tokens at
// least; the ids parsed from it take at most 4x its bytes, so a hostile line stays within a few hundred MiB.
constexpr size_t kMaxRequestLineBytes = size_t(64) << 20;

BlockTrace read_block_trace(const BlockTraceOptions& o, TraceFacts& facts) {
  const std::string name = detail::display_name(o.path);
  detail::BufferedInput in(detail::open_source(o.path, name), name);
  in.limit_lines(kMaxRequestLineBytes, "a prefix trace",
                 "check that the file holds one JSON request a line; a longer prompt is given as hash_ids");
  if (in.ensure(3) >= 3 && std::string_view(in.data(), 3) == "\xEF\xBB\xBF") in.consume(3);
  const uint64_t bytes = o.path == "-" ? 0 : detail::file_size_or_zero(o.path);
  return build(o, name, facts, bytes, [&](std::string_view& line, uint64_t& number) {
    if (!in.next_line(line)) return false;
    number = in.line_number();
    return true;
  });
}

BlockTrace parse_block_trace(std::string_view text, const BlockTraceOptions& o, TraceFacts& facts) {
  size_t pos = 0;
  return build(o, o.path.empty() ? "trace" : o.path, facts, text.size(), [&](std::string_view& line, uint64_t& number) {
    if (pos >= text.size()) return false;
    const size_t end = std::min(text.find('\n', pos), text.size());
    line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    return true;
  });
}

}  // namespace lite::cache::prefix

namespace lite::cache::prefix {

bool detect_prefix_format(const std::string& path, const std::string& format, PrefixFormat& out) {
  const std::string f = to_lower(format);
  if (f == "mooncake") return out = PrefixFormat::mooncake, true;
  if (f == "tokens" || f == "jsonl") return out = PrefixFormat::token_ids, true;
  if (f != "auto" || path == "-" || path.empty() || detail::is_stream(path)) return false;
  try {  // auto: the first line of the file (zstd too) says; a file that cannot be read is not decided here
    const std::string name = detail::display_name(path);
    detail::BufferedInput in(detail::open_source(path, name), name, size_t(64) << 10);
    const size_t n = in.ensure(size_t(64) << 10);
    return sniff_prefix_format(std::string_view(in.data(), n), out);
  } catch (const Error&) {
    return false;
  }
}

}  // namespace lite::cache::prefix
