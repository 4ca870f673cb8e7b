// --sizes in blocks, tokens, bytes or shares, and the KV formats behind byte capacities (capacity.hpp).
#include "lite/cache/prefix/capacity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

namespace {

const char* const kSizesForm = "give blocks (4096), tokens (3Mtok), bytes with a KV size (64GiB) or shares (10%)";

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// "3M" -> 3e6: the decimal multipliers tokens are counted in.
std::optional<double> counted(std::string_view text) {
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': scale = 1e3; break;
      case 'M': scale = 1e6; break;
      case 'G': case 'B': scale = 1e9; break;
      case 'T': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  const auto v = parse_decimal(text);
  if (!v) return std::nullopt;
  return *v * scale;
}

CapacitySpec parse_one(const std::string& item) {
  CapacitySpec s;
  s.text = item;
  const std::string trimmed = trim(item);
  std::string_view t = trimmed;
  std::optional<double> v;
  if (ends_with(t, "%")) {
    s.unit = CapacitySpec::Unit::share;
    v = parse_decimal(t.substr(0, t.size() - 1));
    if (v) *v /= 100;
    if (v && !(*v > 0 && *v <= 1)) throw OptionError("sizes", fmt::format("'{}' is not a share in (0%, 100%]", item), kSizesForm);
  } else if (ends_with(t, "tokens") || ends_with(t, "tok")) {
    s.unit = CapacitySpec::Unit::tokens;
    v = counted(trim(t.substr(0, t.size() - (ends_with(t, "tokens") ? 6 : 3))));
  } else if (t.find_first_not_of("0123456789") == std::string_view::npos) {
    s.unit = CapacitySpec::Unit::blocks;
    v = parse_decimal(t);
  } else if (auto bytes = parse_byte_size(t)) {
    s.unit = CapacitySpec::Unit::bytes;
    v = double(*bytes);
  }
  if (!v || !(*v > 0) || !std::isfinite(*v))
    throw OptionError("sizes", fmt::format("'{}' is not a capacity", item), kSizesForm);
  s.value = *v;
  return s;
}

}  // namespace

std::vector<CapacitySpec> parse_capacities(const std::string& text) {
  std::vector<CapacitySpec> specs;
  if (trim(text) == "auto") {
    for (int e = 11; e >= 0; --e) specs.push_back({CapacitySpec::Unit::share, "", std::ldexp(1.0, -e)});
    return specs;
  }
  for (const auto& item : split(text, ',')) specs.push_back(parse_one(item));
  if (specs.empty()) throw OptionError("sizes", "is empty", kSizesForm);
  return specs;
}

double kv_dtype_bytes(const std::string& dtype, const std::string& key) {
  const std::string d = to_lower(dtype);
  if (d == "fp32" || d == "float32") return 4;
  if (d == "fp16" || d == "bf16" || d == "float16" || d == "bfloat16") return 2;
  if (d == "fp8" || d == "int8" || d == "e4m3" || d == "e5m2") return 1;
  if (d == "int4" || d == "fp4") return 0.5;
  throw OptionError(key, fmt::format("unknown KV dtype '{}'", dtype), "known: fp32, fp16, bf16, fp8, int8, int4");
}

namespace {

// "layers=80,kv-heads=8,head-dim=128,dtype=fp16" -> bytes per token (K and V) and the dtype.
KvFormat parse_layout(const std::string& text) {
  double layers = 0, heads = 0, dim = 0;
  std::string dtype = "fp16";
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    const std::string key = to_lower(trim(item.substr(0, eq)));
    const std::string value = trim(eq == std::string::npos ? std::string() : item.substr(eq + 1));
    if (key == "dtype") {
      kv_dtype_bytes(value, "kv_layout");
      dtype = to_lower(value);
      continue;
    }
    const auto v = parse_decimal(value);
    const bool whole = v && *v >= 1 && *v <= 1e6 && std::floor(*v) == *v;
    double* slot = key == "layers" ? &layers : key == "kv-heads" || key == "kv_heads" ? &heads
                 : key == "head-dim" || key == "head_dim" ? &dim : nullptr;
    if (!slot) throw OptionError("kv_layout", fmt::format("unknown key '{}'", key), "keys: layers, kv-heads, head-dim, dtype");
    if (!whole) throw OptionError("kv_layout", fmt::format("{}={} is not a whole number from 1 to 1000000", key, value),
                                  "e.g. layers=80,kv-heads=8,head-dim=128,dtype=fp16");
    *slot = *v;
  }
  if (!layers || !heads || !dim)
    throw OptionError("kv_layout", "needs layers, kv-heads and head-dim", "e.g. layers=80,kv-heads=8,head-dim=128,dtype=fp16");
  return {dtype, 2 * layers * heads * dim * kv_dtype_bytes(dtype, "kv_layout")};
}

}  // namespace

