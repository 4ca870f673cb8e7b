// A prefix row read back from the JSON to_json(PrefixRow) writes: how MPI ranks hand their rows to rank 0
// (apps/lite/mpi_prefix.cpp). Every field to_json writes is read, so a row crosses ranks unchanged; the derived
// figures (ratios, imbalance) are recomputed from the counts.
#include "lite/cache/json_fields_internal.hpp"
#include "lite/cache/prefix/prefix_run.hpp"

namespace lite::cache::prefix {

namespace {

TierHits tier_from_json(const nlohmann::json& j) {
  TierHits t;
  t.name = j.at("name").get<std::string>();
  t.capacity_blocks = j.at("capacity_blocks").get<uint64_t>();
  t.hit_tokens = j.at("hit_tokens").get<uint64_t>();
  t.hit_blocks = j.at("hit_blocks").get<uint64_t>();
  t.capacity_bytes = optional_double(j, "capacity_bytes");
  t.bytes_per_second = optional_double(j, "bytes_per_second");
  return t;
}

EngineCounters engine_from_json(const nlohmann::json& j) {
  EngineCounters e;
  e.decode_ms = j.at("decode_ms").get<double>();
  e.waited = j.at("waited_requests").get<uint64_t>();
  e.wait_mean_ms = j.at("wait_mean_ms").get<double>();
  e.wait_max_ms = j.at("wait_max_ms").get<double>();
  e.too_large = j.at("too_large_requests").get<uint64_t>();
  e.preemptions = j.at("preemptions").get<uint64_t>();
  e.evicted_blocks = j.at("evicted_blocks").get<uint64_t>();
  return e;
}

}  // namespace

PrefixRow row_from_json(const nlohmann::json& j) {
  PrefixRow r;
  r.policy = j.at("policy").get<std::string>();
  r.kv_dtype = j.value("kv_dtype", std::string());
  r.capacity_blocks = j.at("capacity_blocks").get<uint64_t>();
  r.capacity_tokens = j.at("capacity_tokens").get<uint64_t>();
  r.capacity_bytes = optional_double(j, "capacity_bytes");
  r.requests = j.at("requests").get<uint64_t>();
  r.prompt_tokens = j.at("prompt_tokens").get<uint64_t>();
  r.hit_tokens = j.at("hit_tokens").get<uint64_t>();
  r.hit_blocks = j.at("hit_blocks").get<uint64_t>();
  r.block_refs = j.at("block_refs").get<uint64_t>();
  r.orphan_blocks = j.at("orphan_blocks").get<uint64_t>();
  r.cached_blocks = j.at("cached_blocks").get<uint64_t>();
  r.seconds = j.at("seconds").get<double>();
  r.ttft_mean_ms = optional_double(j, "ttft_mean_ms");
  r.ttft_p50_ms = optional_double(j, "ttft_p50_ms");
  r.ttft_p99_ms = optional_double(j, "ttft_p99_ms");
  if (const auto it = j.find("tiers"); it != j.end()) {
    for (const auto& t : *it) r.tiers.push_back(tier_from_json(t));
    r.recomputed_tokens = j.at("recomputed_tokens").get<uint64_t>();
  }
  r.route = j.value("route", std::string());
  if (const auto it = j.find("instances"); it != j.end())
    for (const auto& l : *it)
      r.instances.push_back({l.at("requests").get<uint64_t>(), l.at("prompt_tokens").get<uint64_t>(),
                             l.at("hit_tokens").get<uint64_t>()});
  if (const auto it = j.find("engine"); it != j.end()) r.engine = engine_from_json(*it);
  return r;
}

}  // namespace lite::cache::prefix
