// The prefix policy table: the one place a prefix policy is registered (block_cache.hpp). Each lives in its own
// policy_*.cpp, opening with its rule and its source.
#include "lite/cache/prefix/block_cache.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/core/registry.hpp"

namespace lite::cache::prefix {

const std::vector<PrefixPolicyEntry>& prefix_policy_table() {
  static const std::vector<PrefixPolicyEntry> table = {
      {"lru", "blocks by last use, a request's tail used before its head (vLLM's free-block queue order); any block "
              "may go, so orphans are possible", false, false, make_block_lru},
      {"fifo", "blocks in arrival order, hits do not reorder; any block may go", false, false, make_block_fifo},
      {"lfu", "the block used by the fewest requests while cached, least recent among equals; any block may go",
       false, false, make_block_lfu},
      {"radix-lru", "leaves of the prefix tree by last use (SGLang RadixCache); never orphans", true, false,
       make_radix_lru},
      {"radix-lfu", "leaves by use count while cached, least recent among equals; never orphans", true, false,
       make_radix_lfu},
      {"radix-cost", "leaves by the prefill they save, GDSF-style: uses x cost of the block's depth, aged by the last "
                     "victim; never orphans", true, false, make_radix_cost},
      {"radix-reference", "offline reference (reads the future): the leaf used again farthest ahead goes first; not a "
                          "proven optimum", true, true, make_radix_reference},
  };
  return table;
}

const PrefixPolicyEntry& find_prefix_policy(const std::string& name) {
  return find_named(prefix_policy_table(), name, "policies", "prefix-cache policy",
                    [](const PrefixPolicyEntry& e) { return std::vector<std::string>{e.name}; },
                    "a prefix trace is replayed through prefix-cache policies (docs/cache-sim.md)");
}

std::vector<std::string> prefix_policy_names() {
  std::vector<std::string> names;
  for (const auto& e : prefix_policy_table()) names.push_back(e.name);
  return names;
}

bool is_offline_policy(const std::string& name) {
  for (const auto& e : prefix_policy_table())
    if (name == e.name) return e.needs_next_use;
  return false;
}

report::Table prefix_policy_list() {
  report::Table t{"Prefix-cache policies (prefix traces: mooncake, tokens)", {"name", "evicts", "rule"}, {}, 3};
  for (const auto& e : prefix_policy_table())
    t.rows.push_back({e.name, e.prefix_closed ? "leaves only" : "any block", e.description});
  return t;
}

}  // namespace lite::cache::prefix
