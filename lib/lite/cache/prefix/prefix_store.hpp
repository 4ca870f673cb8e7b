#pragma once
// --results-dir for prefix studies: each job's row (a policy x capacity x KV format, x route, or the tiers, or the
// engine) kept as one record of the object mode's store (record_store.hpp: one JSON file a record, written
// atomically, keyed by the trace's content hash and compared on reading), in the JSON the MPI ranks exchange
// (prefix_wire.cpp), so a re-run after a killed job replays only the jobs it does not find.
//
// The key, beside the trace's content hash: the study's options that change a row (the format and block size the
// trace was read with, bad-line skipping, the prefill model's coefficients (a table's fit: a changed table that
// fits other coefficients misses), the prefill instances, the engine and its decode time), and the job itself (the
// policy, the capacity in blocks, the KV format's dtype and bytes per token, the cluster's route or the global
// pool, the tiers as resolved: names, blocks, bytes, bandwidths). What only names or reports a row is not in it:
// --sizes as written (a capacity is its blocks; its bytes are the job's, set on a found row as on a replayed
// one), the thread count, the curve, the targets. Internal to the prefix mode.
#include <optional>

#include <nlohmann/json.hpp>

#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/cache/record_store.hpp"

namespace lite::cache::prefix {

struct ReplaySetup;  // replay.hpp

// The study's part of every row's key.
nlohmann::json prefix_options_key(const PrefixConfig& c, const TraceFacts& trace);
// One job's part: what names its row within the study.
nlohmann::json prefix_job_key(const ReplaySetup& s, const KvFormat* kv);

// c.results_dir's store of a study's rows.
class RowStore {
 public:
  RowStore(const PrefixConfig& c, const TraceFacts& trace);
  // The stored row of the job, if one with the same key is there and reads back whole.
  std::optional<PrefixRow> find(const ReplaySetup& s, const KvFormat* kv) const;
  // Writes the job's row atomically.
  void put(const ReplaySetup& s, const KvFormat* kv, const PrefixRow& row) const;

 private:
  RecordStore store_;
};

}  // namespace lite::cache::prefix
