#pragma once
// The policy table: the one place an eviction policy is registered. It drives --policy parsing,
// --policy list, the help text, "did you mean", and the tests that loop over every policy.
// Each policy lives in its own policy_<name>.cpp, opening with a comment on its algorithm.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lite::cache {

namespace detail {
class Simulator;
struct PolicyConfig;
}  // namespace detail

struct PolicyParam {
  const char* name;         // canonical, as written on the command line: "small"
  const char* alias;        // libCacheSim's name, also accepted: "small-size-ratio" ("" if none)
  double default_value;
  double min_value, max_value;
  bool integer;
  const char* description;
};

struct PolicyEntry {
  const char* name;         // "s3fifo"
  const char* alias;        // libCacheSim's spelling, also accepted: "s3-fifo" ("" if none)
  const char* display;      // "S3-FIFO"
  const char* description;  // one line: the algorithm and what libCacheSim file it follows
  std::vector<PolicyParam> params;
  bool needs_next_access;   // Belady: needs each request's next-access index
  std::unique_ptr<detail::Simulator> (*make)(const detail::PolicyConfig&);
};

const std::vector<PolicyEntry>& policy_table();
// Throws UsageError: "unknown policy 'x'; did you mean 'y'? known: ..."
const PolicyEntry& find_policy(const std::string& name);
std::vector<std::string> policy_names();
// "small=0.1,ghost=0.9,...": the defaults, for help and --policy list
std::string describe_params(const PolicyEntry& entry);

}  // namespace lite::cache