std::vector<KvFormat> resolve_kv_formats(const PrefixConfig& c) {
  std::vector<KvFormat> formats;
  if (c.kv_bytes_per_token && !c.kv_layout.empty())
    throw OptionError("kv_bytes_per_token", "cannot be combined with {kv_layout}", "give one of the two");
  if (c.kv_bytes_per_token) {
    if (!(*c.kv_bytes_per_token > 0 && *c.kv_bytes_per_token <= double(1 << 30)))  // Llama-3-70B: 320 KiB
      throw OptionError("kv_bytes_per_token", fmt::format("must be above 0 and at most 1 GiB, got {}", *c.kv_bytes_per_token),
                        "e.g. 327680 for Llama-3-70B in fp16");
    formats.push_back({"fp16", *c.kv_bytes_per_token});
  } else if (!c.kv_layout.empty()) {
    formats.push_back(parse_layout(c.kv_layout));
  }
  if (c.kv_dtypes.empty()) return formats;
  if (formats.empty())
    throw OptionError("kv_dtypes", "compares KV formats, which needs the bytes a token takes",
                      "add {kv_layout} or {kv_bytes_per_token}");
  const KvFormat base = formats.front();
  formats.clear();
  for (const auto& d : c.kv_dtypes) {
    const double scale = kv_dtype_bytes(d, "kv_dtypes") / kv_dtype_bytes(base.dtype, "kv_layout");
    formats.push_back({to_lower(d), base.bytes_per_token * scale});
  }
  return formats;
}

std::string tokens_text(double tokens) {
  if (tokens >= 1e9) return fmt::format("{:.3g}G", tokens / 1e9);
  if (tokens >= 1e6) return fmt::format("{:.3g}M", tokens / 1e6);
  if (tokens >= 1e3) return fmt::format("{:.3g}k", tokens / 1e3);
  return fmt::format("{:.0f}", tokens);
}

std::vector<Capacity> resolve_capacities(const std::vector<CapacitySpec>& specs, const TraceFacts& trace,
                                         const KvFormat* kv) {
  std::vector<Capacity> out;
  const double t = double(trace.block_tokens);
  for (const auto& s : specs) {
    double blocks = 0;
    switch (s.unit) {
      case CapacitySpec::Unit::blocks: blocks = s.value; break;
      case CapacitySpec::Unit::tokens: blocks = std::floor(s.value / t); break;
      case CapacitySpec::Unit::share: blocks = std::ceil(s.value * double(trace.distinct_blocks)); break;
      case CapacitySpec::Unit::bytes:
        if (!kv) throw OptionError("sizes", fmt::format("'{}' is in bytes, which needs the KV bytes a token takes", s.text),
                                   "add {kv_layout} or {kv_bytes_per_token}, or give blocks or tokens");
        blocks = std::floor(s.value / (kv->bytes_per_token * t));
        break;
    }
    if (blocks < 1)
      throw OptionError("sizes", fmt::format("'{}' holds less than one block of {} tokens", s.text, trace.block_tokens),
                        "give a larger capacity");
    Capacity c{s.text, uint64_t(std::min(blocks, 4e9)), std::nullopt};
    if (kv) c.bytes = double(c.blocks) * t * kv->bytes_per_token;
    out.push_back(c);
  }
  std::sort(out.begin(), out.end(), [](const Capacity& a, const Capacity& b) { return a.blocks < b.blocks; });
  out.erase(std::unique(out.begin(), out.end(), [](const Capacity& a, const Capacity& b) { return a.blocks == b.blocks; }),
            out.end());
  return out;
}

}  // namespace lite::cache::prefix
