// --tiers: parsing NAME=CAPACITY[@BANDWIDTH] items and resolving them per KV format (tiers.hpp).
#include "lite/cache/prefix/tiers.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

namespace {

const char* const kTiersForm = "NAME=CAPACITY[@BANDWIDTH] fastest first, e.g. hbm=3Mtok,dram=50Mtok@50GB/s,ssd=1TiB@5GB/s";

// "900GB/s" -> 9e11, "50GiB/s" -> 50 x 2^30: bandwidths are quoted in decimal units, binary ones when "iB" says so.
std::optional<double> parse_bandwidth(std::string text) {
  text = trim(text);
  if (text.size() < 3 || text.substr(text.size() - 2) != "/s") return std::nullopt;
  text = trim(text.substr(0, text.size() - 2));
  if (text.size() > 3 && to_lower(text.substr(text.size() - 2)) == "ib") {
    const auto bytes = parse_byte_size(text);
    return bytes ? std::optional<double>(double(*bytes)) : std::nullopt;
  }
  if (!text.empty() && (text.back() == 'B' || text.back() == 'b')) text.pop_back();
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': scale = 1e3; break;
      case 'M': scale = 1e6; break;
      case 'G': scale = 1e9; break;
      case 'T': scale = 1e12; break;
      default: break;
    }
    if (scale != 1) text.pop_back();
  }
  const auto v = parse_decimal(trim(text));
  if (!v || !(*v > 0) || !std::isfinite(*v)) return std::nullopt;
  return *v * scale;
}

TierSpec parse_tier(const std::string& item) {
  const auto eq = item.find('=');
  if (eq == std::string::npos || trim(item.substr(0, eq)).empty())
    throw OptionError("tiers", fmt::format("'{}' has no NAME=", trim(item)), kTiersForm);
  TierSpec t;
  t.name = trim(item.substr(0, eq));
  const std::string rest = item.substr(eq + 1);
  const auto at = rest.find('@');
  try {
    t.capacity = parse_capacities(rest.substr(0, at)).front();
  } catch (const OptionError& e) {
    throw OptionError("tiers", fmt::format("tier {}: {}", t.name, e.problem()), kTiersForm);
  }
  if (at != std::string::npos) {
    t.bytes_per_second = parse_bandwidth(rest.substr(at + 1));
    if (!t.bytes_per_second)
      throw OptionError("tiers", fmt::format("tier {}: '{}' is not a bandwidth", t.name, trim(rest.substr(at + 1))),
                        "bytes per second above 0, e.g. 50GB/s (10^9 bytes) or 50GiB/s (2^30 bytes)");
  }
  return t;
}

}  // namespace

std::vector<TierSpec> parse_tiers(const std::string& text) {
  std::vector<TierSpec> tiers;
  for (const auto& item : split(text, ',')) {
    TierSpec t = parse_tier(item);
    for (const auto& other : tiers)
      if (other.name == t.name) throw OptionError("tiers", fmt::format("tier '{}' is named twice", t.name), kTiersForm);
    tiers.push_back(std::move(t));
  }
  if (tiers.empty()) throw OptionError("tiers", "is empty", kTiersForm);
  return tiers;
}

std::vector<Tier> resolve_tiers(const std::vector<TierSpec>& specs, const TraceFacts& trace, const KvFormat* kv) {
  std::vector<Tier> tiers;
  for (const auto& s : specs) {
    Tier t;
    t.name = s.name;
    try {
      const Capacity c = resolve_capacities({s.capacity}, trace, kv).front();
      t.capacity_blocks = c.blocks;
      t.capacity_bytes = c.bytes;
    } catch (const OptionError& e) {
      throw OptionError("tiers", fmt::format("tier {}: {}", s.name, e.problem()), e.fix());
    }
    t.bytes_per_second = s.bytes_per_second;
    if (s.bytes_per_second) {
      if (!kv)
        throw OptionError("tiers", fmt::format("tier {}'s bandwidth needs the KV bytes a token takes", s.name),
                          "add {kv_layout} or {kv_bytes_per_token}");
      t.load_ms_per_token = kv->bytes_per_token / *s.bytes_per_second * 1e3;
    }
    tiers.push_back(t);
  }
  return tiers;
}

}  // namespace lite::cache::prefix
