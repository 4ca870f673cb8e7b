// Prefix traces, one JSON object a line: Mooncake's (timestamp, input_length, output_length, hash_ids) and token
// ids ("tokens" or "prompt_token_ids", with optional timestamp and output_length), cut into blocks here and
// hashed as a chain. Every field is checked; a bad line names FILE:LINE and the field.
#include "lite/cache/prefix/block_trace.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/json_input.hpp"
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
  std::vector<uint64_t> block_keys;
};

class LineError : public std::runtime_error {
 public:
  LineError(std::string field, const std::string& problem) : std::runtime_error(problem), field(std::move(field)) {}
  std::string field;
};

uint64_t whole_number(const nlohmann::json& v, const char* field, uint64_t max) {
  if (!v.is_number_integer()) throw LineError(field, fmt::format("'{}' is not a whole number", v.dump().substr(0, 40)));
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > max) throw LineError(field, fmt::format("{} is larger than {}", v.get<uint64_t>(), max));
    return v.get<uint64_t>();
  }
  const int64_t s = v.get<int64_t>();
  if (s < 0) throw LineError(field, fmt::format("{} is negative", s));
  if (uint64_t(s) > max) throw LineError(field, fmt::format("{} is larger than {}", s, max));
  return uint64_t(s);
}

const nlohmann::json& required(const nlohmann::json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end()) throw LineError(field, "is missing");
  return *it;
}

constexpr uint64_t kMaxTokens = uint64_t(1) << 32;  // a prompt longer than 4G tokens is not a prompt

LineRequest parse_mooncake(const nlohmann::json& obj, uint32_t block_tokens) {
  LineRequest q;
  q.timestamp = int64_t(whole_number(required(obj, "timestamp"), "timestamp", uint64_t(INT64_MAX)));
  q.input_tokens = whole_number(required(obj, "input_length"), "input_length", kMaxTokens);
  q.output_tokens = whole_number(required(obj, "output_length"), "output_length", kMaxTokens);
  const nlohmann::json& ids = required(obj, "hash_ids");
  if (!ids.is_array()) throw LineError("hash_ids", "is not a list of block ids");
  q.block_keys.reserve(ids.size());
  for (const auto& id : ids) q.block_keys.push_back(whole_number(id, "hash_ids", UINT64_MAX));
  const uint64_t expected = (q.input_tokens + block_tokens - 1) / block_tokens;
  if (q.block_keys.size() != expected)
    throw LineError("hash_ids", fmt::format("holds {} blocks but input_length {} at {} tokens a block needs {}",
                                            q.block_keys.size(), q.input_tokens, block_tokens, expected));
  return q;
}

LineRequest parse_token_ids(const nlohmann::json& obj, uint32_t block_tokens) {
  LineRequest q;
  const char* key = obj.contains("tokens") ? "tokens" : "prompt_token_ids";
  const nlohmann::json& tokens = required(obj, key);
  if (!tokens.is_array()) throw LineError(key, "is not a list of token ids");
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const auto& t : tokens) ids.push_back(int64_t(whole_number(t, key, uint64_t(INT64_MAX))));
  if (auto it = obj.find("timestamp"); it != obj.end())
    q.timestamp = int64_t(whole_number(*it, "timestamp", uint64_t(INT64_MAX)));
  if (auto it = obj.find("output_length"); it != obj.end())
    q.output_tokens = whole_number(*it, "output_length", kMaxTokens);
  q.input_tokens = ids.size();
  uint64_t h = 0;
  for (size_t start = 0; start < ids.size(); start += block_tokens) {
    h = chain_hash(h, ids.data() + start, std::min<size_t>(block_tokens, ids.size() - start));
    q.block_keys.push_back(h);
  }
  return q;
}

// Builds the BlockTrace line by line: dense ids, one parent per block, timestamps in order.
class TraceBuilder {
 public:
  TraceBuilder(const BlockTraceOptions& o, std::string name, TraceFacts& facts)
      : o_(o), name_(std::move(name)), facts_(facts) {
    trace_.block_tokens = o.block_tokens ? o.block_tokens : default_block_tokens(o.format);
  }

  void line(std::string_view text, uint64_t line_number) {
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank lines are not requests
    try {
      add(parse(text));
    } catch (const LineError& e) {
      if (!o_.skip_bad_lines)
        throw InputError(fmt::format("{}:{}", name_, line_number), fmt::format("field '{}' {}", e.field, e.what()),
                         "fix the line, or pass {skip_bad_lines} to skip malformed lines");
      ++facts_.bad_lines_skipped;
    }
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
    nlohmann::json obj;
    try {
      obj = parse_json_input(text, name_, "");
    } catch (const InputError&) {
      throw LineError("line", "is not one JSON object");
    }
    if (!obj.is_object()) throw LineError("line", "is not one JSON object");
    return o_.format == PrefixFormat::mooncake ? parse_mooncake(obj, trace_.block_tokens)
                                               : parse_token_ids(obj, trace_.block_tokens);
  }

