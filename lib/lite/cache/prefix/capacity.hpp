#pragma once
// Capacities in the units people buy: blocks (a plain number), tokens ("3Mtok"), bytes through the model's KV
// bytes per token ("64GiB"), or shares of the trace's distinct blocks ("10%"); and the KV formats a study
// compares (--kv-bytes-per-token or --kv-layout, --kv-dtype). Internal to the prefix mode.
#include <optional>
#include <string>
#include <vector>

#include "lite/cache/prefix/prefix_cache.hpp"

namespace lite::cache::prefix {

// One --sizes item as written.
struct CapacitySpec {
  enum class Unit { blocks, tokens, bytes, share } unit = Unit::blocks;
  std::string text;
  double value = 0;  // blocks, tokens, bytes, or a share in (0, 1]
};

// Parses --sizes ("auto" = 12 shares of the distinct blocks from 1/2048 to all). OptionError("sizes").
std::vector<CapacitySpec> parse_capacities(const std::string& text);
// Bytes a value of this dtype takes: fp32 4, fp16/bf16 2, fp8/int8 1, int4 0.5. OptionError(key) otherwise.
double kv_dtype_bytes(const std::string& dtype, const std::string& key);
// The KV formats of a study: the base (from kv_bytes_per_token or kv_layout) first, then each --kv-dtype at the
// same layout; empty when neither is given. OptionError by key.
std::vector<KvFormat> resolve_kv_formats(const PrefixConfig& c);
// "3Mtok" written for a number of tokens, "1.5 GiB", "2,048 blocks".
std::string tokens_text(double tokens);

struct Capacity {
  std::string text;  // as the user wrote it ("" for auto)
  uint64_t blocks = 0;
  std::optional<double> bytes;
};
// The capacities in blocks for one KV format (nullptr: none), smallest first, without repeats. Bytes need a
// format; a capacity under one block is refused. OptionError("sizes").
std::vector<Capacity> resolve_capacities(const std::vector<CapacitySpec>& specs, const TraceFacts& trace,
                                         const KvFormat* kv);

}  // namespace lite::cache::prefix
