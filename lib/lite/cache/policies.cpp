// The policy table (see policies.hpp) and the parsing of --policy specs: "lru,s3fifo:small=0.2,ghost=0.9".
#include "lite/cache/policies.hpp"

#include <fmt/format.h>

#include <cmath>

#include "lite/cache/policy_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

const std::vector<PolicyEntry>& policy_table() {
  static const std::vector<PolicyEntry> table = {
      {"lru", "", "LRU", "least recently used: evict the tail of one recency list (libCacheSim LRU.c)", {}, false,
       detail::make_lru},
      {"fifo", "", "FIFO", "first in, first out: hits change nothing (libCacheSim FIFO.c)", {}, false, detail::make_fifo},
      {"lfu", "", "LFU",
       "least frequently used, FIFO among equal frequencies, frequency forgotten on eviction (libCacheSim LFU.c)",
       {}, false, detail::make_lfu},
      {"arc", "", "ARC", "adaptive replacement: recency and frequency lists with ghosts, self-tuning split (libCacheSim ARC.c)",
       {}, false, detail::make_arc},
      {"2q", "twoq", "2Q",
       "FIFO for new objects, ghost of its evictions, LRU for re-referenced ones (libCacheSim TwoQ.c)",
       {{"ain", "Ain-size-ratio", 0.25, 0.0, 1.0, false, "share of the capacity for the Ain FIFO"},
        {"aout", "Aout-size-ratio", 0.5, 0.0, 10.0, false, "ghost Aout size as a share of the capacity"}},
       false, detail::make_twoq},
      {"s3fifo", "s3-fifo", "S3-FIFO",
       "small FIFO + main FIFO (2-bit CLOCK) + ghost: quick demotion of one-hit wonders (libCacheSim S3FIFO.c)",
       {{"small", "small-size-ratio", 0.10, 0.0, 1.0, false, "share of the capacity for the small FIFO"},
        {"ghost", "ghost-size-ratio", 0.90, 0.0, 10.0, false, "ghost FIFO size as a share of the capacity"},
        {"threshold", "move-to-main-threshold", 2, 1, 255, true, "hits in small needed to move to main"},
        {"original", "", 0, 0, 1, true, "1 = libCacheSim S3FIFOv0.c (the SOSP'23 version): new objects always go to small"}},
       false, detail::make_s3fifo},
      {"sieve", "", "SIEVE", "FIFO with a visited bit and a moving hand; hits never move objects (libCacheSim Sieve.c)", {},
       false, detail::make_sieve},
      {"clock", "", "CLOCK", "second chance: FIFO with an n-bit counter, reinsert on eviction if used (libCacheSim Clock.c)",
       {{"bits", "n-bit-counter", 1, 1, 8, true, "bits of the access counter (libCacheSim default 1)"}}, false,
       detail::make_clock},
      {"belady", "opt", "Belady",
       "OPT: evict the object needed farthest in the future; uses next-access indices (libCacheSim Belady.c)", {},
       true, detail::make_belady},
      {"slru", "", "SLRU",
       "segmented LRU: n LRU segments, a hit promotes one segment up, overflow demotes down (libCacheSim SLRU.c)",
       {{"segments", "n-seg", 4, 1, 16, true, "number of LRU segments, each capped at capacity/segments"}}, false,
       detail::make_slru},
      {"gdsf", "", "GDSF",
       "greedy-dual size frequency: evict the lowest L + freq*cost/size, L = last evicted (libCacheSim cpp/GDSF.cpp)",
       {{"cost", "", 0, 0, 1, true, "1 = cost-aware: cost is the request's miss cost (cost column); 0 = constant"},
        {"freq", "", 1, 0, 1, true, "0 = GreedyDual-Size (no frequency term): LRU when costs and sizes are equal"}},
       false, detail::make_gdsf},
      {"wtinylfu", "tinylfu", "W-TinyLFU",
       "window LRU + SLRU main, admission by a frequency sketch with aging (Caffeine; libCacheSim WTinyLFU.c)",
       {{"window", "window-size", 0.01, 0.0, 0.99, false, "share of the capacity for the window LRU"},
        {"doorkeeper", "", 0, 0, 1, true, "1 = a Bloom-filter doorkeeper in front of the sketch (TinyLFU paper; not in libCacheSim)"}},
       false, detail::make_wtinylfu},
      {"lirs", "", "LIRS",
       "low inter-reference recency set: LIR stack + resident HIR queue + non-resident ghosts (libCacheSim LIRS.c)",
       {{"hir", "hirs-ratio", 0.01, 0.0, 0.5, false, "share of the capacity for resident HIR objects"}}, false,
       detail::make_lirs},
      {"lecar", "", "LeCaR",
       "learned choice between LRU and LFU victims, weights updated from ghost hits (libCacheSim LeCaR.c, its RNG)",
       {{"lru_weight", "lru-weight", 0.5, 0.0, 1.0, false, "initial weight of the LRU expert"},
        {"update_weight", "update-weight", 1, 0, 1, true, "0 = keep the weights fixed"}},
       false, detail::make_lecar},
      {"lhd", "", "LHD",
       "least hit density: evict the sampled candidate with the lowest hits per byte-time by age class (libCacheSim LHD/)",
       {}, false, detail::make_lhd},
  };
  return table;
}

std::vector<std::string> policy_names() {
  std::vector<std::string> names;
  for (const auto& e : policy_table()) names.push_back(e.name);
  return names;
}

