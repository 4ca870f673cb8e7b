#pragma once
// --results-dir: a folder of finished sweep records, one JSON file per record, written atomically as each
// completes, so a re-run after a killed job, a lost node or a wall-time limit skips what is done.
//
// A record is reused only when all of its key matches: the trace's content hash, every option that changes
// a record's numbers (the object mode's: format, csv columns, header, bad-line skipping, byte mode, sampling, the
// cost model; the prefix mode's: prefix/prefix_store.hpp), and what names the record within its study (the object
// mode's policy with its parameters and size; a prefix study's job). The file name is a hash of that key; the key
// is also stored inside the file and compared on reading, so a hash collision or a hand-edited file is
// recomputed, never trusted. A file that does not parse is recomputed and overwritten (a crash cannot leave
// one: atomic writes).
//
// Why the content hash, not (size, mtime, head and tail): each machine of an MPI job may read its own copy of
// the trace, whose mtime differs, and a trace rewritten in place can keep its size and both ends. Hashing
// reads the file once more (a 64-bit multiply-mix over 32-byte blocks, about memory speed: ~0.3 s per GB
// from the page cache), which is small beside a sweep that simulates it many times over.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lite/cache/cache_sim.hpp"

namespace lite::cache {

// The content hash of a trace file, 32 hex digits (two independent 64-bit lanes) plus its length.
// Throws InputError for an unreadable file; the caller refuses streams (stdin, FIFOs) before.
std::string trace_content_hash(const std::string& path);
// The same over bytes in memory (tests).
std::string content_hash(const void* data, size_t n);

// The options of `config` that change a record's numbers, as JSON (the second part of every key).
nlohmann::json record_options_key(const SimulationConfig& config);

class RecordStore {
 public:
  // `dir` is created with the first record written (a run that fails before leaves nothing behind); the trace
  // is hashed at the first lookup, after the run has opened it (so a missing trace gets the usual error).
  RecordStore(std::filesystem::path dir, std::string trace_path, nlohmann::json options_key);

  // The stored record of (policy label, size), if one with the same key is there.
  std::optional<SimRecord> find(const std::string& policy, uint64_t size) const;
  // Writes the record atomically (replacing an older one with the same key).
  void put(const SimRecord& record) const;
  // The same for any mode's record, as JSON: `job` (an object) names the record within the study, its fields
  // joining the trace hash and the options in the key. find_json returns the stored record as written.
  std::optional<nlohmann::json> find_json(const nlohmann::json& job) const;
  void put_json(const nlohmann::json& job, const nlohmann::json& record) const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  nlohmann::json key(const nlohmann::json& job) const;
  std::filesystem::path file_for(const nlohmann::json& key) const;

  const std::string& trace_hash() const;

  std::filesystem::path dir_;
  std::string trace_path_;
  mutable std::string trace_hash_;  // computed once, at the first lookup or write
  nlohmann::json options_key_;
};

// Refuses a --results-dir with a trace read from a stream (nothing to hash): OptionError "results_dir", before
// any work. Where the folder may be (not a file, not an input or another output, writable) is the path check's
// (core/file_roles.hpp, FileRoles::writes_folder), which options.cpp runs over every path at once.
void check_results_dir(const std::string& dir, const std::string& trace);

}  // namespace lite::cache
