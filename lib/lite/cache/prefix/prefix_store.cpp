// --results-dir for prefix studies (prefix_store.hpp): the two halves of a row's key, and the rows through the
// object mode's record store.
#include "lite/cache/prefix/prefix_store.hpp"

#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/prefix/replay.hpp"

namespace lite::cache::prefix {
namespace {

nlohmann::json optional_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

nlohmann::json prefix_options_key(const PrefixConfig& c, const TraceFacts& trace) {
  const EngineSpec engine = parse_engine(c.engine);
  nlohmann::json prefill;  // null: no prefill model
  if (c.prefill)
    prefill = {c.prefill->a_ms, c.prefill->b_ms_per_token, c.prefill->c_ms_per_token2, c.prefill->d_ms_per_cached_token};
  return {{"mode", "prefix"},
          {"format", trace.format},
          {"block_tokens", trace.block_tokens},
          {"skip_bad_lines", c.skip_bad_lines},
          {"prefill", prefill},
          {"instances", c.instances},
          {"engine", engine.engine->name},
          {"decode_ms", engine.engine->make ? nlohmann::json(engine.decode_ms) : nlohmann::json()}};
}

nlohmann::json prefix_job_key(const ReplaySetup& s, const KvFormat* kv) {
  nlohmann::json tiers = nlohmann::json::array();
  for (const Tier& t : s.tiers)
    tiers.push_back({t.name, t.capacity_blocks, optional_json(t.capacity_bytes), optional_json(t.bytes_per_second),
                     t.load_ms_per_token});
  return {{"policy", s.policy ? s.policy->name : ""},
          {"capacity_blocks", s.capacity_blocks},
          {"kv", kv ? nlohmann::json{kv->dtype, kv->bytes_per_token} : nlohmann::json()},
          {"tiers", tiers},
          {"cluster", s.cluster},
          {"route", s.route ? s.route->name : ""}};
}

RowStore::RowStore(const PrefixConfig& c, const TraceFacts& trace)
    : store_(c.results_dir, c.trace, prefix_options_key(c, trace)) {}

std::optional<PrefixRow> RowStore::find(const ReplaySetup& s, const KvFormat* kv) const {
  const auto stored = store_.find_json(prefix_job_key(s, kv));
  if (!stored) return std::nullopt;
  try {
    return row_from_json(*stored);
  } catch (const std::exception&) {
    return std::nullopt;  // written whole but not a row: recomputed and overwritten
  }
}

void RowStore::put(const ReplaySetup& s, const KvFormat* kv, const PrefixRow& row) const {
  store_.put_json(prefix_job_key(s, kv), row);
}

}  // namespace lite::cache::prefix