const PolicyEntry& find_policy(const std::string& name) {
  return find_named(policy_table(), trim(name), "policies", "policy",
                    [](const PolicyEntry& e) {
                      std::vector<std::string> names{e.name};
                      if (*e.alias) names.push_back(e.alias);
                      return names;
                    },
                    "run 'lite cache-sim {policies} list'");
}

std::string describe_params(const PolicyEntry& e) {
  std::vector<std::string> parts;
  for (const auto& p : e.params) parts.push_back(fmt::format("{}={}", p.name, p.default_value));
  return join(parts, ",");
}

std::string PolicySpec::label() const {
  if (params.empty()) return name;
  std::vector<std::string> parts;
  for (const auto& [k, v] : params) parts.push_back(fmt::format("{}={}", k, v));
  return name + ":" + join(parts, ",");
}

namespace {

void add_param(PolicySpec& spec, const std::string& assignment) {
  const PolicyEntry& e = find_policy(spec.name);
  auto eq = assignment.find('=');
  std::string key = trim(assignment.substr(0, eq));
  std::string value = eq == std::string::npos ? "" : trim(assignment.substr(eq + 1));
  std::vector<std::string> known;
  const PolicyParam* param = nullptr;
  for (const auto& p : e.params) {
    known.push_back(p.name);
    if (to_lower(key) == to_lower(p.name) || (p.alias[0] && to_lower(key) == to_lower(p.alias))) param = &p;
  }
  if (!param) {
    if (known.empty())
      throw OptionError("policies", fmt::format("policy '{}' takes no parameters, got '{}'", e.name, assignment),
                        fmt::format("write just {}", e.name));
    throw_unknown_name("policies", fmt::format("parameter of policy '{}'", e.name), key, known);
  }
  const std::optional<double> parsed = parse_decimal(value);  // decimal only: no 0x10, inf or nan
  if (!parsed)
    throw OptionError("policies", fmt::format("policy '{}': parameter {} needs a number, got '{}'", e.name, param->name, value),
                      fmt::format("write {}:{}=NUMBER", e.name, param->name));
  const double v = *parsed;
  if (v < param->min_value || v > param->max_value || (param->integer && v != std::floor(v)))
    throw OptionError("policies", fmt::format("policy '{}': {}={} is out of range", e.name, param->name, value),
                      fmt::format("use {} {} .. {}", param->integer ? "a whole number in" : "a value in",
                                  param->min_value, param->max_value));
  for (auto& [k, old] : spec.params)
    if (k == param->name) {
      old = v;
      return;
    }
  spec.params.emplace_back(param->name, v);
}

}  // namespace

std::vector<PolicySpec> parse_policies(const std::string& text) {
  if (to_lower(trim(text)) == "none") return {};
  std::vector<PolicySpec> specs;
  for (const std::string& raw : split(text, ',')) {
    std::string token = trim(raw);
    if (token.empty()) continue;
    if (to_lower(token) == "all") {
      for (const auto& e : policy_table()) specs.push_back({e.name, {}});
      continue;
    }
    auto colon = token.find(':');
    if (colon == std::string::npos && token.find('=') != std::string::npos) {
      // "k=v" continuing the parameters of the previous policy: "s3fifo:small=0.1,ghost=0.9"
      if (specs.empty())
        throw OptionError("policies", fmt::format("policy parameter '{}' comes before any policy", token),
                          fmt::format("write NAME:{}", token));
      add_param(specs.back(), token);
      continue;
    }
    PolicySpec spec{find_policy(token.substr(0, colon)).name, {}};
    if (colon != std::string::npos) {
      std::string rest = token.substr(colon + 1);
      if (trim(rest).empty())
        throw OptionError("policies", fmt::format("policy '{}': nothing after ':'", spec.name),
                          fmt::format("write {}:PARAMETER=VALUE, or just {}", spec.name, spec.name));
      add_param(spec, rest);
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) throw OptionError("policies", "no policy given", "use e.g. {policies} lru,s3fifo or {policies} all");
  // drop exact duplicates, keep the order
  std::vector<PolicySpec> unique;
  for (auto& s : specs) {
    bool seen = false;
    for (const auto& u : unique) seen = seen || u.label() == s.label();
    if (!seen) unique.push_back(std::move(s));
  }
  return unique;
}

namespace detail {

double PolicyConfig::param(const char* name) const {
  for (size_t i = 0; i < entry->params.size(); ++i)
    if (std::string_view(entry->params[i].name) == name) return values[i];
  throw InternalError(fmt::format("policy {} has no parameter {}", entry->name, name));
}

PolicyConfig make_config(const PolicySpec& spec, uint64_t capacity, bool bytes) {
  PolicyConfig c;
  c.capacity = capacity;
  c.bytes = bytes;
  c.entry = &find_policy(spec.name);
  for (const auto& p : c.entry->params) c.values.push_back(p.default_value);
  for (const auto& [k, v] : spec.params)
    for (size_t i = 0; i < c.entry->params.size(); ++i)
      if (k == c.entry->params[i].name) c.values[i] = v;
  return c;
}

std::unique_ptr<Simulator> make_simulator(const PolicySpec& spec, uint64_t capacity, bool bytes) {
  PolicyConfig c = make_config(spec, capacity, bytes);
  return c.entry->make(c);
}

}  // namespace detail

uint64_t empty_simulator_bytes(const PolicySpec& policy, bool bytes) {
  // a small cache: what a simulator takes before its first object, whatever its size
  return detail::make_simulator(policy, 1000, bytes)->memory_bytes();
}
}  // namespace lite::cache