  // Checks the whole line before changing the trace, so a skipped line leaves no trace of itself.
  void add(const LineRequest& q) {
    if (!trace_.arrival_ms.empty() && q.timestamp < trace_.arrival_ms.back())
      throw LineError("timestamp", fmt::format("{} is earlier than the line before ({}): requests must be in arrival "
                                               "order",
                                               q.timestamp, trace_.arrival_ms.back()));
    std::vector<uint32_t> dense(q.block_keys.size());
    size_t fresh = 0;
    for (size_t i = 0; i < q.block_keys.size(); ++i) {
      if (auto it = ids_.find(q.block_keys[i]); it != ids_.end()) {
        dense[i] = it->second;
      } else if (auto p = pending_.find(q.block_keys[i]); p != pending_.end()) {
        dense[i] = p->second;  // the same new id twice in one prompt: check_parent refuses it
      } else {
        dense[i] = uint32_t(trace_.blocks() + fresh++);
        pending_.emplace(q.block_keys[i], dense[i]);
      }
      check_parent(q, dense, i);
    }
    commit(q, dense);
  }

  // A block id names its whole prefix: the same id after another block (or twice in one prompt) is refused.
  void check_parent(const LineRequest& q, const std::vector<uint32_t>& dense, size_t i) {
    const uint32_t want = i == 0 ? kNoBlock : dense[i - 1];
    const uint32_t b = dense[i];
    uint32_t have = want;
    if (b < trace_.blocks()) have = trace_.parent[b];
    else if (auto it = pending_parent_.find(b); it != pending_parent_.end()) have = it->second;
    if (have != want || (i > 0 && std::find(dense.begin(), dense.begin() + i, b) != dense.begin() + i)) {
      pending_.clear();
      pending_parent_.clear();
      throw LineError("hash_ids", fmt::format("block {} (position {}) appeared after another block before: an id must "
                                              "stand for its whole prefix",
                                              q.block_keys[i], i));
    }
    if (b >= trace_.blocks()) pending_parent_[b] = want;
  }

  void commit(const LineRequest& q, const std::vector<uint32_t>& dense) {
    for (const auto& [key, id] : pending_) ids_.emplace(key, id);
    trace_.parent.resize(trace_.parent.size() + pending_.size());
    for (const auto& [id, parent] : pending_parent_) trace_.parent[id] = parent;
    pending_.clear();
    pending_parent_.clear();
    trace_.arrival_ms.push_back(q.timestamp);
    trace_.input_tokens.push_back(uint32_t(std::min<uint64_t>(q.input_tokens, UINT32_MAX)));
    trace_.output_tokens.push_back(uint32_t(std::min<uint64_t>(q.output_tokens, UINT32_MAX)));
    trace_.refs.insert(trace_.refs.end(), dense.begin(), dense.end());
    trace_.first_ref.push_back(trace_.refs.size());
    facts_.prompt_tokens += q.input_tokens;
    facts_.output_tokens += q.output_tokens;
    if (trace_.blocks() >= kNoBlock) throw LineError("hash_ids", "makes more than 4,294,967,294 distinct blocks");
  }

  const BlockTraceOptions& o_;
  std::string name_;
  TraceFacts& facts_;
  BlockTrace trace_;
  std::unordered_map<uint64_t, uint32_t> ids_, pending_;
  std::unordered_map<uint32_t, uint32_t> pending_parent_;
};

template <class NextLine>
BlockTrace build(const BlockTraceOptions& o, const std::string& name, TraceFacts& facts, NextLine next_line) {
  facts.path = o.path;
  facts.format = format_name(o.format);
  TraceBuilder builder(o, name, facts);
  std::string_view line;
  uint64_t number = 0;
  while (next_line(line, number)) {
    builder.line(line, number);
    if ((number & 4095) == 0) throw_if_interrupted();
  }
  return builder.finish();
}

}  // namespace

BlockTrace read_block_trace(const BlockTraceOptions& o, TraceFacts& facts) {
  const std::string name = detail::display_name(o.path);
  detail::BufferedInput in(detail::open_source(o.path, name), name);
  if (in.ensure(3) >= 3 && std::string_view(in.data(), 3) == "\xEF\xBB\xBF") in.consume(3);
  return build(o, name, facts, [&](std::string_view& line, uint64_t& number) {
    if (!in.next_line(line)) return false;
    number = in.line_number();
    return true;
  });
}

BlockTrace parse_block_trace(std::string_view text, const BlockTraceOptions& o, TraceFacts& facts) {
  size_t pos = 0;
  return build(o, o.path.empty() ? "trace" : o.path, facts, [&](std::string_view& line, uint64_t& number) {
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
