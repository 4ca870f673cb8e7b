// Throughput driver for scripts/bench/prefix_cache: a synthetic LLM request trace held in memory (Zipf-shared
// system prompts, multi-turn conversations that grow), replayed through the same lite::cache::prefix::replay() as
// `lite cache-sim` on a prefix trace. Prints block references per second per thread and peak memory.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <random>

#include "lite/cache/prefix/replay.hpp"

using namespace lite::cache::prefix;

namespace {

// Zipf(s) over n ranks by inverse CDF on a precomputed table.
class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = sum += 1.0 / std::pow(double(i + 1), s);
    for (double& c : cdf_) c /= sum;
  }
  size_t operator()(std::mt19937_64& rng) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return size_t(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

struct Builder {
  BlockTrace t;
  uint32_t add_block(uint32_t parent) {
    t.parent.push_back(parent);
    return uint32_t(t.parent.size() - 1);
  }
};

BlockTrace synthetic(size_t requests, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Builder b;
  b.t.block_tokens = 16;
  std::vector<std::vector<uint32_t>> systems(64);
  for (auto& s : systems) {
    const int n = 1 + int(rng() % 8);
    for (int i = 0; i < n; ++i) s.push_back(b.add_block(s.empty() ? kNoBlock : s.back()));
  }
  Zipf pick_system(systems.size(), 1.0), pick_conversation(100000, 0.8);
  std::vector<std::vector<uint32_t>> conversations(100000);
  for (size_t r = 0; r < requests; ++r) {
    auto& c = conversations[pick_conversation(rng)];
    if (c.empty() || c.size() > 48 || rng() % 4 == 0) c = systems[pick_system(rng)];
    const int grow = 1 + int(rng() % 4);
    for (int i = 0; i < grow; ++i) c.push_back(b.add_block(c.back()));
    b.t.arrival_ms.push_back(int64_t(r));
    b.t.input_tokens.push_back(uint32_t(c.size() * 16 - rng() % 16));
    b.t.output_tokens.push_back(100);
    b.t.refs.insert(b.t.refs.end(), c.begin(), c.end());
    b.t.first_ref.push_back(b.t.refs.size());
  }
  return std::move(b.t);
}

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"lite prefix-cache throughput driver"};
  size_t requests = 10'000'000;
  uint64_t seed = 42;
  double share = 0.1;
  app.add_option("--requests", requests);
  app.add_option("--seed", seed);
  app.add_option("--capacity-share", share, "capacity as a share of the distinct blocks");
  CLI11_PARSE(app, argc, argv);
  auto start = std::chrono::steady_clock::now();
  const BlockTrace t = synthetic(requests, seed);
  const double built = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("trace: {} requests, {} block references, {} distinct blocks, built in {:.1f} s; {:.0f} MiB peak after "
             "building (refs {:.0f} MiB)\n",
             t.requests(), t.refs.size(), t.blocks(), built, peak_rss_mib(), double(t.refs.size()) * 4 / 1048576);
  fmt::print("| policy | capacity (blocks) | token hit ratio | seconds | M block refs/s per thread |\n| --- | ---: | ---: | ---: | ---: |\n");
  for (const char* name : {"lru", "radix-lru"}) {
    ReplaySetup s;
    s.trace = &t;
    s.policy = &find_prefix_policy(name);
    s.capacity_blocks = uint64_t(double(t.blocks()) * share);
    const PrefixRow row = replay(s);
    fmt::print("| {} | {} | {:.4f} | {:.2f} | {:.1f} |\n", name, row.capacity_blocks, row.token_hit_ratio(),
               row.seconds, double(row.block_refs) / row.seconds / 1e6);
  }
  fmt::print("peak RSS {:.0f} MiB\n", peak_rss_mib());
}
